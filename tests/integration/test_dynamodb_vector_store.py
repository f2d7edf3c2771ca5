"""VectorStore=dynamodb beyond the port's contract: the index's replication
lag (a row committed a moment ago is found, a fact superseded a moment ago is
not among the live ones), the SDK check at cold start, throttling, reindex
embedding only what lacks a vector, and remember -> query through the API."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from dynamo_fixtures import dynamo_vector_index, vector_tables_on

from conftest import Harness
from fakes.vector_rules import DynamoError
from gligabao.errors import UpstreamError
from gligabao.models import DatasetKey, VectorItem
from gligabao.vectors.port import KINDS, SearchRequest

DIM = 4


def e(i: int) -> list[float]:
    v = [0.0] * DIM
    v[i] = 1.0
    return v


@pytest.fixture
def fake(dynamo_vectors_fake: Any, aws_env: None) -> Iterator[Any]:
    for _ in vector_tables_on(dynamo_vectors_fake, DIM):
        yield dynamo_vectors_fake
    dynamo_vectors_fake.lag_s = 0.0
    dynamo_vectors_fake.faults.clear()


def new_key() -> DatasetKey:
    return DatasetKey(f"u-{uuid.uuid4().hex[:10]}", "main")


def write_edge(key: DatasetKey, edge_id: int, vector: list[float], live: bool = True) -> None:
    """An edge row with its vector, as the graph's commit writes one."""
    from gligabao.dynamodb.tables import EdgeRow
    from gligabao.graph.dynamodb.vector_rows import inline_vectors

    row = EdgeRow(
        key.pk, edge_id, source_id=1, target_id=2, relation="r", vstate="live" if live else "gone"
    )
    inline_vectors(key.pk, [row], {"edges": [VectorItem(edge_id, vector)]}, time.time())
    row.save()


def supersede(key: DatasetKey, edge_id: int) -> None:
    """What the commit does to a superseded edge: the full put, the vector
    kept, written now (graph/vector_rows.keep_vectors)."""
    from gligabao.dynamodb.tables import EdgeRow
    from gligabao.graph.dynamodb.rows import edge_from_row, edge_row
    from gligabao.graph.dynamodb.vector_rows import keep_vectors

    read = EdgeRow.get(key.pk, edge_id, consistent_read=True)
    gone = edge_from_row(read)
    gone.expired_at = "2026-01-01T00:00:00Z"
    keep_vectors(edge_row(key.pk, gone), read, time.time()).save()


def ids(hits: list[Any]) -> list[int]:
    return [h.id for h in hits]


def test_a_row_written_a_moment_ago_is_found_before_the_index_has_it(fake: Any) -> None:
    fake.lag_s = 60.0  # the index gets nothing during the test
    index = dynamo_vector_index(DIM)
    key = new_key()
    write_edge(key, 1, e(0))
    [hits] = index.search(key, [SearchRequest("edges", e(0), 5, 0.5)])
    assert ids(hits) == [1] and hits[0].score == pytest.approx(1.0)
    assert fake.pending() >= 1  # the index itself did not have it
    # Without the newest rows (a lag of 0 covered) the same search misses it.
    blind = dynamo_vector_index(DIM, lag_s=0.0)
    assert blind.search(key, [SearchRequest("edges", e(0), 5, 0.5)]) == [[]]
    fake.flush()
    assert ids(blind.search(key, [SearchRequest("edges", e(0), 5, 0.5)])[0]) == [1]


def test_a_fact_superseded_a_moment_ago_is_not_among_the_live_ones(fake: Any) -> None:
    index = dynamo_vector_index(DIM)
    key = new_key()
    write_edge(key, 1, e(0))
    write_edge(key, 2, [0.9, 0.1, 0.0, 0.0])
    fake.lag_s = 60.0
    supersede(key, 1)  # the index still has edge 1 as live
    live, every = index.search(
        key,
        [SearchRequest("edges", e(0), 5, 0.5, live=True), SearchRequest("edges", e(0), 5, 0.5)],
    )
    assert ids(live) == [2]
    assert ids(every) == [1, 2]  # as_of questions still find it
    fake.flush()  # once replicated, the index's own filter leaves it out
    blind = dynamo_vector_index(DIM, lag_s=0.0)
    assert ids(blind.search(key, [SearchRequest("edges", e(0), 5, 0.5, live=True)])[0]) == [2]


def test_searches_filter_inside_the_index_so_k_live_facts_come_back(fake: Any) -> None:
    index = dynamo_vector_index(DIM, lag_s=0.0)
    key = new_key()
    for i in range(1, 31):  # many closer superseded facts
        write_edge(key, i, e(0), live=False)
    write_edge(key, 40, [0.5, 0.5, 0.0, 0.0])
    write_edge(key, 41, [0.4, 0.6, 0.0, 0.0])
    [hits] = index.search(key, [SearchRequest("edges", e(0), 2, 0.0, live=True)])
    assert ids(hits) == [40, 41]


