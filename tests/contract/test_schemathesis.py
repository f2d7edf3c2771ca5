"""The HTTP contract, checked by schemathesis against a `gligabao serve`
started here, from the OpenAPI document that server serves: every operation,
all checks, a bounded number of generated cases with a fixed seed. Fakes
answer for the LLM and the embeddings.

The CLI is run (schemathesis's pytest plugin does not load under pytest 9),
one worker, so that the run is the same each time; with schemathesis.toml
(413 is a rejection) and schemathesis_hooks.py (a valid case's page cursor is
one the server issues: no schema can generate an opaque token)."""

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
MAX_EXAMPLES = 30
SEED = 31


@pytest.fixture(scope="module")
def served(
    fake_anthropic_session: FakeAnthropic, fake_openai_session: FakeOpenAI
) -> Iterator[ServedCounting]:
    s = ServedCounting({**fake_anthropic_session.env(), **fake_openai_session.env()})
    yield s
    s.stop()


HERE = Path(__file__).resolve().parent


def test_schemathesis_finds_nothing_with_all_checks(served: ServedCounting) -> None:
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
            str(MAX_EXAMPLES),
            "--seed",
            str(SEED),
            "--workers",
            "1",
            "--phases",
            "examples,coverage,fuzzing",
            "--no-color",
        ],
        # The cursors of valid cases: ones the server issues (schemathesis_hooks.py).
        env={
            **os.environ,
            "SCHEMATHESIS_HOOKS": "schemathesis_hooks",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
        },
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert proc.returncode == 0, proc.stdout[-20000:] + proc.stderr[-4000:]
