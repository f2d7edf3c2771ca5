"""DynamoGraphStore against moto: every GraphStore method, tenant isolation,
concurrency of the conditional writes, apply's rollback, delete_dataset."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest

from gligabao.errors import Busy, NotFound, UpstreamError
from gligabao.graph import tables
from gligabao.graph.dynamo import DynamoGraphStore
from gligabao.models import (
    Artifact,
    DatasetKey,
    Edge,
    EdgeUpdate,
    Entity,
    EntityUpdate,
    GraphWrite,
)

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


@pytest.fixture
def store(dynamo: str) -> Iterator[DynamoGraphStore]:
    s = DynamoGraphStore()
    yield s
    s.close()


@pytest.fixture
def server_store(dynamo_server: str) -> Iterator[DynamoGraphStore]:
    s = DynamoGraphStore()
    yield s
    s.close()


def seed(store: DynamoGraphStore, key: DatasetKey) -> None:
    """Alice(1) -knows-> Bob(2), Bob -works_at-> Acme(3); artifact 1."""
    store.ensure_dataset(key)
    store.allocate_ids(key, 3, 2, 1)
    txn = f"seed-{key.user_id}-{key.dataset}"
    store.claim_names(key, txn, {"alice smith": 1, "bob": 2, "acme corp": 3})
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


def scan_all(prefix: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table (boto3 straight, not the adapter)."""
    client = boto3.client("dynamodb", region_name="us-east-1")
    out: dict[str, list[dict[str, Any]]] = {}
    for model in tables.ALL_MODELS:
        name = model.Meta.table_name
        assert name.startswith(prefix)
        items: list[dict[str, Any]] = []
        for page in client.get_paginator("scan").paginate(TableName=name):
            items.extend(page["Items"])
        out[tables.short_name(model)] = items
    return out


def belongs_to(item: dict[str, Any], key: DatasetKey) -> bool:
    if "pk" in item:
        return item["pk"]["S"] == key.pk
    if "name" in item and "user_id" in item:  # datasets
        return item["user_id"]["S"] == key.user_id and item["name"]["S"] == key.dataset
    return False


# --- tables ----------------------------------------------------------------------


def test_table_definitions_match_created_tables(dynamo: str) -> None:
    defs = tables.table_definitions()
    assert set(defs) >= {
        "datasets",
        "entities",
        "names",
        "terms",
        "edges",
        "artifacts",
        "links",
        "calls",
        "inferences",
    }
    client = boto3.client("dynamodb", region_name="us-east-1")
    for short, props in defs.items():
        desc = client.describe_table(TableName=dynamo + short)["Table"]
        assert desc["KeySchema"] == props["KeySchema"]
        assert desc["KeySchema"][0]["KeyType"] == "HASH"
        assert (
            sorted(desc["AttributeDefinitions"], key=lambda a: a["AttributeName"])
            == (props["AttributeDefinitions"])
        )
        gsis = sorted(desc.get("GlobalSecondaryIndexes", []), key=lambda g: g["IndexName"])
        assert [g["IndexName"] for g in gsis] == [
            g["IndexName"] for g in props.get("GlobalSecondaryIndexes", [])
        ]
        for got, want in zip(gsis, props.get("GlobalSecondaryIndexes", []), strict=True):
            assert got["KeySchema"] == want["KeySchema"]
            assert got["Projection"]["ProjectionType"] == want["Projection"]["ProjectionType"]
    assert defs["edges"]["GlobalSecondaryIndexes"][0]["IndexName"] == "live_by_source"
    assert defs["calls"]["TimeToLiveSpecification"]["AttributeName"] == "expires_at"


def test_configure_tables_switches_prefix_and_can_be_called_again(dynamo: str) -> None:
    tables.configure_tables("other_", "http://localhost:1", "eu-west-1")
    assert tables.EntityRow.Meta.table_name == "other_entities"
    assert tables.EntityRow.Meta.host == "http://localhost:1"
    assert tables.EntityRow.Meta.region == "eu-west-1"
    assert tables.EntityRow._connection is None
    tables.configure_tables(dynamo, "", "us-east-1")
    assert tables.EntityRow.Meta.host is None
    assert tables.CallRow.Meta.table_name == dynamo + "calls"
    assert tables.create_tables() == []  # all exist


# --- datasets --------------------------------------------------------------------


def test_datasets_lifecycle(store: DynamoGraphStore) -> None:
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


def test_ensure_dataset_concurrent_creates_once(server_store: DynamoGraphStore) -> None:
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda _: server_store.ensure_dataset(A), range(8)))
    assert len({d.created_at for d in got}) == 1
    assert len(server_store.list_datasets(A.user_id)) == 1


