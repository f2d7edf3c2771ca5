"""The HTTP contract, checked by schemathesis against a `gligabao serve`
started here, from the OpenAPI document that server serves: every operation,
all checks, a bounded number of generated cases with a fixed seed. Fakes
answer for the LLM and the embeddings.

The CLI is run (schemathesis's pytest plugin does not load under pytest 9),
one worker, so that the run is the same each time; with schemathesis.toml
(413 is a rejection) and no hooks: the run is a stranger's, every value from
the schema alone (a page cursor too: its pattern says which strings are
positions, and each one is). Two seeds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from served import ServedCounting

CLI = Path(sys.executable).with_name("schemathesis")
# (seed, examples per operation): each run well under 90 s
RUNS = [(31, 30), (7, 60)]


@pytest.fixture(scope="module")
def served(
    fake_anthropic_session: FakeAnthropic, fake_openai_session: FakeOpenAI
) -> Iterator[ServedCounting]:
    s = ServedCounting({**fake_anthropic_session.env(), **fake_openai_session.env()})
    yield s
    s.stop()


HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize(("seed", "examples"), RUNS, ids=[f"seed{s}" for s, _ in RUNS])
def test_schemathesis_finds_nothing_with_all_checks(
    served: ServedCounting, seed: int, examples: int
) -> None:
    cli = str(CLI) if CLI.exists() else shutil.which("schemathesis")
    if cli is None:
        pytest.skip("schemathesis is not installed (the dev extra)")
    proc = subprocess.run(
        [
            cli,
            # 413 counts as a rejection (schemathesis.toml)
            "--config-file",
            str(HERE / "schemathesis.toml"),
            "run",
            f"{served.url}/openapi.json",
            "--checks",
            "all",
            "--max-examples",
            str(examples),
            "--seed",
            str(seed),
            "--workers",
            "1",
            "--phases",
            "examples,coverage,fuzzing",
            "--no-color",
        ],
        # No hooks: the cases are the schema's alone, as a stranger's run.
        env={k: v for k, v in os.environ.items() if k != "SCHEMATHESIS_HOOKS"},
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert proc.returncode == 0, proc.stdout[-20000:] + proc.stderr[-4000:]
