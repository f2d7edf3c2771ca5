"""A declared edge type's attributes, and the free form (issue 47): a fact of
a declared edge type between the entity types its declaration allows is
typed (its relation the declared name) and its attributes are validated like
an entity's (one that does not validate is dropped and counted, never
stored); a relation that is no declared edge type, or a declared one between
entity types it does not allow, stays a free relation (kept, not typed, no
attributes). The attributes come back from the remember, browse, search and
the query's context; on both stores."""

from __future__ import annotations

import copy
from typing import Any

from test_dataset_schema import CRM

from conftest import Harness

SCHEMA: dict[str, Any] = copy.deepcopy(CRM)
SCHEMA["entity_types"]["Person"] = {"description": "A person."}
SCHEMA["edge_types"]["OWNS_ACCOUNT"]["attributes"] = {
    "since": {"type": "string", "format": "date-time"},
    "share": {"type": "number", "description": "the part owned, 0 to 1"},
    "role": {"type": "string", "enum": ["holder", "cosigner"]},
}

WORLD = {
    "entities": [
        {"name": "Acme", "type": "Customer", "description": "a customer"},
        {"name": "Acme Savings", "type": "Account", "description": "an account"},
        {"name": "Bob", "type": "Person", "description": "Acme's buyer"},
        {"name": "Bob Checking", "type": "Account", "description": "Bob's own account"},
    ],
    "edges": [
        {  # typed: two valid values, one outside the enum, one undeclared
            "source": "Acme",
            "target": "Acme Savings",
            "relation": "owns_account",
            "description": "Acme owns the Acme Savings account since 2020.",
            "attributes": {
                "since": "2020-01-15T00:00:00Z",
                "share": 0.5,
                "role": "owner",
                "color": "red",
            },
        },
        {  # a declared edge type between types it does not allow: free
            "source": "Bob",
            "target": "Bob Checking",
            "relation": "OWNS_ACCOUNT",
            "description": "Bob owns the Bob Checking account.",
            "attributes": {"share": 1},
        },
        {  # no declared edge type: free, and its attributes are dropped
            "source": "Bob",
            "target": "Acme",
            "relation": "works_at",
            "description": "Bob works at Acme.",
            "attributes": {"since": "2019-05-01T00:00:00Z"},
        },
    ],
}
TEXT = "Acme owns half of the Acme Savings account since 2020; Bob owns Bob Checking."


def _step(gb: Harness, call_id: str) -> dict[str, Any]:
    r = gb.client.get(f"/v1/gb/calls/{call_id}?user_id=u1")
    assert r.status == 200, r.body
    (step,) = [s for s in r.body["steps"] if s["name"] == "extract"]
    return dict(step.get("counts", step))


def _remember(gb: Harness) -> Any:
    assert gb.client.request("PUT", "/v1/gb/datasets/crm/schema?user_id=u1", SCHEMA).status == 200
    gb.llm.script("extract", WORLD)
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "dataset": "crm", "text": TEXT})
    assert r.status == 200, r.body
    return r


def test_edge_attributes_are_asked_validated_stored_and_returned(server: Harness) -> None:
    r = _remember(server)
    # asked: the structured-output schema carries the edge's attributes, the prompt names them
    request = server.llm.requests_for("extract")[-1]
    assert '"enum": ["holder", "cosigner"]' in str(request.get("tools")).replace("'", '"')
    assert "share (number" in str(request["messages"])

    by_relation = {(e["source"], e["relation"]): e for e in r.body["edges"]}
    assert set(by_relation) == {
        ("Acme", "OWNS_ACCOUNT"),  # typed: the declared name
        ("Bob", "owns_account"),  # free: Person is no Customer
        ("Bob", "works_at"),  # free: not declared
    }
    owns = by_relation[("Acme", "OWNS_ACCOUNT")]
    kept = {"since": "2020-01-15T00:00:00Z", "share": 0.5}
    assert owns["attributes"] == kept
    assert "attributes" not in by_relation[("Bob", "owns_account")]
    assert "attributes" not in by_relation[("Bob", "works_at")]
    counts = _step(server, r.call_id)
    # role (not in the enum), color (undeclared), Bob's share and since (free relations)
    assert counts["attributes_dropped"] == 4
    assert counts["relations_untyped"] == 1

    # browse: the fact's page and the entity's facts
    edge = server.client.get(f"/v1/gb/edges/{owns['id']}?user_id=u1&dataset=crm")
    assert edge.status == 200, edge.body
    assert edge.body["edge"]["attributes"] == kept
    page = server.client.get(f"/v1/gb/entities/{owns['source_id']}?user_id=u1&dataset=crm")
    assert page.status == 200, page.body
    (fact,) = [f for f in page.body["facts"] if f["id"] == owns["id"]]
    assert fact["attributes"] == kept


def test_search_and_query_show_them_and_the_free_form_is_not_typed(server: Harness) -> None:
    r = _remember(server)
    owns_id = next(e["id"] for e in r.body["edges"] if e["relation"] == "OWNS_ACCOUNT")
    body = {"user_id": "u1", "dataset": "crm", "query": "Who owns which account?"}
    found = server.client.post("/v1/gb/search", body)
    assert found.status == 200, found.body
    (hit,) = [e for e in found.body["edges"] if e["id"] == owns_id]
    assert hit["attributes"]["share"] == 0.5
    assert {e["relation"] for e in found.body["edges"]} == {
        "OWNS_ACCOUNT",
        "owns_account",
        "works_at",
    }

    # the type filter keeps the typed fact only, not the free one spelled like it
    typed = server.client.post("/v1/gb/search", {**body, "edge_types": ["owns_account"]})
    assert typed.status == 200, typed.body
    assert [e["id"] for e in typed.body["edges"]] == [owns_id]
    free = server.client.post("/v1/gb/search", {**body, "edge_types": ["WORKS_AT"]})
    assert [e["relation"] for e in free.body["edges"]] == ["works_at"]

    # the query's context shows the values to the model
    server.llm.script("query", {"answer": "Acme.", "entities": [], "edges": [owns_id]})
    assert server.client.post("/v1/gb/query", body).status == 200
    prompt = str(server.llm.requests_for("query")[-1]["messages"])
    assert "share=0.5" in prompt and "since=2020-01-15T00:00:00Z" in prompt