def test_allocate_ids_blocks(store: DynamoGraphStore) -> None:
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


def test_allocate_ids_monotonic_under_concurrency(server_store: DynamoGraphStore) -> None:
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


def test_apply_writes_rows_links_and_counts(store: DynamoGraphStore) -> None:
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


def test_round_trip_of_optional_fields(store: DynamoGraphStore) -> None:
    store.ensure_dataset(A)
    a = Artifact(5, "chunk", "t1", "t0", session_id=None, parent_id=4, index=2, call_id="c1")
    e = ent(7, "Paris", lat=48.8566, lon=2.3522)
    d = Edge(9, 7, 7, "is", "", None, "2020-01-01T00:00:00Z", "2021-01-01T00:00:00Z", "t", None)
    store.commit(A, GraphWrite(artifacts=[a], new_entities=[e], new_edges=[d]))
    assert store.get_artifacts(A, [5])[5] == a
    assert store.get_entities(A, [7])[7] == e
    assert store.get_edges(A, [9])[9] == d


def test_batches_over_page_limits(store: DynamoGraphStore) -> None:
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


def test_keyword_hits_newest_first_with_cap_and_flags(store: DynamoGraphStore) -> None:
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


def test_keyword_hits_one_query_per_term(store: DynamoGraphStore) -> None:
    seed(store, A)
    before = tables.REQUESTS.snapshot()
    store.keyword_hits(A, ["dog", "bob", "acme", "zzz"], per_term=3)
    after = tables.REQUESTS.snapshot()
    assert after.get("Query", 0) - before.get("Query", 0) == 4
    assert sum(after.values()) - sum(before.values()) == 4


def test_recent_entities(store: DynamoGraphStore) -> None:
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


def test_updated_entity_rewrites_terms_and_recency(store: DynamoGraphStore) -> None:
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


def test_live_edges_around(store: DynamoGraphStore) -> None:
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


def test_names_claim_lookup_release(store: DynamoGraphStore) -> None:
    store.ensure_dataset(A)
    assert store.claim_names(A, "t1", {"alice": 1, "bob": 2}) == {"alice": 1, "bob": 2}
    assert store.entity_ids_by_names(A, ["alice", "bob"]) == {}  # leases, not committed
    store.commit(A, GraphWrite(txn="t1", new_entities=[ent(1, "Alice"), ent(2, "Bob")]))
    assert store.entity_ids_by_names(A, ["alice", "bob"]) == {"alice": 1, "bob": 2}
    assert store.claim_names(A, "t2", {"alice": 7, "carol": 8}) == {"alice": 1, "carol": 8}
    store.abort(A, "t2")  # alice is not t2's: kept; carol is released
    assert store.entity_ids_by_names(A, ["alice", "carol"]) == {"alice": 1}
    assert store.claim_names(A, "t3", {"carol": 9}) == {"carol": 9}
    assert store.entity_ids_by_names(A, []) == {}
    assert store.entity_ids_by_names(B, ["alice"]) == {}


def test_claim_names_concurrent_single_winner(dynamo_server: str) -> None:
    impatient = DynamoGraphStore(lease_wait_s=0.3)
    impatient.ensure_dataset(A)
    start = threading.Barrier(8)

    def claim(i: int) -> dict[str, int] | int:
        start.wait()
        try:
            return impatient.claim_names(A, f"t{i}", {"same name": 100 + i, f"own {i}": 100 + i})
        except Busy as exc:  # the winner holds a live lease and never commits
            return exc.retry_after

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(claim, range(8)))
    impatient.close()
    won = [r for r in results if isinstance(r, dict)]
    assert len(won) == 1, results
    assert all(isinstance(r, int) and r >= 1 for r in results if r not in won)


def test_iterators(store: DynamoGraphStore) -> None:
    seed(store, A)
    seed(store, A2)
    assert [e.id for e in store.iter_entities(A)] == [1, 2, 3]
    assert [e.id for e in store.iter_edges(A)] == [1, 2]
    assert [a.id for a in store.iter_artifacts(A)] == [1]
    assert list(store.iter_entities(B)) == []


# --- apply failures --------------------------------------------------------------


