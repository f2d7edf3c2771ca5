"""The HTTP contract, checked by schemathesis against a `gligabao serve`
started here, from the OpenAPI document that server serves: every operation,
all checks, a bounded number of generated cases with a fixed seed. Fakes
answer for the LLM and the embeddings.

The CLI is run (schemathesis's pytest plugin does not load under pytest 9),
one worker, so that the run is the same each time."""

from __future__ import annotations

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


KNOWN_GAPS = (
    "issue 31: the OpenAPI parameters lack the server's rules (path ids >= 1, the dataset "
    "pattern, empty cursor/call_id, control characters in user_id) and geo_radius_km "
    "accepts null where the schema says number"
)


@pytest.mark.xfail(reason=KNOWN_GAPS, raises=AssertionError, strict=True)
def test_schemathesis_finds_nothing_with_all_checks(served: ServedCounting) -> None:
    cli = str(CLI) if CLI.exists() else shutil.which("schemathesis")
    if cli is None:
        pytest.skip("schemathesis is not installed (the dev extra)")
    proc = subprocess.run(
        [
            cli,
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
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert proc.returncode == 0, proc.stdout[-20000:] + proc.stderr[-4000:]
