"""The framework examples (examples/*_agent.py), each run as its own process
against a running `gligabao serve` (the fake LLM and embeddings behind it):
the agent remembers through our MCP endpoint and answers from what the
memory recalls.

The frameworks pin an older `mcp` than our dev set, so they live in an
environment of their own (examples/requirements.txt): `GB_EXAMPLES_PYTHON`,
else `.venv-examples/bin/python`, as `.ci/run` makes it. Without it the
tests are skipped, except in CI, where they fail."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from served import ALICE_AT_ACME, AT_ACME, ROOT, ServedCounting

EXAMPLES = ROOT / "examples"


def _python() -> str:
    given = os.environ.get("GB_EXAMPLES_PYTHON")
    path = Path(given) if given else ROOT / ".venv-examples" / "bin" / "python"
    if not path.exists():
        why = f"no examples environment at {path} (see examples/README.md)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return str(path)


@pytest.fixture(scope="module")
def served(
    fake_anthropic_session: FakeAnthropic, fake_openai_session: FakeOpenAI
) -> Iterator[ServedCounting]:
    s = ServedCounting({**fake_anthropic_session.env(), **fake_openai_session.env()})
    yield s
    s.stop()


@pytest.fixture
def llm(fake_anthropic_shared: FakeAnthropic, fake_openai_shared: FakeOpenAI) -> FakeAnthropic:
    fake_anthropic_shared.script("extract", ALICE_AT_ACME).script("query", AT_ACME)
    return fake_anthropic_shared


class ToolErrorRaised(Exception):
    """The example's run was aborted by an MCP protocol error its framework
    raised instead of handing it to the model."""


def run_example(name: str, served: ServedCounting, user: str) -> tuple[list[dict[str, Any]], str]:
    """The example's log (what its model saw and did) and its answer; fails
    with the example's output when it does not finish cleanly."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GB_", "PYTHON"))}
    # No provider key and no telemetry: only loopback is reached.
    env.update({"OTEL_SDK_DISABLED": "true", "LANGSMITH_TRACING": "false"})
    proc = subprocess.run(
        [_python(), str(EXAMPLES / name), "--url", f"{served.url}/mcp", "--user", user],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=ROOT,
    )
    output = f"{name} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    if proc.returncode != 0 and "mcp.shared.exceptions.McpError" in proc.stderr:
        raise ToolErrorRaised(output)
    assert proc.returncode == 0, output
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines and "answer" in lines[-1], proc.stdout
    return lines[:-1], lines[-1]["answer"]


def remembered(served: ServedCounting, user: str) -> list[tuple[str, int, int]]:
    r = served.client.get(f"/v1/gb/datasets?user_id={user}")
    assert r.status == 200, r.body
    return [(d["name"], d["artifacts"], d["edges"]) for d in r.body["datasets"]]


def saw_answer(log: list[dict[str, Any]]) -> bool:
    """The model was shown the query tool's result, with the memory's answer."""
    return any(
        not e.get("error") and json.loads(e["model_saw"]).get("answer") == "At Acme."
        for e in log
        if "model_saw" in e and e["model_saw"].startswith("{")
    )


@pytest.mark.parametrize("example", ["strands_agent.py", "openai_agents_agent.py"])
def test_the_agent_remembers_and_recalls_through_mcp(
    example: str, served: ServedCounting, llm: FakeAnthropic
) -> None:
    user = f"ex-{example.split('_')[0]}"
    log, answer = run_example(example, served, user)
    calls = [e["model_called"] for e in log if "model_called" in e]
    assert calls[0] == "remember" and calls[-1] == "query", log
    assert remembered(served, user) == [("main", 1, 1)]
    assert saw_answer(log), log
    assert '"answer": "At Acme."' in answer
    assert llm.calls("extract") == 1 and llm.calls("query") == 1


def test_langgraph_hands_a_bad_call_to_the_model_as_an_error_and_the_run_goes_on(
    served: ServedCounting, llm: FakeAnthropic
) -> None:
    """Its script remembers, makes two bad calls, then recalls: LangGraph's
    standard ToolNode must give the bad calls back to the model as error
    messages for the run to reach the recall."""
    user = "ex-langgraph"
    log, answer = run_example("langgraph_agent.py", served, user)
    shown = [e for e in log if "model_saw" in e]
    missing, unknown = shown[1], shown[2]  # after the remember's result
    assert missing["error"] and "query" in missing["model_saw"], log
    assert unknown["error"] and "no-such-dataset" in unknown["model_saw"], log
    # Nothing was stored or answered for the bad calls; the good one went on.
    assert remembered(served, user) == [("main", 1, 1)]
    assert saw_answer(log), log
    assert '"answer": "At Acme."' in answer
    assert llm.calls("query") == 1