def test_cold_start_fails_clearly_without_search_vectors() -> None:
    from gligabao.vectors.dynamodb.index import DynamoVectorIndex

    class OldClient:  # a botocore that predates vector indexes
        pass

    with pytest.raises(RuntimeError, match=r"SearchVectors.*botocore"):
        DynamoVectorIndex(OldClient(), {}, DIM)


def test_throttling_is_retried_and_a_failure_is_an_upstream_error(fake: Any) -> None:
    index = dynamo_vector_index(DIM, lag_s=0.0)
    key = new_key()
    write_edge(key, 1, e(0))
    fake.faults.add(DynamoError("ThrottlingException", "Rate exceeded"), stage="SearchVectors")
    assert ids(index.search(key, [SearchRequest("edges", e(0), 5, 0.5)])[0]) == [1]
    fake.faults.add(
        DynamoError("InternalServerError", "boom", 500), stage="SearchVectors", times=20
    )
    with pytest.raises(UpstreamError):
        index.search(key, [SearchRequest("edges", e(0), 5, 0.5)])


@pytest.fixture
def gb_store() -> str:
    return "dynamodb"


def test_remember_then_query_on_the_dynamodb_store(gb: Harness, dynamo_vectors_fake: Any) -> None:
    from gligabao.vectors.dynamodb.index import DynamoVectorIndex

    assert isinstance(gb.vectors, DynamoVectorIndex)
    gb.llm.default(
        "extract",
        {
            "entities": [
                {"name": "Alice", "type": "person"},
                {"name": "Acme", "type": "organization"},
            ],
            "edges": [
                {
                    "source": "Alice",
                    "target": "Acme",
                    "relation": "works_at",
                    "description": "Alice works at Acme.",
                }
            ],
        },
    )
    dynamo_vectors_fake.lag_s = 60.0  # a query right after the remember: nothing replicated
    gb.remember("Alice works at Acme.")
    key = DatasetKey("u1", "main")
    assert {k: gb.vectors.count(key, k) for k in KINDS} == {
        "entities": 2,
        "edges": 1,
        "chunks": 1,
        "summaries": 0,
    }
    r = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": "Where does Alice work?"})
    assert r.status == 200, r.body
    assert [e["relation"] for e in r.body["edges"]] == ["works_at"]
    assert r.body["passages"], r.body
    dynamo_vectors_fake.flush()


def test_reindex_embeds_only_the_rows_without_a_vector(
    gb: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    from gligabao.local.cli import main

    gb.llm.default(
        "extract",
        {
            "entities": [
                {"name": "Alice", "type": "person"},
                {"name": "Acme", "type": "organization"},
            ],
            "edges": [
                {
                    "source": "Alice",
                    "target": "Acme",
                    "relation": "works_at",
                    "description": "Alice works at Acme.",
                }
            ],
        },
    )
    gb.remember("Alice works at Acme.")
    key = DatasetKey("u1", "main")
    before = {k: gb.vectors.count(key, k) for k in KINDS}
    capsys.readouterr()
    assert main(["reindex", "--user", "u1", "--dataset", "main"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        "entities=0 edges=0 chunks=0 summaries=0"
    )
    # A stack that kept its vectors elsewhere (OpenSearch): rows without one.
    gb.vectors.delete_dataset(key)
    assert all(gb.vectors.count(key, k) == 0 for k in KINDS)
    sent = gb.emb.calls()
    assert main(["reindex", "--user", "u1", "--dataset", "main"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        "entities=2 edges=1 chunks=1 summaries=0"
    )
    assert {k: gb.vectors.count(key, k) for k in KINDS} == before
    assert gb.emb.calls() == sent + 3  # one batch a kind that lacked vectors


def test_a_backfilling_index_is_searched_around(fake: Any) -> None:
    """A move from OpenSearch adds the indexes to tables with rows: while one
    backfills, SearchVectors refuses, and the search answers without it."""
    from gligabao.dynamodb.vectors import filter_definitions, index_specs

    index = dynamo_vector_index(DIM)
    key = new_key()
    write_edge(key, 1, e(0))
    table = index.tables["edges"]
    index.client.update_table(
        TableName=table, VectorIndexUpdates=[{"Delete": {"IndexName": "edges"}}]
    )
    fake.backfill_s = 30.0
    try:
        index.client.update_table(
            TableName=table,
            AttributeDefinitions=filter_definitions()["edges"],
            VectorIndexUpdates=[{"Create": index_specs(DIM)["edges"][0]}],
        )
    finally:
        fake.backfill_s = 0.0
    [hits] = index.search(key, [SearchRequest("edges", e(0), 5, 0.5)])
    assert ids(hits) == [1]  # the newest rows found it; no error
