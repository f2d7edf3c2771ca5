"""Type filters (issue 47): ``search`` and ``query`` take ``entity_types``
(only entities of those types, and facts between two of them) and
``edge_types`` (only facts of those relations), on both stores."""

from __future__ import annotations

from typing import Any

from conftest import Harness

WORLD = {
    "entities": [
        {"name": "Acme", "type": "Customer", "description": "a customer"},
        {"name": "Acme Savings", "type": "Account", "description": "an account"},
        {"name": "Bob", "type": "person", "description": "Acme's buyer"},
    ],
    "edges": [
        {
            "source": "Acme",
            "target": "Acme Savings",
            "relation": "OWNS_ACCOUNT",
            "description": "Acme owns the Acme Savings account.",
        },
        {
            "source": "Bob",
            "target": "Acme",
            "relation": "works_at",
            "description": "Bob works at Acme.",
        },
    ],
}
TEXT = "Acme owns the Acme Savings account; Bob, Acme's buyer, works at Acme."


def _search(gb: Harness, status: int = 200, **filters: Any) -> Any:
    r = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": "Who is Acme?", **filters})
    assert r.status == status, r.body
    return r.body


def test_search_and_query_keep_the_types_asked_for(server: Harness) -> None:
    server.llm.script("extract", WORLD)
    server.remember(TEXT)
    everything = _search(server)
    # (types are stored as the extraction normalizes them: lowercase)
    assert {e["type"] for e in everything["entities"]} == {"customer", "account", "person"}

    only = _search(server, entity_types=["customer"])
    assert [e["name"] for e in only["entities"]] == ["Acme"]
    assert only["edges"] == []  # no fact has both ends a Customer

    owns = _search(server, entity_types=["Customer", "Account"], edge_types=["OWNS_ACCOUNT"])
    assert {e["type"] for e in owns["entities"]} <= {"customer", "account"}
    assert [e["relation"] for e in owns["edges"]] == ["owns_account"]  # as normalized
    work = _search(server, edge_types=["WORKS_AT"])
    assert [e["relation"] for e in work["edges"]] == ["works_at"]

    # query: the answer is given from the filtered context only
    server.llm.script(
        "query", {"answer": "A customer.", "entities": [], "edges": [], "passages": []}
    )
    r = server.client.post(
        "/v1/gb/query", {"user_id": "u1", "query": "Who is Acme?", "entity_types": ["Customer"]}
    )
    assert r.status == 200, r.body
    prompt = str(server.llm.requests_for("query")[-1]["messages"])
    graph = prompt.split("<graph>")[1].split("</graph>")[0]
    assert "Acme" in graph and "Acme Savings" not in graph and "Bob" not in graph


def test_a_bad_filter_is_400(server: Harness) -> None:
    _search(server, 400, entity_types=[])
    _search(server, 400, edge_types=["x" * 65])
    _search(server, 400, entity_types="Customer")
