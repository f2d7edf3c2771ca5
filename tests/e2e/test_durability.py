"""Durability of the local server's SQLite default: remember, stop the
server (SIGTERM, then SIGKILL), start it again on the same file, and the same
question gets the same graph context, the datasets the same listing."""

from __future__ import annotations

import re
import signal
from typing import Any

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from served import ALICE_AT_ACME, AT_ACME, Served


def ask(s: Served, llm: FakeAnthropic) -> tuple[str, dict[str, Any], Any]:
    """(the <graph> context sent to the LLM, the reply's evidence, the datasets)."""
    llm.script("query", AT_ACME)
    q = s.client.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"})
    assert q.status == 200, q.body
    sent = str(llm.requests_for("query")[-1]["messages"])
    graph = re.search(r"<graph>.*</graph>", sent, re.S)
    assert graph is not None, sent
    listed = s.client.get("/v1/gb/datasets?user_id=u1")
    assert listed.status == 200
    return graph.group(0), q.body["evidence"], listed.body


def test_memory_survives_sigterm_and_sigkill(
    fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    env = {**fake_anthropic.env(), **fake_openai.env(), "GB_EMBEDDING_DIMENSION": "64"}
    first = Served(env)
    try:
        fake_anthropic.script("extract", ALICE_AT_ACME)
        first.remember("Alice works at Acme.")
        fake_anthropic.script("extract", ALICE_AT_ACME)
        r = first.remember("Alice works at Acme.", dataset="work")
        before = ask(first, fake_anthropic)
    finally:
        code, _ = first.stop(signal.SIGTERM)
    assert code == 0
    assert "Alice(1) --works_at--> Acme(2)" in before[0]
    assert [d["name"] for d in before[2]["datasets"]] == ["main", "work"]

    second = Served(env, data=first.data)
    try:
        assert ask(second, fake_anthropic) == before
        call = second.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1")
        assert call.status == 200, call.body  # the records persist too
    finally:
        second.stop(signal.SIGKILL)

    third = Served(env, data=first.data)
    try:
        assert ask(third, fake_anthropic) == before
    finally:
        code, _ = third.stop(signal.SIGTERM)
    assert code == 0
