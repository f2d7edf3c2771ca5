"""PATCH /v1/gb/edges/{id} (a fact ended, or it was wrong) and DELETE
/v1/gb/edges/{id} (forget one fact), on both stores (DynamoDB on moto, and
the local server's SQLite file): a correction is a new fact that supersedes
the old one with its provenance; forgetting it sets the old one back; a
forgotten fact leaves its text and its vector goes; every refusal writes
nothing."""

from __future__ import annotations

from typing import Any

import pytest
from query_helpers import vector_counts
from remember_helpers import ent, extraction, fact
from test_sqlite_server import db_path, gb_sqlite  # noqa: F401  (the SQLite fixture)

from conftest import Harness, Reply
from gligabao.models import DatasetKey

KEY = DatasetKey("u1", "main")


@pytest.fixture(params=["dynamodb", "sqlite"])
def mem(request: pytest.FixtureRequest) -> Harness:
    harness: Harness = request.getfixturevalue("gb" if request.param == "dynamodb" else "gb_sqlite")
    return harness


def _alice(mem: Harness) -> None:
    """Alice (1) lives in Paris (2), edge 1, text 1; Lyon (3) is known too (text 2)."""
    mem.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person", "an engineer"), ent("Paris", "place")],
            [fact("Alice", "Paris", "lives_in", "Alice lives in Paris.", "2020-01-01T00:00:00Z")],
        ),
    )
    mem.remember("Alice lives in Paris.")
    mem.llm.script("extract", extraction([ent("Lyon", "place", "a city in France")]))
    mem.remember("Lyon is a city in France.")


def _patch(mem: Harness, edge: Any, body: dict[str, Any]) -> Reply:
    return mem.client.request("PATCH", f"/v1/gb/edges/{edge}", {"user_id": "u1", **body})


def _edge(mem: Harness, edge: int, user: str = "u1") -> Reply:
    return mem.client.get(f"/v1/gb/edges/{edge}?user_id={user}")


def _snapshot(mem: Harness) -> dict[str, Any]:
    g = mem.graph
    edges = sorted(
        (e.id, e.source_id, e.target_id, e.description, e.invalid_at, e.expired_at)
        for e in g.iter_edges(KEY)
    )
    ds = g.get_dataset(KEY)
    return {
        "edges": edges,
        "artifacts": sorted(a.id for a in g.iter_artifacts(KEY)),
        "corrections": g.corrections(KEY, [e[0] for e in edges]),
        "counts": (ds.entities, ds.edges, ds.artifacts) if ds else None,
        "vectors": vector_counts(mem, KEY),
    }


def test_a_wrong_fact_corrected_then_the_correction_forgotten(mem: Harness) -> None:
    _alice(mem)
    r = _patch(mem, 1, {"target": "Lyon", "reason": "she moved before we met"})
    assert r.status == 200, r.body
    new = r.body["edge"]
    assert (new["id"], new["source"], new["target"], new["relation"]) == (
        2,
        "Alice",
        "Lyon",
        "lives_in",
    )
    assert new["valid_at"] == "2020-01-01T00:00:00Z"
    assert new["correction"]["source"] == "correction"
    assert new["correction"]["who"] == "u1"
    assert new["correction"]["reason"] == "she moved before we met"
    assert new["correction"]["replaces"] == 1
    assert r.body["replaced"]["expired_at"] is not None
    # The history shows the correction with its provenance, both ways.
    old = _edge(mem, 1).body
    assert old["replaced_by"]["edge"]["id"] == 2
    assert old["replaced_by"]["correction"]["reason"] == "she moved before we met"
    got = _edge(mem, 2).body
    assert got["edge"]["correction"]["source"] == "correction"
    assert [s["edge"]["id"] for s in got["replaced"]] == [1]
    assert [e.id for e in mem.graph.live_edges_around(KEY, [1], 10)] == [2]
    # as_of before the correction still sees the old fact (its interval is untouched).
    assert mem.graph.get_edges(KEY, [1])[1].invalid_at is None
    past = mem.client.post(
        "/v1/gb/search",
        {"user_id": "u1", "query": "Where does Alice live?", "as_of": "2021-01-01T00:00:00Z"},
    )
    assert past.status == 200, past.body
    assert 1 in {e["id"] for e in past.body["edges"]}
    now = mem.client.post("/v1/gb/search", {"user_id": "u1", "query": "Where does Alice live?"})
    assert {e["id"] for e in now.body["edges"]} == {2}
    # Forgetting the correction sets the old fact back.
    d = mem.client.delete("/v1/gb/edges/2?user_id=u1")
    assert d.status == 200, d.body
    assert d.body["restored"] == {"edges": [1]}
    assert [e.id for e in mem.graph.live_edges_around(KEY, [1], 10)] == [1]
    assert mem.graph.corrections(KEY, [2]) == {}
    assert _edge(mem, 1).body["replaced_by"] is None


