"""POST /v1/gb/search: the query's retrieval without the LLM. The context it
returns is the one a query sends the model; it needs no LLM key; its errors
are the query's, and write nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from query_helpers import GraphBuilder, ask, graph_snapshot, vector_counts

from conftest import Harness
from gligabao.text import estimate_tokens


def _graph(gb: Harness) -> GraphBuilder:
    g = GraphBuilder(gb)
    alice = g.entity("Alice", "person", sim=0.9)
    acme = g.entity("Acme", "organization")
    lyon = g.entity("Lyon", "place")
    g.edge(alice, acme, "works_at", "Alice works at Acme.")
    g.edge(alice, lyon, "lives_in", "Alice lives in Lyon.")
    g.save()
    return g


@pytest.fixture
def gb_env(request: pytest.FixtureRequest) -> dict[str, str]:
    return dict(getattr(request, "param", {}))


def test_search_returns_the_context_a_query_sends(gb: Harness) -> None:
    _graph(gb)
    question = ask(gb, "Where does Alice work?")
    r = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": question, "session_id": "s1"})
    assert r.status == 200, r.body
    assert gb.llm.calls() == 0
    found = r.body
    assert found["session_id"] == "s1"
    assert {e["name"] for e in found["entities"]} == {"Alice", "Acme", "Lyon"}
    assert {e["relation"] for e in found["edges"]} == {"works_at", "lives_in"}

    gb.llm.script("query", {"answer": "At Acme.", "entities": [], "edges": [], "passages": []})
    gb.query(question)
    [sent] = gb.llm.requests_for("query")
    prompt = _user_text(sent.body)
    assert {int(i) for i in re.findall(r"\[edge (\d+)\]", prompt)} == {
        e["id"] for e in found["edges"]
    }
    # The estimate is the query's message, measured the same way.
    assert found["context_tokens"] == estimate_tokens(prompt)

    call = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1").body
    assert call["type"] == "search"
    assert "llm" not in {s["name"] for s in call["steps"]}


def _user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content)


@pytest.mark.parametrize("gb_env", [{"ANTHROPIC_API_KEY": ""}], indirect=True)
def test_search_needs_no_llm_key(gb: Harness) -> None:
    _graph(gb)
    question = ask(gb, "Where does Alice work?")
    assert gb.client.post("/v1/gb/query", {"user_id": "u1", "query": question}).status == 503
    r = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": question})
    assert r.status == 200, r.body
    assert {e["relation"] for e in r.body["edges"]} == {"works_at", "lives_in"}
    assert gb.llm.calls() == 0


def test_an_empty_context_has_no_tokens(gb: Harness) -> None:
    g = GraphBuilder(gb)
    g.save()
    r = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": ask(gb, "Anything?")})
    assert r.status == 200, r.body
    assert r.body == {"entities": [], "edges": [], "passages": [], "context_tokens": 0}


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"user_id": "u1"}, 400, "query: required"),
        ({"user_id": "u1", "query": "  "}, 400, "query"),
        ({"user_id": "u1", "query": "x", "answer": True}, 400, "unknown field"),
        ({"user_id": "u1", "query": "x", "reasoning": {"query": "high"}}, 400, "unknown stage"),
        ({"user_id": "u1", "query": "x", "models": {"query": "m"}}, 400, "unknown stage"),
        ({"user_id": "u1", "query": "x", "geo_nearby": True}, 400, "GB_GEO"),
        ({"user_id": "u1", "query": "x", "dataset": "nope"}, 404, "does not exist"),
    ],
)
def test_search_errors_write_nothing(
    gb: Harness, body: dict[str, Any], status: int, message: str
) -> None:
    g = _graph(gb)
    tables, vectors = graph_snapshot(gb), vector_counts(gb, g.key)
    r = gb.client.post("/v1/gb/search", body)
    assert r.status == status, r.body
    assert message in r.body["error"]
    assert graph_snapshot(gb) == tables
    assert vector_counts(gb, g.key) == vectors
    assert gb.llm.calls() == 0
