"""An entity's declared attributes (issue 47, "Extraction that follows it"):
the extraction is asked for them (prompt and structured-output schema), each
value is validated in code against the dataset's schema (one that does not
validate is dropped, counted in the call record, never stored), the newest
value wins with the replaced one in the entity's history, and they come back
from the remember, the entity's page, search and query; on both stores."""

from __future__ import annotations

from typing import Any

from test_dataset_schema import CRM

from conftest import Harness

FIRST = {
    "entities": [
        {
            "name": "Acme",
            "type": "Customer",
            "description": "a customer",
            # valid: an enum value, a date-time with an offset (stored in UTC)
            "attributes": {"tier": "gold", "renewal_date": "2027-03-01T09:30:00+02:00"},
        },
        {
            "name": "Beta",
            "type": "Customer",
            "description": "another customer",
            # invalid: not in the enum, a bare date, not declared for Customer
            "attributes": {"tier": "platinum", "renewal_date": "2027-04-01", "seats": 3},
        },
        {
            "name": "Acme Savings",
            "type": "Account",
            "attributes": {"tier": "gold"},  # Account declares no attributes
        },
    ],
    "edges": [
        {
            "source": "Acme",
            "target": "Acme Savings",
            "relation": "OWNS_ACCOUNT",
            "description": "Acme owns the Acme Savings account.",
        }
    ],
}
SECOND = {
    "entities": [
        {"name": "Acme", "type": "Customer", "attributes": {"tier": "silver", "renewal_date": 5}}
    ],
    "edges": [],
}


def _dropped(gb: Harness, call_id: str) -> int:
    r = gb.client.get(f"/v1/gb/calls/{call_id}?user_id=u1")
    assert r.status == 200, r.body
    (step,) = [s for s in r.body["steps"] if s["name"] == "extract"]
    return int(step.get("counts", step)["attributes_dropped"])


def _page(gb: Harness, entity_id: int) -> Any:
    r = gb.client.get(f"/v1/gb/entities/{entity_id}?user_id=u1&dataset=crm")
    assert r.status == 200, r.body
    return r.body["entity"]


def test_attributes_are_asked_validated_stored_and_returned(server: Harness) -> None:
    assert server.client.request("PUT", "/v1/gb/datasets/crm/schema?user_id=u1", CRM).status == 200
    server.llm.script("extract", FIRST)
    r = server.client.post(
        "/v1/gb/remember", {"user_id": "u1", "dataset": "crm", "text": "Acme is gold."}
    )
    assert r.status == 200, r.body

    # asked: the prompt says how, the structured-output schema carries them
    request = server.llm.requests_for("extract")[-1]
    assert '"attributes"' in str(request["messages"])
    assert '"enum": ["gold", "silver"]' in _json(request.get("tools"))

    by_name = {e["name"]: e for e in r.body["entities"]}
    acme = {"tier": "gold", "renewal_date": "2027-03-01T07:30:00Z"}
    assert by_name["Acme"]["attributes"] == acme
    assert "attributes" not in by_name["Beta"]  # every value of it was dropped
    assert "attributes" not in by_name["Acme Savings"]
    assert _dropped(server, r.call_id) == 4

    acme_id = by_name["Acme"]["id"]
    page = _page(server, acme_id)
    assert page["attributes"] == acme and "attribute_history" not in page
    assert "attributes" not in _page(server, by_name["Beta"]["id"])

    # newest wins; the replaced value is kept in the history; an invalid one changes nothing
    server.llm.script("extract", SECOND)
    r = server.client.post(
        "/v1/gb/remember", {"user_id": "u1", "dataset": "crm", "text": "Acme is silver now."}
    )
    assert r.status == 200, r.body
    assert _dropped(server, r.call_id) == 1
    page = _page(server, acme_id)
    assert page["attributes"] == {"tier": "silver", "renewal_date": "2027-03-01T07:30:00Z"}
    ((old,),) = page["attribute_history"].values()
    assert list(page["attribute_history"]) == ["tier"] and old["value"] == "gold" and old["until"]

    # search's and query's context entities carry them; the query's prompt shows them
    found = server.client.post(
        "/v1/gb/search", {"user_id": "u1", "dataset": "crm", "query": "Acme"}
    )
    assert found.status == 200, found.body
    (hit,) = [e for e in found.body["entities"] if e["id"] == acme_id]
    assert hit["attributes"]["tier"] == "silver"
    server.llm.script("query", {"answer": "Silver.", "entities": [acme_id], "edges": []})
    q = server.query("Which tier is Acme?", dataset="crm")
    assert q["evidence"]["entities"][0]["attributes"]["tier"] == "silver"
    assert "tier=silver" in str(server.llm.requests_for("query")[-1]["messages"])


def test_without_a_schema_every_attribute_is_dropped(server: Harness) -> None:
    server.llm.script("extract", FIRST)
    r = server.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Acme is gold."})
    assert r.status == 200, r.body
    assert all("attributes" not in e for e in r.body["entities"])
    assert _dropped(server, r.call_id) == 6
    assert '"attributes"' not in _json(server.llm.requests_for("extract")[-1].get("tools"))


def _json(value: Any) -> str:
    import json

    return json.dumps(value)