def test_a_fact_ended_keeps_the_past_and_its_claim_moves(mem: Harness) -> None:
    _alice(mem)
    r = _patch(mem, 1, {"invalid_at": "2024-03-01T00:00:00Z"})
    assert r.status == 200, r.body
    assert r.body["edge"]["invalid_at"] == "2024-03-01T00:00:00Z"
    edges = mem.graph.get_edges(KEY, [1, 2])
    assert edges[1].expired_at is not None and edges[1].invalid_at == "2024-03-01T00:00:00Z"
    assert edges[2].expired_at is None
    # A description corrected: same triple, the open claim goes to the new edge.
    r = _patch(mem, 2, {"description": "Alice lived in Paris until March 2024."})
    assert r.status == 200, r.body
    assert r.body["edge"]["id"] == 3
    ds = mem.graph.get_dataset(KEY)
    assert (ds.entities, ds.edges, ds.artifacts) == (3, 3, 2)
    # Forgetting 3 sets 2 back; forgetting 2 then sets 1 back, open again.
    assert mem.client.delete("/v1/gb/edges/3?user_id=u1").body["restored"] == {"edges": [2]}
    assert mem.client.delete("/v1/gb/edges/2?user_id=u1").body["restored"] == {"edges": [1]}
    one = mem.graph.get_edges(KEY, [1])[1]
    assert (one.invalid_at, one.expired_at) == (None, None)


def test_a_correction_of_an_open_same_triple_hands_over_the_claim(mem: Harness) -> None:
    _alice(mem)
    assert _patch(mem, 1, {"description": "Alice lives in central Paris."}).status == 200
    # A text stating the fact again restates the corrected edge, not a twin.
    mem.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Paris", "place")],
            [fact("Alice", "Paris", "lives_in", "Alice lives in Paris.")],
        ),
    )
    mem.remember("Alice still lives in Paris.")
    live = [e for e in mem.graph.iter_edges(KEY) if e.live]
    assert [e.id for e in live] == [2], live


def test_forgetting_a_fact_keeps_its_text_and_drops_its_vector(mem: Harness) -> None:
    _alice(mem)
    before = vector_counts(mem, KEY)
    r = mem.client.delete("/v1/gb/edges/1?user_id=u1")
    assert r.status == 200, r.body
    assert r.body["removed"]["edges"] == [1]
    assert mem.graph.get_edges(KEY, [1]) == {}
    assert sorted(a.id for a in mem.graph.iter_artifacts(KEY)) == [1, 2]
    assert vector_counts(mem, KEY) == {**before, "edges": before["edges"] - 1}
    ds = mem.graph.get_dataset(KEY)
    assert (ds.entities, ds.edges, ds.artifacts) == (3, 0, 2)
    found = mem.client.post("/v1/gb/search", {"user_id": "u1", "query": "Where does Alice live?"})
    assert found.status == 200
    assert found.body["edges"] == []
    assert mem.client.delete("/v1/gb/edges/1?user_id=u1").status == 404


