"""Concurrent remember calls that state the same new fact (spec: remember.md,
step 6: a fact stated again links to the existing edge, it is not duplicated).
Each open fact (live, not ended) holds a claim on its triple; the claim goes
with the edge when it is superseded or ended, and with a failed call."""

from __future__ import annotations

from typing import Any

import pytest
from remember_helpers import ent, extraction, key, remember_all, works_at

from conftest import Harness, Reply

N = 8


def _fact_claims(gb: Harness) -> dict[str, int]:
    """Triple -> owning edge ID, from the rows as stored."""
    return {
        r["sk"]["S"][2:]: int(r["entity_id"]["N"])
        for r in gb.scan("terms")
        if r["sk"]["S"].startswith("F#")
    }


def _assert_one_live_edge_for_all(gb: Harness, replies: list[Reply], before: int = 0) -> int:
    """``before``: the artifacts stored before the burst."""
    assert [r.status for r in replies] == [200] * N, [r.body for r in replies]
    edges = list(gb.graph.iter_edges(key()))
    assert len(edges) == 1, edges
    [edge] = edges
    assert edge.live and edge.invalid_at is None
    # every call answers with that edge, and its text is linked to it
    for r in replies:
        assert [e["id"] for e in r.body["edges"]] == [edge.id], r.body
    artifact_ids = sorted(r.body["artifact_id"] for r in replies)
    assert len(set(artifact_ids)) == N
    assert sorted(gb.graph.edge_artifacts(key(), edge.id)) == artifact_ids
    assert edge.artifact_id in artifact_ids  # the text that first stated it
    assert _fact_claims(gb) == {f"{edge.source_id}#works_at#{edge.target_id}": edge.id}
    [ds] = gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"]
    assert (ds["edges"], ds["artifacts"]) == (1, before + N)
    return edge.id


def test_concurrent_calls_state_a_new_fact_between_known_entities_once(gb: Harness) -> None:
    gb.llm.script("extract", extraction([ent("Alice", "person"), ent("Acme", "organization")]))
    gb.remember("Alice and Acme.")
    gb.llm.default("extract", works_at())
    replies = remember_all(gb, [f"Alice works at Acme ({i})." for i in range(N)])
    _assert_one_live_edge_for_all(gb, replies, before=1)
    assert gb.llm.calls("invalidate") == 0  # no live fact around: nothing to judge
    assert len(gb.scan("entities")) == 2


def test_concurrent_calls_state_a_new_fact_between_new_entities_once(gb: Harness) -> None:
    gb.llm.default("extract", works_at())
    replies = remember_all(gb, [f"Alice works at Acme ({i})." for i in range(N)])
    edge_id = _assert_one_live_edge_for_all(gb, replies)
    assert len(gb.scan("entities")) == 2
    # a later text states it again: restated, still one edge
    out = gb.remember("Alice still works at Acme.")
    assert [e["id"] for e in out["edges"]] == [edge_id]
    assert len(gb.scan("edges")) == 1


def test_a_superseded_fact_stated_again_is_a_new_edge(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.", reference_time="2024-01-01T00:00:00Z")
    assert _fact_claims(gb) == {"1#works_at#2": 1}
    gb.llm.script("extract", works_at("Alice", "Globex"))
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    gb.remember("Alice moved to Globex.", reference_time="2024-06-01T00:00:00Z")
    assert gb.graph.get_edges(key(), [1])[1].expired_at is not None
    assert _fact_claims(gb) == {"1#works_at#3": 2}  # the superseded edge let go

    gb.llm.script("extract", works_at())
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 2, "by": 0}]})
    out = gb.remember("Alice is back at Acme.", reference_time="2025-01-01T00:00:00Z")
    [edge] = out["edges"]
    assert edge["id"] == 3 and edge["invalid_at"] is None
    assert sorted(gb.graph.edge_artifacts(key(), 3)) == [3]
    assert sorted(gb.graph.edge_artifacts(key(), 1)) == [1]
    assert _fact_claims(gb) == {"1#works_at#2": 3}
    live = gb.graph.live_edges_around(key(), [1], 100)
    assert [e.id for e in live] == [3]


