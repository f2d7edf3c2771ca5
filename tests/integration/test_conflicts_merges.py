"""GET /v1/gb/conflicts (live facts that cannot all hold, no LLM call) and
GET /v1/gb/entities/{id}/merges (the names filed under an entity, and why),
on both stores (DynamoDB on moto, and the local server's SQLite file)."""

from __future__ import annotations

from typing import Any

import pytest
from remember_helpers import ent, extraction, fact
from test_sqlite_server import db_path, gb_sqlite  # noqa: F401  (the SQLite fixture)

from conftest import Harness
from fakes.extraction import links


@pytest.fixture(params=["dynamodb", "sqlite"])
def mem(request: pytest.FixtureRequest) -> Harness:
    harness: Harness = request.getfixturevalue("gb" if request.param == "dynamodb" else "gb_sqlite")
    return harness


def _works(mem: Harness, who: str, org: str, text: str, **script: Any) -> dict[str, Any]:
    mem.llm.script(
        "extract",
        extraction([ent(who, "person"), ent(org, "organization")], [fact(who, org, "works_at")]),
    )
    for stage, reply in script.items():
        mem.llm.script(stage, reply)
    out: dict[str, Any] = mem.remember(text)
    return out


def _planted(mem: Harness) -> None:
    """works_at superseded itself once (Bob); Alice then has two live
    employers (the invalidation missed it); her two friends can both hold."""
    _works(mem, "Bob", "Acme", "Bob works at Acme.")
    _works(
        mem,
        "Bob",
        "Globex",
        "Bob moved to Globex.",
        invalidate={"invalidated": [{"edge_id": 1, "by": 0}], "duplicates": []},
    )
    _works(mem, "Alice", "Acme", "Alice works at Acme.")
    _works(mem, "Alice", "Initech", "Alice works at Initech.", invalidate={"invalidated": []})
    mem.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Carol", "person"), ent("Dave", "person")],
            [fact("Alice", "Carol", "knows"), fact("Alice", "Dave", "knows")],
        ),
    )
    mem.remember("Alice knows Carol and Dave.")


def test_conflicts_lists_a_planted_pair_and_not_a_pair_that_can_both_hold(mem: Harness) -> None:
    _planted(mem)
    calls = mem.llm.calls()
    r = mem.client.get("/v1/gb/conflicts?user_id=u1")
    assert r.status == 200, r.body
    assert mem.llm.calls() == calls  # no LLM call
    [conflict] = r.body["conflicts"]
    assert conflict["source"]["name"] == "Alice"
    assert conflict["relation"] == "works_at"
    facts = conflict["facts"]
    assert [f["target"] for f in facts] == ["Initech", "Acme"]  # newest first
    assert [[t["text"] for t in f["texts"]] for f in facts] == [
        ["Alice works at Initech."],
        ["Alice works at Acme."],
    ]
    # Resolved by ending one: the list is empty.
    end = mem.client.request(
        "PATCH",
        f"/v1/gb/edges/{facts[1]['id']}",
        {"user_id": "u1", "invalid_at": facts[1]["valid_at"]},
    )
    assert end.status == 200, end.body
    assert mem.client.get("/v1/gb/conflicts?user_id=u1").body == {"conflicts": []}


def test_no_conflicts_without_a_self_superseding_relation(mem: Harness) -> None:
    _works(mem, "Alice", "Acme", "Alice works at Acme.")
    _works(mem, "Alice", "Initech", "Alice works at Initech.", invalidate={"invalidated": []})
    assert mem.client.get("/v1/gb/conflicts?user_id=u1").body == {"conflicts": []}
    assert mem.client.get("/v1/gb/conflicts?user_id=u1&dataset=nope").status == 404
    assert mem.client.get("/v1/gb/conflicts?user_id=u1&limit=0").status == 400
    assert mem.client.get("/v1/gb/conflicts").status == 400


def test_merges_say_which_names_when_from_which_text_and_why(mem: Harness) -> None:
    mem.llm.script("extract", extraction([ent("Dan Haas", "person", "roofer")]))
    mem.remember("Dan Haas fixes roofs.")
    mem.llm.script("extract", extraction([ent("Dan Haas", "person")]))
    mem.remember("Dan Haas again.")
    wrong = extraction([ent("Hal Haas", "person", "piano teacher")])
    mem.llm.script("extract", links(wrong, {"Hal Haas": "Dan Haas"}))
    mem.remember("Hal Haas teaches piano.")
    r = mem.client.get("/v1/gb/entities/1/merges?user_id=u1")
    assert r.status == 200, r.body
    assert r.body["entity"]["name"] == "Dan Haas"
    got = [(m["names"], m["artifact_id"], m["match"], m["text"]) for m in r.body["merges"]]
    assert got == [
        (["Dan Haas"], 2, "same name", "Dan Haas again."),
        (["Hal Haas"], 3, "model", "Hal Haas teaches piano."),
    ]
    assert all(m["at"] for m in r.body["merges"])
    # The split route takes a merge's text; the merge goes with the mention.
    s = mem.client.post(
        "/v1/gb/entities/1/split", {"user_id": "u1", "name": "Hal Haas", "mentions": [3]}
    )
    assert s.status == 200, s.body
    after = mem.client.get("/v1/gb/entities/1/merges?user_id=u1").body["merges"]
    assert [m["artifact_id"] for m in after] == [2]
    # Forgetting a text drops its merge.
    assert mem.client.delete("/v1/gb/artifacts/2?user_id=u1").status == 200
    assert mem.client.get("/v1/gb/entities/1/merges?user_id=u1").body["merges"] == []
    assert mem.client.get("/v1/gb/entities/99/merges?user_id=u1").status == 404
    assert mem.client.get("/v1/gb/entities/1/merges?user_id=u2").status == 404