@pytest.mark.parametrize(
    ("edge", "body", "status"),
    [
        (999, {"invalid_at": "2024-01-01T00:00:00Z"}, 404),  # no such fact
        (1, {"dataset": "nope", "invalid_at": "2024-01-01T00:00:00Z"}, 404),
        (1, {"user_id": "u2", "invalid_at": "2024-01-01T00:00:00Z"}, 404),  # another user's
        ("abc", {"invalid_at": "2024-01-01T00:00:00Z"}, 400),
        (1, {}, 400),  # nothing to correct
        (1, {"invalid_at": "yesterday"}, 400),
        (1, {"invalid_at": "2019-01-01T00:00:00Z"}, 400),  # before valid_at
        (1, {"target": "Nobody"}, 400),  # no such entity
        (1, {"target_id": 999}, 400),
        (1, {"target": "Lyon", "target_id": 3}, 400),
        (1, {"target": "Alice"}, 400),  # its own source
        (1, {"description": "   "}, 400),
        (1, {"description": "Alice lives in Paris."}, 400),  # already so
        (1, {"reason": "x"}, 400),
        (1, {"invalid_at": "2024-01-01T00:00:00Z", "extra": 1}, 400),
    ],
)
def test_refusals_write_nothing(mem: Harness, edge: Any, body: dict[str, Any], status: int) -> None:
    _alice(mem)
    before = _snapshot(mem)
    r = _patch(mem, edge, body)
    assert r.status == status, r.body
    assert set(r.body) == {"error"}
    assert _snapshot(mem) == before


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/v1/gb/edges/999?user_id=u1", 404),
        ("/v1/gb/edges/1?user_id=u2", 404),  # another user's fact
        ("/v1/gb/edges/1?user_id=u1&dataset=nope", 404),
        ("/v1/gb/edges/abc?user_id=u1", 400),
        ("/v1/gb/edges/1", 400),  # no user
        ("/v1/gb/edges/1?user_id=u1&x=1", 400),
    ],
)
def test_forget_refusals_write_nothing(mem: Harness, path: str, status: int) -> None:
    _alice(mem)
    mem.llm.script("extract", extraction([ent("Bob", "person")]))
    mem.remember("Bob is here.", user="u2")
    before = _snapshot(mem)
    r = mem.client.delete(path)
    assert r.status == status, r.body
    assert _snapshot(mem) == before


def test_a_superseded_fact_is_not_corrected_again(mem: Harness) -> None:
    _alice(mem)
    assert _patch(mem, 1, {"target": "Lyon"}).status == 200
    before = _snapshot(mem)
    r = _patch(mem, 1, {"target": "Lyon"})
    assert r.status == 400 and "superseded" in r.body["error"]
    assert _snapshot(mem) == before


def _tool(mem: Harness, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": {"user_id": "u1", **arguments}},
    }
    r = mem.client.post("/mcp", call)
    assert r.status == 200, r.body
    result: dict[str, Any] = r.body["result"]
    return result


def test_the_mcp_tools_correct_list_and_forget(mem: Harness) -> None:
    _alice(mem)
    fixed = _tool(mem, "correct_fact", {"edge_id": 1, "target": "Lyon", "reason": "moved"})
    assert fixed["structuredContent"]["edge"]["target"] == "Lyon", fixed
    listed = _tool(mem, "list_conflicts", {})
    assert listed["structuredContent"] == {"conflicts": []}
    undone = _tool(mem, "forget_fact", {"edge_id": 2})
    assert undone["structuredContent"]["restored"] == {"edges": [1]}
    again = _tool(mem, "forget_fact", {"edge_id": 2})
    assert again["isError"] is True and again["structuredContent"]["status"] == 404
    bad = _tool(mem, "correct_fact", {"edge_id": 1})
    assert bad["isError"] is True and bad["structuredContent"]["status"] == 400


def test_a_target_another_live_fact_states_is_409_and_writes_nothing(mem: Harness) -> None:
    _alice(mem)
    mem.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Lyon", "place")], [fact("Alice", "Lyon", "lives_in")]
        ),
    )
    mem.llm.script("invalidate", {"invalidated": []})
    mem.remember("Alice lives in Lyon too.")
    before = _snapshot(mem)
    r = _patch(mem, 1, {"target": "Lyon"})
    assert r.status == 409, r.body
    assert "already states" in r.body["error"]
    assert _snapshot(mem) == before