def test_a_commit_that_fails_is_invisible_and_abort_removes_it(
    store: DynamoGraphStore, dynamo: str
) -> None:
    seed(store, A)
    before = scan_all(dynamo)
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
    # its rows landed, tagged, but no reader sees them
    assert store.get_entities(A, [4]) == {} and store.get_edges(A, [3]) == {}
    assert store.get_artifacts(A, [2]) == {}
    assert [e.id for e in store.iter_entities(A)] == [1, 2, 3]
    assert [e.id for e in store.live_edges_around(A, [2], 10)] == [2, 1]
    assert store.get_entities(A, [2])[2].description == "an engineer"
    ds = store.get_dataset(A)
    assert ds is not None and (ds.entities, ds.edges, ds.artifacts) == (3, 2, 1)
    # abort removes them: the tables hold exactly what they held
    store.abort(A, "doomed")
    after = scan_all(dynamo)
    for name in before:
        key = tables.table_definitions()[name]["KeySchema"]
        ids = [k["AttributeName"] for k in key]

        def keyed(items: list[dict[str, Any]], ids: list[str] = ids) -> dict[str, Any]:
            return {repr([i[k] for k in ids]): i for i in items}

        assert keyed(after[name]) == keyed(before[name]), name


def test_commit_fails_when_dataset_is_gone(store: DynamoGraphStore) -> None:
    with pytest.raises(NotFound):
        store.commit(A, GraphWrite(txn="t", new_entities=[ent(1, "Orphan")]))
    assert store.get_entities(A, [1]) == {}
    store.abort(A, "t")
    assert store.get_entities(A, [1]) == {}


def test_store_errors_are_upstream_errors(store: DynamoGraphStore) -> None:
    tables.EntityRow.delete_table()
    with pytest.raises(UpstreamError, match="get_entities"):
        store.get_entities(A, [1])
    with pytest.raises(UpstreamError):
        list(store.iter_entities(A))
    with pytest.raises(UpstreamError):
        store.recent_entities(A, 3)
    # "not found" is not an error
    assert store.get_dataset(A) is None


# --- tenants and deletion --------------------------------------------------------


def test_tenant_isolation(store: DynamoGraphStore) -> None:
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


def test_delete_dataset_removes_every_row_and_nothing_else(
    store: DynamoGraphStore, dynamo: str
) -> None:
    seed(store, A)
    seed(store, A2)
    seed(store, B)
    rows_before = scan_all(dynamo)
    assert any(belongs_to(i, A) for items in rows_before.values() for i in items)
    assert store.delete_dataset(A) is True
    rows_after = scan_all(dynamo)
    # the datasets row stays, marked deleted: its ID counters go on
    [kept] = [i for i in rows_after.pop("datasets") if belongs_to(i, A)]
    assert "deleted_at" in kept and kept["next_entity"] == {"N": "3"}
    rows_before["datasets"] = [i for i in rows_before["datasets"] if not belongs_to(i, A)]
    for name, items in rows_after.items():
        assert not [i for i in items if belongs_to(i, A)], name
        # every other row is untouched
        others = [i for i in rows_before[name] if not belongs_to(i, A)]
        assert sorted(map(repr, items)) == sorted(map(repr, others)), name
    others = [i for i in scan_all(dynamo)["datasets"] if not belongs_to(i, A)]
    assert sorted(map(repr, others)) == sorted(map(repr, rows_before["datasets"]))
    assert store.get_dataset(A) is None
    assert store.delete_dataset(A) is False
    assert [d.name for d in store.list_datasets("user-a")] == ["other"]
    assert sorted(store.get_entities(B, [1, 2, 3])) == [1, 2, 3]
    # the name can be used again: empty, and its IDs go on (never reused)
    ds = store.ensure_dataset(A)
    assert (ds.entities, ds.edges, ds.artifacts) == (0, 0, 0)
    assert store.allocate_ids(A, 1, 1, 1) == (4, 3, 2)
    assert list(store.iter_entities(A)) == []
    assert [d.name for d in store.list_datasets("user-a")] == sorted([A.dataset, "other"])


def test_delete_dataset_of_many_rows(store: DynamoGraphStore, dynamo: str) -> None:
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
    left = scan_all(dynamo)
    assert [i["name"]["S"] for i in left.pop("datasets")] == ["main"]  # marked deleted
    assert all(not items for items in left.values())


def test_request_counts_of_apply(store: DynamoGraphStore) -> None:
    store.ensure_dataset(A)
    before = tables.REQUESTS.total
    store.commit(
        A,
        GraphWrite(
            artifacts=[art(1)],
            new_entities=[ent(1, "Alice")],
            new_edges=[edge(1, 1, 1)],
            entity_links=[(1, 1)],
        ),
    )
    used = tables.REQUESTS.total - before
    # the commit protocol: 1 Query for leftovers, the pending record, 3 pages
    # (moto refuses (pk, 1) of two tables in one batch page), the transaction,
    # 3 tags off, the record deleted
    assert used <= 10
    assert store.requests == tables.REQUESTS.total
