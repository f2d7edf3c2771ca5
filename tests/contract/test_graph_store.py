"""The GraphStore contract, one suite over every adapter:

- ``sqlite``: SqliteGraphStore on a fresh file (the local server's default);
- ``dynamodb``: DynamoGraphStore on moto (in-process ``mock_aws``), and on a
  moto server over HTTP for the tests of concurrent conditional writes.

Every method, tenant isolation, concurrency of the claims and counters,
apply's all-or-nothing, delete_dataset. Behaviour that differs between the
adapters is a bug in one of them. DynamoDB-only details (table definitions,
request counts) are in tests/unit/test_dynamo_graph.py.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from dynamo_fixtures import dynamodb_client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gligabao.dynamodb import tables
from gligabao.errors import BadRequest, Busy, NotFound, UpstreamError
from gligabao.graph.dynamodb.store import DynamoGraphStore
from gligabao.graph.port import GraphStore
from gligabao.graph.sqlite.store import SqliteGraphStore
from gligabao.memory.browse import ARTIFACT_CURSOR, ENTITY_CURSOR, Browse
from gligabao.models import (
    Artifact,
    DatasetKey,
    Edge,
    EdgeUpdate,
    Entity,
    EntityUpdate,
    GraphWrite,
)
from gligabao.sqlite.db import Database

A = DatasetKey("user-a", "main")
B = DatasetKey("user-b", "main")  # same dataset name, another user
A2 = DatasetKey("user-a", "other")


def ent(i: int, name: str, description: str = "", updated_at: str = "", **kw: Any) -> Entity:
    ts = updated_at or f"2024-01-01T00:00:{i % 60:02d}Z"
    return Entity(i, name, "thing", description, created_at=ts, updated_at=ts, **kw)


def edge(i: int, src: int, dst: int, relation: str = "knows", **kw: Any) -> Edge:
    return Edge(i, src, dst, relation, created_at="2024-01-01T00:00:00Z", **kw)


def art(i: int, text: str = "some text") -> Artifact:
    return Artifact(i, text, "2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z", session_id="s1")


@pytest.fixture(params=["sqlite", "dynamodb", "dynamodb-process"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        db = Database(tmp_path / "gligabao.db")
        yield SqliteGraphStore(db)
        db.close()
        return
    # "dynamodb-process": moto's server in another process, as under `sam local`
    # (this process cannot tell that moto answers).
    request.getfixturevalue("dynamo" if request.param == "dynamodb" else "dynamo_process")
    s = DynamoGraphStore()
    yield s
    s.close()


@pytest.fixture(params=["sqlite", "dynamodb-server"])
def server_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """For the races: real threads on real connections (SQLite's locking,
    moto's server over HTTP)."""
    if request.param == "sqlite":
        db = Database(tmp_path / "gligabao.db")
        yield SqliteGraphStore(db)
        db.close()
        return
    request.getfixturevalue("dynamo_server")
    s = DynamoGraphStore()
    yield s
    s.close()


def seed(store: GraphStore, key: DatasetKey) -> None:
    """Alice(1) -knows-> Bob(2), Bob -works_at-> Acme(3); artifact 1."""
    store.ensure_dataset(key)
    store.allocate_ids(key, 3, 2, 1)
    txn = f"seed-{key.user_id}-{key.dataset}"
    store.claim_names(key, txn, {"alice smith": 1, "bob": 2, "acme corp": 3})
    store.claim_facts(key, txn, {"1#knows#2": 1, "2#works_at#3": 2})
    store.commit(
        key,
        GraphWrite(
            txn=txn,
            artifacts=[art(1, "Alice knows Bob. Bob works at Acme.")],
            new_entities=[
                ent(1, "Alice Smith", "a dog lover"),
                ent(2, "Bob", "an engineer"),
                ent(3, "Acme Corp", "a company that makes dog food"),
            ],
            new_edges=[edge(1, 1, 2), edge(2, 2, 3, "works_at", artifact_id=1)],
            entity_links=[(1, 1), (2, 1), (3, 1)],
            edge_links=[(1, 1), (2, 1)],
        ),
    )


def impatient(store: Any, wait_s: float = 0.2) -> Any:
    """The same store, waiting only ``wait_s`` for a live lease."""
    if isinstance(store, SqliteGraphStore):
        store._claims.lease_wait_s = wait_s
    else:
        store._leases.wait_s = wait_s
    return store


def scan_all(store: Any) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table, read around the adapter (boto3 / sqlite3)."""
    out: dict[str, list[dict[str, Any]]] = {}
    if isinstance(store, SqliteGraphStore):
        conn = sqlite3.connect(store.db.path)
        try:
            names = [
                r[0]
                for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                # FTS5's own shadow tables always hold its bookkeeping rows;
                # a dataset's words table itself shows the indexed rows.
                if not r[0].startswith("sqlite_")
                and not re.search(r"^words_\w+_(data|idx|content|docsize|config)$", r[0])
            ]
            for name in names:
                cur = conn.execute(f"SELECT * FROM {name}")
                cols = [d[0] for d in cur.description]
                out[name] = [dict(zip(cols, row, strict=True)) for row in cur]
        finally:
            conn.close()
        return out
    client = dynamodb_client()
    for model in tables.ALL_MODELS:
        items: list[dict[str, Any]] = []
        for page in client.get_paginator("scan").paginate(TableName=model.Meta.table_name):
            items.extend(page["Items"])
        out[tables.short_name(model)] = items
    return out


def canon(row: dict[str, Any]) -> str:
    """A row as text, whatever order its attributes come in."""
    return json.dumps(row, sort_keys=True, default=repr)


def _val(v: Any) -> Any:
    return v["S"] if isinstance(v, dict) else v


def belongs_to(item: dict[str, Any], key: DatasetKey) -> bool:
    if "pk" in item:
        return bool(_val(item["pk"]) == key.pk)
    if "name" in item and "user_id" in item:  # datasets
        return bool(_val(item["user_id"]) == key.user_id and _val(item["name"]) == key.dataset)
    return False


# --- datasets --------------------------------------------------------------------


def test_datasets_lifecycle(store: Any) -> None:
    assert store.get_dataset(A) is None
    created = store.ensure_dataset(A)
    assert created.name == "main" and created.created_at and created.entities == 0
    again = store.ensure_dataset(A)
    assert again == created
    store.ensure_dataset(A2)
    store.ensure_dataset(B)
    assert [d.name for d in store.list_datasets("user-a")] == ["main", "other"]
    assert [d.name for d in store.list_datasets("user-b")] == ["main"]
    assert store.list_datasets("nobody") == []


def test_ensure_dataset_concurrent_creates_once(server_store: Any) -> None:
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda _: server_store.ensure_dataset(A), range(8)))
    assert len({d.created_at for d in got}) == 1
    assert len(server_store.list_datasets(A.user_id)) == 1


def test_allocate_ids_blocks(store: Any) -> None:
    with pytest.raises(NotFound):
        store.allocate_ids(A, 1, 1, 1)
    store.ensure_dataset(A)
    assert store.allocate_ids(A, 3, 2, 1) == (1, 1, 1)
    assert store.allocate_ids(A, 1, 0, 4) == (4, 3, 2)
    assert store.allocate_ids(A, 0, 0, 0) == (5, 3, 6)
    assert store.allocate_ids(A, 2, 2, 2) == (5, 3, 6)
    # another user's dataset of the same name has its own counters
    store.ensure_dataset(B)
    assert store.allocate_ids(B, 1, 1, 1) == (1, 1, 1)


def test_allocate_ids_monotonic_under_concurrency(server_store: Any) -> None:
    server_store.ensure_dataset(A)
    per_thread: dict[int, list[tuple[int, int, int]]] = {}
    start = threading.Barrier(8)

    def work(t: int) -> None:
        start.wait()
        per_thread[t] = [server_store.allocate_ids(A, 3, 2, 1) for _ in range(5)]

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    blocks = [b for bs in per_thread.values() for b in bs]
    # within a thread, strictly increasing
    for bs in per_thread.values():
        assert bs == sorted(bs) and len(set(bs)) == len(bs)
    # across threads: disjoint blocks that tile 1..N exactly
    ents = sorted(i for e, _, _ in blocks for i in range(e, e + 3))
    edges = sorted(i for _, d, _ in blocks for i in range(d, d + 2))
    arts = sorted(a for _, _, a in blocks)
    assert ents == list(range(1, 8 * 5 * 3 + 1))
    assert edges == list(range(1, 8 * 5 * 2 + 1))
    assert arts == list(range(1, 8 * 5 + 1))


# --- apply and reads -------------------------------------------------------------


def test_apply_writes_rows_links_and_counts(store: Any) -> None:
    seed(store, A)
    ds = store.get_dataset(A)
    assert ds is not None and (ds.entities, ds.edges, ds.artifacts) == (3, 2, 1)
    ents = store.get_entities(A, [1, 2, 3, 99])
    assert sorted(ents) == [1, 2, 3]
    assert ents[1].name == "Alice Smith" and ents[1].description == "a dog lover"
    assert ents[1].type == "thing"
    edges = store.get_edges(A, [2, 1, 1])
    assert sorted(edges) == [1, 2]
    assert edges[2].relation == "works_at" and edges[2].artifact_id == 1 and edges[2].live
    arts = store.get_artifacts(A, [1])
    assert arts[1].text.startswith("Alice") and arts[1].session_id == "s1"
    assert store.entity_artifacts(A, 1) == [1]
    assert store.edge_artifacts(A, 2) == [1]
    assert store.entity_artifacts(A, 42) == []
    assert store.get_entities(A, []) == {}


def test_round_trip_of_optional_fields(store: Any) -> None:
    store.ensure_dataset(A)
    a = Artifact(5, "chunk", "t1", "t0", session_id=None, parent_id=4, index=2, call_id="c1")
    e = ent(7, "Paris", lat=48.8566, lon=2.3522)
    d = Edge(9, 7, 7, "is", "", None, "2020-01-01T00:00:00Z", "2021-01-01T00:00:00Z", "t", None)
    store.commit(A, GraphWrite(artifacts=[a], new_entities=[e], new_edges=[d]))
    assert store.get_artifacts(A, [5])[5] == a
    assert store.get_entities(A, [7])[7] == e
    assert store.get_edges(A, [9])[9] == d


def test_batches_over_page_limits(store: Any) -> None:
    store.ensure_dataset(A)
    many = [
        ent(i, f"Entity {i}", updated_at=f"2024-01-01T00:{i // 60:02d}:{i % 60:02d}Z")
        for i in range(1, 131)
    ]
    store.commit(A, GraphWrite(new_entities=many))
    got = store.get_entities(A, list(range(1, 131)))
    assert len(got) == 130
    assert sum(1 for _ in store.iter_entities(A)) == 130
    assert store.get_dataset(A).entities == 130  # type: ignore[union-attr]


def test_keyword_hits_newest_first_with_cap_and_flags(store: Any) -> None:
    seed(store, A)
    hits = store.keyword_hits(A, ["dog", "bob", "nothing"], per_term=5)
    dog = [h for h in hits if h.term == "dog"]
    assert [h.entity_id for h in dog] == [3, 1]  # newest (highest ID) first
    assert dog[0].in_description and not dog[0].in_name
    assert dog[0].norm_name == "acme corp"
    bob = [h for h in hits if h.term == "bob"]
    assert [(h.entity_id, h.in_name) for h in bob] == [(2, True)]
    assert store.keyword_hits(A, ["dog"], per_term=1)[0].entity_id == 3
    # whole word only: "do" is not a prefix match of "dog"
    assert store.keyword_hits(A, ["do"], per_term=5) == []
    assert store.keyword_hits(A, [], per_term=5) == []


def test_recent_entities(store: Any) -> None:
    store.ensure_dataset(A)
    store.commit(
        A,
        GraphWrite(
            new_entities=[
                ent(1, "One", updated_at="2024-01-03T00:00:00Z"),
                ent(2, "Two", updated_at="2024-01-01T00:00:00Z"),
                ent(3, "Three", updated_at="2024-01-02T00:00:00Z"),
            ]
        ),
    )
    assert [e.id for e in store.recent_entities(A, 2)] == [1, 3]
    assert [e.id for e in store.recent_entities(A, 10)] == [1, 3, 2]
    assert store.recent_entities(B, 10) == []


def test_recent_artifacts_newest_id_first(store: Any) -> None:
    store.ensure_dataset(A)
    store.commit(A, GraphWrite(artifacts=[art(3, "three"), art(1, "one"), art(2, "two")]))
    assert [a.id for a in store.recent_artifacts(A, 2)] == [3, 2]
    assert [a.text for a in store.recent_artifacts(A, 10)] == ["three", "two", "one"]
    assert store.recent_artifacts(A, 10)[0].session_id == "s1"
    assert store.recent_artifacts(A, 0) == []
    assert store.recent_artifacts(B, 10) == []


def test_updated_entity_rewrites_terms_and_recency(store: Any) -> None:
    seed(store, A)
    old = store.get_entities(A, [2])[2]
    now = "2025-01-01T00:00:00Z"
    done = store.commit(
        A, GraphWrite(now=now, entity_updates=[EntityUpdate(2, ["a cat person", "an engineer"])])
    )
    new = Entity(2, "Bob", "thing", "an engineer; a cat person", old.created_at, now)
    assert done.entities == {2: new}
    assert store.get_entities(A, [2])[2] == new
    hits = store.keyword_hits(A, ["bob", "engineer", "cat"], 5)
    assert {(h.term, h.entity_id) for h in hits} == {("bob", 2), ("engineer", 2), ("cat", 2)}
    assert all(h.updated_at == now for h in hits)
    assert store.recent_entities(A, 1)[0].id == 2
    # counts only grow with new rows
    assert store.get_dataset(A).entities == 3  # type: ignore[union-attr]


def test_live_edges_around(store: Any) -> None:
    store.ensure_dataset(A)
    store.commit(
        A,
        GraphWrite(
            new_entities=[ent(i, f"E{i}") for i in range(1, 6)],
            new_edges=[
                edge(1, 1, 2),
                edge(2, 3, 1),
                edge(3, 1, 4),
                edge(4, 4, 5),  # not around 1
                edge(5, 2, 1),
                edge(6, 1, 5, expired_at="2024-02-01T00:00:00Z"),  # superseded at birth
            ],
        ),
    )
    assert [e.id for e in store.live_edges_around(A, [1], 10)] == [5, 3, 2, 1]
    assert [e.id for e in store.live_edges_around(A, [1], 2)] == [5, 3]
    # edge 5 is around both 1 and 2: once only
    assert [e.id for e in store.live_edges_around(A, [1, 2], 10)] == [5, 3, 2, 1]
    # supersede edge 3: it leaves the index
    store.commit(A, GraphWrite(edge_updates=[EdgeUpdate(3, expired_at="2024-03-01T00:00:00Z")]))
    assert [e.id for e in store.live_edges_around(A, [1], 10)] == [5, 2, 1]
    assert [e.id for e in store.live_edges_around(A, [4], 10)] == [4]
    # still readable by ID, with its expiry
    assert store.get_edges(A, [3])[3].expired_at == "2024-03-01T00:00:00Z"
    assert store.get_edges(A, [6])[6].live is False
    assert store.live_edges_around(B, [1], 10) == []
    assert store.live_edges_around(A, [], 10) == []
    # the superseded ones are in the other index, for questions about the past
    assert [e.id for e in store.expired_edges_around(A, [1], 10)] == [6, 3]
    assert [e.id for e in store.expired_edges_around(A, [4], 10)] == [3]
    assert [e.id for e in store.expired_edges_around(A, [1], 1)] == [6]
    assert [e.id for e in store.expired_edges_around(A, [2], 10)] == []
    assert store.expired_edges_around(B, [1], 10) == []


def test_names_claim_lookup_release(store: Any) -> None:
    store.ensure_dataset(A)
    assert store.claim_names(A, "t1", {"alice": 1, "bob": 2}) == {"alice": 1, "bob": 2}
    store.commit(A, GraphWrite(txn="t1", new_entities=[ent(1, "Alice"), ent(2, "Bob")]))
    assert store.entity_ids_by_names(A, ["alice", "bob"]) == {"alice": 1, "bob": 2}
    assert store.claim_names(A, "t2", {"alice": 7, "carol": 8}) == {"alice": 1, "carol": 8}
    store.abort(A, "t2")  # alice is not t2's: kept; carol is released
    assert store.entity_ids_by_names(A, ["alice", "carol"]) == {"alice": 1}
    assert store.claim_names(A, "t3", {"carol": 9}) == {"carol": 9}
    assert store.entity_ids_by_names(A, []) == {}
    assert store.entity_ids_by_names(B, ["alice"]) == {}


def test_a_live_lease_is_waited_for_then_busy(server_store: Any) -> None:
    """Eight calls claim one name at once: one holds it (and never commits
    here), the others wait for its lease, then answer Busy (409)."""
    store = impatient(server_store, 0.3)
    store.ensure_dataset(A)
    start = threading.Barrier(8)

    def claim(i: int) -> dict[str, int] | int:
        start.wait()
        try:
            return store.claim_names(A, f"t{i}", {"same name": 100 + i, f"own {i}": 100 + i})
        except Busy as exc:
            return exc.retry_after

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(claim, range(8)))
    won = [r for r in results if isinstance(r, dict)]
    assert len(won) == 1, results
    assert all(isinstance(r, int) and r >= 1 for r in results if not isinstance(r, dict))


def test_store_errors_are_upstream_errors(store: Any) -> None:
    store.ensure_dataset(A)
    # The entities table goes away under the adapter, as a broken store would.
    if isinstance(store, SqliteGraphStore):
        with sqlite3.connect(store.db.path) as conn:
            conn.execute("DROP TABLE entities")
    else:
        tables.EntityRow.delete_table()
    with pytest.raises(UpstreamError, match="get_entities"):
        store.get_entities(A, [1])
    with pytest.raises(UpstreamError):
        list(store.iter_entities(A))
    with pytest.raises(UpstreamError):
        store.recent_entities(A, 3)
    with pytest.raises(UpstreamError, match="graph store write failed"):
        store.commit(A, GraphWrite(new_entities=[ent(1, "Alice")]))
    # "not found" is not an error
    assert store.get_dataset(B) is None


def test_iterators(store: Any) -> None:
    seed(store, A)
    seed(store, A2)
    assert [e.id for e in store.iter_entities(A)] == [1, 2, 3]
    assert [e.id for e in store.iter_edges(A)] == [1, 2]
    assert [a.id for a in store.iter_artifacts(A)] == [1]
    assert list(store.iter_entities(B)) == []


# --- apply failures --------------------------------------------------------------


def test_a_failed_commit_is_invisible_and_abort_leaves_nothing(store: Any) -> None:
    seed(store, A)
    before = scan_all(store)
    write = GraphWrite(
        txn="doomed",
        artifacts=[art(2, "Bob is a carpenter now")],
        new_entities=[ent(4, "Workshop", "a carpentry workshop")],
        entity_updates=[EntityUpdate(2, ["a carpenter"])],
        new_edges=[edge(3, 2, 4, "owns")],
        edge_updates=[EdgeUpdate(999, expired_at="2025-01-01T00:00:00Z")],  # no such edge
        entity_links=[(4, 2), (2, 2)],
        edge_links=[(3, 2)],
    )
    with pytest.raises(UpstreamError, match="graph store write failed"):
        store.commit(A, write)
    # no reader sees any of it
    assert store.get_entities(A, [4]) == {} and store.get_edges(A, [3]) == {}
    assert store.get_artifacts(A, [2]) == {}
    assert [e.id for e in store.iter_entities(A)] == [1, 2, 3]
    assert store.get_entities(A, [2])[2].description == "an engineer"
    assert store.keyword_hits(A, ["carpenter"], 5) == []
    ds = store.get_dataset(A)
    assert ds is not None and (ds.entities, ds.edges, ds.artifacts) == (3, 2, 1)
    # after the abort, the tables hold exactly what they held
    store.abort(A, "doomed")
    after = scan_all(store)
    for name in before:
        assert sorted(map(canon, after[name])) == sorted(map(canon, before[name])), name


def test_commit_fails_when_dataset_is_gone(store: Any) -> None:
    with pytest.raises(NotFound):
        store.commit(A, GraphWrite(txn="t", new_entities=[ent(1, "Orphan")]))
    store.abort(A, "t")
    assert store.get_entities(A, [1]) == {}


# --- tenants and deletion --------------------------------------------------------


def test_tenant_isolation(store: Any) -> None:
    seed(store, A)
    store.ensure_dataset(B)
    assert store.get_entities(B, [1, 2, 3]) == {}
    assert store.get_edges(B, [1, 2]) == {}
    assert store.get_artifacts(B, [1]) == {}
    assert store.keyword_hits(B, ["dog", "bob"], 5) == []
    assert store.recent_entities(B, 5) == []
    assert store.live_edges_around(B, [1, 2, 3], 5) == []
    assert store.entity_ids_by_names(B, ["alice smith"]) == {}
    assert store.entity_artifacts(B, 1) == [] and store.edge_artifacts(B, 1) == []
    assert list(store.iter_entities(B)) == [] and list(store.iter_edges(B)) == []
    assert list(store.iter_artifacts(B)) == []
    # B claims the same name for its own entity: independent of A
    assert store.claim_names(B, "tb", {"alice smith": 9}) == {"alice smith": 9}
    assert store.entity_ids_by_names(A, ["alice smith"]) == {"alice smith": 1}
    ds_b = store.get_dataset(B)
    assert ds_b is not None and ds_b.entities == 0


def test_delete_dataset_removes_every_row_and_nothing_else(store: Any) -> None:
    seed(store, A)
    seed(store, A2)
    seed(store, B)
    rows_before = scan_all(store)
    assert any(belongs_to(i, A) for items in rows_before.values() for i in items)
    assert store.delete_dataset(A) is True
    rows_after = scan_all(store)
    # (the datasets row stays, marked deleted: its ID counters go on)
    rows_after = {
        name: [i for i in items if i.get("deleted_at") is None]
        for name, items in rows_after.items()
    }
    for name, items in rows_after.items():
        assert not [i for i in items if belongs_to(i, A)], name
        # every other row is untouched
        others = [i for i in rows_before[name] if not belongs_to(i, A)]
        assert sorted(map(canon, items)) == sorted(map(canon, others)), name
    assert store.get_dataset(A) is None
    assert store.delete_dataset(A) is False
    assert [d.name for d in store.list_datasets("user-a")] == ["other"]
    assert sorted(store.get_entities(B, [1, 2, 3])) == [1, 2, 3]
    # the name can be used again, empty
    ds = store.ensure_dataset(A)
    assert (ds.entities, ds.edges, ds.artifacts) == (0, 0, 0)
    assert list(store.iter_entities(A)) == []
    assert store.allocate_ids(A, 1, 1, 1) == (4, 3, 2)  # IDs go on: never reused


def test_delete_dataset_of_many_rows(store: Any) -> None:
    store.ensure_dataset(A)
    store.commit(
        A,
        GraphWrite(
            new_entities=[ent(i, f"Name {i}", "word " * 3) for i in range(1, 61)],
            new_edges=[edge(i, i, i + 1) for i in range(1, 60)],
            entity_links=[(i, 1) for i in range(1, 61)],
        ),
    )
    assert store.delete_dataset(A) is True
    left = scan_all(store)
    assert all(not [i for i in items if "deleted_at" not in i] for items in left.values())


# --- fact claims -----------------------------------------------------------------


def test_fact_claims_claim_and_abort(store: Any) -> None:
    store.ensure_dataset(A)
    assert store.claim_facts(A, "t1", {"1#a#2": 10, "1#b#2": 11}) == {"1#a#2": 10, "1#b#2": 11}
    # t1 holds live leases and has not committed: t2 waits, then Busy
    with pytest.raises(Busy) as busy:
        impatient(store).claim_facts(A, "t2", {"1#a#2": 20, "1#c#2": 21})
    assert busy.value.status == 409 and busy.value.retry_after >= 1
    store.abort(A, "t2")
    store.abort(A, "t1")
    assert store.claim_facts(A, "t3", {"1#a#2": 30, "1#c#2": 31}) == {"1#a#2": 30, "1#c#2": 31}
    # another tenant's triple is its own
    store.ensure_dataset(B)
    assert store.claim_facts(B, "t4", {"1#a#2": 40}) == {"1#a#2": 40}
    # no term query can see a claim
    assert store.keyword_hits(A, ["f", "1", "a"], 10) == []


def test_a_claim_whose_call_died_is_taken_over(store: Any, tmp_path: Path) -> None:
    seed(store, A)
    if isinstance(store, SqliteGraphStore):
        dead = SqliteGraphStore(store.db)  # an earlier process, gone
    else:
        dead = DynamoGraphStore(lease_s=0.3)
    assert dead.claim_facts(A, "dead", {"9#a#9": 500}) == {"9#a#9": 500}  # never commits
    time.sleep(0.5)  # its lease ends
    assert store.claim_facts(A, "next", {"9#a#9": 502}) == {"9#a#9": 502}
    # a claim whose edge committed (and is open) is never taken over
    assert store.claim_facts(A, "other", {"1#knows#2": 503}) == {"1#knows#2": 1}


def test_commit_frees_the_claim_of_an_ended_or_superseded_edge(store: Any) -> None:
    seed(store, A)
    store.commit(
        A,
        GraphWrite(
            edge_updates=[
                EdgeUpdate(1, invalid_at="2024-06-01T00:00:00Z"),
                EdgeUpdate(2, expired_at="2024-06-01T00:00:00Z"),
            ]
        ),
    )
    assert store.claim_facts(A, "t", {"1#knows#2": 7, "2#works_at#3": 8}) == {
        "1#knows#2": 7,
        "2#works_at#3": 8,
    }


def test_delete_dataset_removes_claims(store: Any) -> None:
    seed(store, A)
    assert store.delete_dataset(A) is True
    store.ensure_dataset(A)
    assert store.claim_facts(A, "t", {"1#knows#2": 5}) == {"1#knows#2": 5}
    assert store.claim_names(A, "t", {"alice smith": 6}) == {"alice smith": 6}


def test_session_texts_newest_first_without_chunks(store: Any) -> None:
    store.ensure_dataset(A)
    store.allocate_ids(A, 0, 0, 6)
    ts = "2024-01-01T00:00:00Z"
    arts = [
        Artifact(1, "first", ts, ts, session_id="s1"),
        Artifact(2, "other session", ts, ts, session_id="s2"),
        Artifact(3, "second, long", ts, ts, session_id="s1"),
        Artifact(4, "a chunk of it", ts, ts, session_id="s1", parent_id=3, index=0),
        Artifact(5, "no session", ts, ts),
        Artifact(6, "third", ts, ts, session_id="s1"),
    ]
    store.commit(A, GraphWrite(artifacts=arts))
    assert [a.text for a in store.session_texts(A, "s1", 5)] == ["third", "second, long", "first"]
    assert [a.id for a in store.session_texts(A, "s1", 2)] == [6, 3]
    assert [a.id for a in store.session_texts(A, "s1", 5, before=6)] == [3, 1]
    assert store.session_texts(B, "s1", 5) == []  # another user's session of the same name
    assert store.session_texts(A, "s3", 5) == []


# --- browse pages: every cursor of the OpenAPI pattern is a position ------------------


def _browse_rows(store: Any) -> None:
    store.ensure_dataset(A)
    store.allocate_ids(A, 4, 0, 4)
    ts = "2024-01-01T00:00:00Z"
    store.commit(
        A,
        GraphWrite(
            artifacts=[
                Artifact(1, "one", ts, ts, session_id="s1"),
                Artifact(2, "two", ts, ts, session_id="s2"),
                Artifact(3, "three", ts, ts, session_id="s1"),
                Artifact(4, "a chunk", ts, ts, session_id="s1", parent_id=3, index=0),
            ],
            new_entities=[
                ent(1, "One", updated_at="2024-01-03T00:00:00Z"),
                ent(2, "Two", updated_at="2024-01-01T00:00:00Z"),
                ent(3, "Three", updated_at="2024-01-03T00:00:00Z"),
                ent(4, "Four", updated_at="2024-01-02T00:00:00Z"),
            ],
        ),
    )


def test_browse_cursors_page_to_the_end_in_the_patterns_shape(store: Any) -> None:
    _browse_rows(store)
    browse = Browse(store)
    for listing, pattern, call, want in [
        ("entities", ENTITY_CURSOR, lambda c: browse.entities(A, None, 1, c), [3, 1, 4, 2]),
        ("artifacts", ARTIFACT_CURSOR, lambda c: browse.artifacts(A, None, 1, c), [3, 2, 1]),
        ("artifacts", ARTIFACT_CURSOR, lambda c: browse.artifacts(A, "s1", 1, c), [1, 3]),
    ]:
        got, cursor = [], None
        for _ in range(10):
            page = call(cursor)
            got += [row["id"] for row in page[listing]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
            assert re.fullmatch(pattern, cursor), cursor
        assert got == want, listing
    assert browse.entities(A, None, 2, None)["next_cursor"] == "e2024-01-03T00:00:00Z_000000000001"
    assert browse.artifacts(A, None, 1, None)["next_cursor"] == "a3"


@pytest.mark.parametrize(
    ("cursor", "want"),
    [
        ("e_000000000000", []),
        ("e0000-00-00T00:00:00Z_000000000000", []),
        ("e9999-99-99T99:99:99Z_999999999999999999", [3, 1, 4, 2]),
        ("e2024-01-03T00:00:00Z_000000000003", [1, 4, 2]),
        ("e2024-01-03T00:00:00Z_999999999999999999", [3, 1, 4, 2]),
        ("e2024-01-02T12:00:00Z_000000000001", [4, 2]),
    ],
)
def test_any_entity_cursor_of_the_pattern_is_a_position(
    store: Any, cursor: str, want: list[int]
) -> None:
    assert re.fullmatch(ENTITY_CURSOR, cursor)
    _browse_rows(store)
    page = Browse(store).entities(A, None, 10, cursor)
    assert [e["id"] for e in page["entities"]] == want and page["next_cursor"] is None


@pytest.mark.parametrize(
    ("cursor", "texts", "session"),
    [
        ("a1", [], [3]),
        ("a2", [1], [3]),
        ("a3", [2, 1], []),
        ("a999999999999999999", [3, 2, 1], []),
    ],
)
def test_any_artifact_cursor_of_the_pattern_is_a_position(
    store: Any, cursor: str, texts: list[int], session: list[int]
) -> None:
    """One shape for both orders: the dataset's texts newest first (before
    the ID), a session's in the order said (after it)."""
    assert re.fullmatch(ARTIFACT_CURSOR, cursor)
    _browse_rows(store)
    browse = Browse(store)
    assert [a["id"] for a in browse.artifacts(A, None, 10, cursor)["artifacts"]] == texts
    assert [a["id"] for a in browse.artifacts(A, "s1", 10, cursor)["artifacts"]] == session


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "e30",  # the base64url JSON cursors of before
        "eyJrIjoiYXJ0aWZhY3RzIiwicCI6MX0",
        "e2024-01-01T00:00:00Z#000000000001",  # the page key as it is stored
        "e2024-01-01T00:00:00Z_00000000001",
        "e2024-01-01T00:00:00+00:00_000000000001",
        "e2024-01-01T00:00:00Z_000000000001\n",
        "a0",
        "a01",
        "a1000000000000000000",
        "a-1",
        "i2024-01-01T00:00:00Z_" + "0" * 32,  # an inferences cursor
    ],
)
def test_a_cursor_of_another_shape_is_400(store: Any, cursor: str) -> None:
    _browse_rows(store)
    browse = Browse(store)
    for call in (
        lambda: browse.entities(A, None, 10, cursor),
        lambda: browse.entities(A, "one", 10, cursor),
        lambda: browse.artifacts(A, None, 10, cursor),
        lambda: browse.artifacts(A, "s1", 10, cursor),
    ):
        with pytest.raises(BadRequest):
            call()


def test_a_cursor_of_the_other_listing_is_400(store: Any) -> None:
    _browse_rows(store)
    browse = Browse(store)
    with pytest.raises(BadRequest):
        browse.entities(A, None, 10, "a1")
    for session in (None, "s1"):
        with pytest.raises(BadRequest):
            browse.artifacts(A, session, 10, "e2024-01-01T00:00:00Z_000000000001")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    entity=st.from_regex(ENTITY_CURSOR, fullmatch=True),
    artifact=st.from_regex(ARTIFACT_CURSOR, fullmatch=True),
)
def test_every_generated_cursor_of_the_patterns_pages(
    store: Any, entity: str, artifact: str
) -> None:
    """What a schema-driven client (schemathesis) makes of the patterns: each
    string a page on both stores, never an error."""
    if store.get_dataset(A) is None:
        _browse_rows(store)
    browse = Browse(store)
    for q in (None, "one"):
        page = browse.entities(A, q, 10, entity)
        assert page["next_cursor"] is None
    for session in (None, "s1"):
        page = browse.artifacts(A, session, 10, artifact)
        assert page["next_cursor"] is None