def test_an_ended_fact_releases_its_claim_and_a_new_period_claims_again(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.", reference_time="2024-01-01T00:00:00Z")
    gb.llm.script("extract", works_at(invalid_at="2024-06-01T00:00:00Z"))
    gb.remember("Alice left Acme in June.", reference_time="2024-07-01T00:00:00Z")
    assert _fact_claims(gb) == {}
    gb.llm.script("extract", works_at())
    out = gb.remember("Alice is back at Acme.", reference_time="2025-01-01T00:00:00Z")
    assert [e["id"] for e in out["edges"]] == [2]
    assert _fact_claims(gb) == {"1#works_at#2": 2}


def test_a_failed_remember_releases_its_fact_claims(
    gb: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gligabao.errors import UpstreamError
    from gligabao.graph.dynamodb.store import DynamoGraphStore

    gb.llm.script("extract", extraction([ent("Alice", "person"), ent("Acme", "organization")]))
    gb.remember("Alice and Acme.")

    seen: list[dict[str, int]] = []

    def failing_commit(self: Any, k: Any, write: Any) -> None:
        seen.append(_fact_claims(gb))
        raise UpstreamError("graph store write failed: injected")

    monkeypatch.setattr(DynamoGraphStore, "commit", failing_commit)
    gb.llm.default("extract", works_at())
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."})
    assert r.status == 502, r.body
    assert seen and list(seen[0]) == ["1#works_at#2"]  # claimed before the write ...
    assert _fact_claims(gb) == {}  # ... and released with it
    assert gb.scan("edges") == []

    monkeypatch.undo()
    again = gb.remember("Alice works at Acme.")
    [edge] = again["edges"]
    assert edge["id"] > seen[0]["1#works_at#2"]  # the failed call's ID is not reused
    assert _fact_claims(gb) == {"1#works_at#2": edge["id"]}
    assert [e.id for e in gb.graph.iter_edges(key())] == [edge["id"]]


def test_claim_facts_store_contract(gb: Harness) -> None:
    from gligabao.errors import Busy
    from gligabao.graph.dynamodb.store import DynamoGraphStore

    gb.llm.script("extract", extraction([ent("Alice", "person")]))
    gb.remember("Alice.")  # creates the dataset
    store, k = gb.graph, key()
    assert store.claim_facts(k, "t1", {"1#a#2": 10, "1#b#2": 11}) == {"1#a#2": 10, "1#b#2": 11}
    # t1 holds live leases and has not committed: t2 waits, then Busy
    impatient = DynamoGraphStore(lease_wait_s=0.2)
    with pytest.raises(Busy) as busy:
        impatient.claim_facts(k, "t2", {"1#a#2": 20, "1#c#2": 21})
    assert busy.value.status == 409 and busy.value.retry_after >= 1
    impatient.abort(k, "t2")  # gives up: what it claimed (1#c#2) is released
    assert _fact_claims(gb) == {"1#a#2": 10, "1#b#2": 11}
    store.abort(k, "t1")
    assert _fact_claims(gb) == {}
    assert store.claim_facts(k, "t3", {"1#a#2": 30}) == {"1#a#2": 30}
    # no term query can see a claim
    assert store.keyword_hits(k, ["f", "1", "a"], 10) == []
    # deleting the dataset removes the claims
    assert gb.client.delete("/v1/gb/datasets/main?user_id=u1").status == 204
    assert _fact_claims(gb) == {}


def test_an_expired_lease_whose_call_never_committed_is_taken_over(gb: Harness) -> None:
    import time

    from gligabao.graph.dynamodb.store import DynamoGraphStore

    gb.llm.script("extract", extraction([ent("Alice", "person")]))
    gb.remember("Alice.")
    k = key()
    short = DynamoGraphStore(lease_s=0.3, lease_wait_s=0.0)
    assert short.claim_facts(k, "dead", {"1#a#2": 500}) == {"1#a#2": 500}  # never commits
    time.sleep(0.5)
    assert short.claim_facts(k, "next", {"1#a#2": 502}) == {"1#a#2": 502}
    assert _fact_claims(gb) == {"1#a#2": 502}
    # the dead call can no longer commit: its record is marked aborted
    states = {r["sk"]["S"]: r["state"]["S"] for r in gb.scan("terms") if "state" in r}
    assert states == {"C#dead": "aborted"}
