"""query without ANTHROPIC_API_KEY: 503, nothing called, nothing written."""

from __future__ import annotations

import pytest
from query_helpers import GraphBuilder, ask, graph_snapshot, vector_counts

from conftest import Harness


@pytest.fixture
def gb_env() -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": ""}  # an empty value unsets the variable


def test_query_without_llm_key_is_503(gb: Harness) -> None:
    g = GraphBuilder(gb)
    a = g.entity("Alice", "person", sim=0.9)
    b = g.entity("Acme", "organization")
    g.edge(a, b, "works_at", "Alice works at Acme.")
    g.save()
    tables, vectors = graph_snapshot(gb), vector_counts(gb, g.key)
    r = gb.client.post(
        "/v1/gb/query",
        {"user_id": "u1", "query": ask(gb, "Where does Alice work?"), "session_id": "s1"},
    )
    assert r.status == 503, r.body
    assert "ANTHROPIC_API_KEY" in r.body["error"]
    assert gb.llm.calls() == 0
    assert gb.emb.calls() == 0
    # Invalid requests are still 400.
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": ""})
    assert r.status == 400, r.body
    assert graph_snapshot(gb) == tables
    assert vector_counts(gb, g.key) == vectors
