"""Extraction that follows a dataset's schema (issue 47, in part): the
extraction prompt carries the declared entity and edge types, and two
namesakes of different declared types stay two entities, on both stores."""

from __future__ import annotations

from typing import Any

from test_dataset_schema import CRM

from conftest import Harness

OWNS = {
    "entities": [
        {"name": "Jordan", "type": "Customer", "description": "a gold customer"},
        {"name": "Northbank Savings", "type": "Account"},
    ],
    "edges": [
        {
            "source": "Jordan",
            "target": "Northbank Savings",
            "relation": "OWNS_ACCOUNT",
            "description": "Jordan owns the Northbank Savings account.",
        }
    ],
}
NAMESAKE = {
    "entities": [{"name": "Jordan", "type": "Account", "description": "an account named Jordan"}],
    "edges": [],
}


def _entities(gb: Harness) -> list[tuple[str, str]]:
    r = gb.client.get("/v1/gb/entities?user_id=u1&dataset=crm")
    assert r.status == 200, r.body
    return sorted((e["name"], e["type"]) for e in r.body["entities"])


def _prompt(gb: Harness) -> str:
    return str(gb.llm.requests_for("extract")[-1]["messages"])


def test_the_prompt_carries_the_types_and_namesakes_of_two_types_stay_two(
    server: Harness,
) -> None:
    assert server.client.request("PUT", "/v1/gb/datasets/crm/schema?user_id=u1", CRM).status == 200
    server.llm.script("extract", OWNS)
    first: Any = server.remember("Jordan owns the Northbank Savings account.", dataset="crm")
    prompt = _prompt(server)
    assert "<types>" in prompt
    assert "entity type Customer: A company that buys from us." in prompt
    assert "tier (one of gold, silver: plan)" in prompt and "renewal_date (date-time)" in prompt
    assert "edge type OWNS_ACCOUNT (Customer -> Account)" in prompt
    assert [e["relation"] for e in first["edges"]] == ["OWNS_ACCOUNT"]  # typed: its declared name

    server.llm.script("extract", NAMESAKE)
    second: Any = server.remember("Jordan is also the name of an account.", dataset="crm")
    (ent,) = second["entities"]
    assert ent["id"] not in {e["id"] for e in first["entities"]}  # a new entity, not a merge
    assert _entities(server) == [
        ("Jordan", "account"),
        ("Jordan", "customer"),
        ("Northbank Savings", "account"),
    ]

    # the same name and the same declared type: one entity, as before
    server.llm.script("extract", {"entities": [OWNS["entities"][0]], "edges": []})
    third: Any = server.remember("Jordan renewed.", dataset="crm")
    assert third["entities"][0]["id"] == first["entities"][0]["id"]


def test_a_dataset_without_a_schema_has_no_types_section(server: Harness) -> None:
    server.llm.script("extract", OWNS)
    server.remember("Jordan owns the Northbank Savings account.", dataset="crm")
    assert "<types>" not in _prompt(server)
