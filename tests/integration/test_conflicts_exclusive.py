"""GET /v1/gb/conflicts lists two live facts of one source on a relation the
extraction marked exclusive (``"exclusive": true``: a person lives in one
city), even when the relation never superseded itself; a pair on a relation
not marked (two friends) is not listed. Both stores, the scripted fake model."""

from __future__ import annotations

from typing import Any

from remember_helpers import ent, extraction, fact
from test_conflicts_merges import mem
from test_sqlite_server import db_path, gb_sqlite  # noqa: F401  (the SQLite fixture)

from conftest import Harness

__all__ = ["mem"]


def _says(mem: Harness, text: str, relation: str, target: str, *, exclusive: bool) -> None:
    edge: dict[str, Any] = fact("Alice", target, relation)
    if exclusive:
        edge["exclusive"] = True
    mem.llm.script("extract", extraction([ent("Alice", "person"), ent(target, "place")], [edge]))
    mem.llm.script("invalidate", {"invalidated": [], "duplicates": []})  # it misses the pair
    mem.remember(text)


def test_an_exclusive_pair_is_listed_and_a_pair_that_can_both_hold_is_not(mem: Harness) -> None:
    _says(mem, "Alice likes Rome.", "likes", "Rome", exclusive=False)
    _says(mem, "Alice likes Oslo.", "likes", "Oslo", exclusive=False)
    assert mem.client.get("/v1/gb/conflicts?user_id=u1").body == {"conflicts": []}
    _says(mem, "Alice lives in Paris.", "lives_in", "Paris", exclusive=True)
    _says(mem, "Alice lives in Lyon.", "lives_in", "Lyon", exclusive=True)
    calls = mem.llm.calls()
    r = mem.client.get("/v1/gb/conflicts?user_id=u1")
    assert r.status == 200, r.body
    assert mem.llm.calls() == calls  # no LLM call
    [conflict] = r.body["conflicts"]
    assert conflict["source"]["name"] == "Alice"
    assert conflict["relation"] == "lives_in"
    assert [f["target"] for f in conflict["facts"]] == ["Lyon", "Paris"]
    assert [f["texts"][0]["text"] for f in conflict["facts"]] == [
        "Alice lives in Lyon.",
        "Alice lives in Paris.",
    ]
    # Resolved by forgetting one: none is left.
    gone = mem.client.request("DELETE", f"/v1/gb/edges/{conflict['facts'][1]['id']}?user_id=u1")
    assert gone.status == 200, gone.body
    assert mem.client.get("/v1/gb/conflicts?user_id=u1").body == {"conflicts": []}
