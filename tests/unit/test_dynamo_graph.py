"""DynamoGraphStore details the contract suite does not cover: the table
definitions, configure_tables, request counts, and errors of a missing table."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from gligabao.dynamodb import admin, tables
from gligabao.dynamodb.client import REQUESTS
from gligabao.errors import UpstreamError
from gligabao.graph.dynamodb.store import DynamoGraphStore
from gligabao.models import Artifact, DatasetKey, Edge, Entity, GraphWrite

A = DatasetKey("user-a", "main")


@pytest.fixture
def store(dynamo: str) -> Iterator[DynamoGraphStore]:
    s = DynamoGraphStore()
    yield s
    s.close()


# --- tables ----------------------------------------------------------------------


def test_table_definitions_match_created_tables(dynamo: str) -> None:
    defs = admin.table_definitions()
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
    assert {g["IndexName"] for g in defs["edges"]["GlobalSecondaryIndexes"]} == {
        "live_by_source",
        "live_by_target",
        "expired_by_source",
        "expired_by_target",
    }
    assert defs["calls"]["TimeToLiveSpecification"]["AttributeName"] == "expires_at"


def test_configure_tables_switches_prefix_and_can_be_called_again(dynamo: str) -> None:
    admin.configure_tables("other_", "http://localhost:1", "eu-west-1")
    assert tables.EntityRow.Meta.table_name == "other_entities"
    assert tables.EntityRow.Meta.host == "http://localhost:1"
    assert tables.EntityRow.Meta.region == "eu-west-1"
    assert tables.EntityRow._connection is None
    admin.configure_tables(dynamo, "", "us-east-1")
    assert tables.EntityRow.Meta.host is None
    assert tables.CallRow.Meta.table_name == dynamo + "calls"
    assert admin.create_tables() == []  # all exist


def seed(store: DynamoGraphStore, key: DatasetKey) -> None:
    store.ensure_dataset(key)
    store.commit(
        key,
        GraphWrite(
            new_entities=[
                Entity(1, "Alice", "person", "a dog lover", "t", "t"),
                Entity(2, "Bob", "person", "", "t", "t"),
                Entity(3, "Acme", "org", "dog food", "t", "t"),
            ]
        ),
    )


def art(i: int) -> Artifact:
    return Artifact(i, "text", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z")


def ent(i: int, name: str) -> Entity:
    return Entity(i, name, "thing", "", "t", "t")


def edge(i: int, src: int, dst: int) -> Edge:
    return Edge(i, src, dst, "knows", created_at="t")


def test_keyword_hits_one_query_per_term(store: Any) -> None:
    seed(store, A)
    before = REQUESTS.snapshot()
    store.keyword_hits(A, ["dog", "bob", "acme", "zzz"], per_term=3)
    after = REQUESTS.snapshot()
    assert after.get("Query", 0) - before.get("Query", 0) == 4
    assert sum(after.values()) - sum(before.values()) == 4


def test_request_counts_of_commit(store: Any) -> None:
    store.ensure_dataset(A)
    before = REQUESTS.total
    store.commit(
        A,
        GraphWrite(
            artifacts=[art(1)],
            new_entities=[ent(1, "Alice")],
            new_edges=[edge(1, 1, 1)],
            entity_links=[(1, 1)],
        ),
    )
    used = REQUESTS.total - before
    # the commit protocol: 1 Query for leftovers, the pending record, 3 pages
    # (moto refuses (pk, 1) of two tables in one batch page), the transaction,
    # 3 tags off, the record deleted
    assert used <= 10
    assert store.requests == REQUESTS.total


def test_store_errors_are_upstream_errors(store: Any) -> None:
    tables.EntityRow.delete_table()
    with pytest.raises(UpstreamError, match="get_entities"):
        store.get_entities(A, [1])
    with pytest.raises(UpstreamError):
        list(store.iter_entities(A))
    with pytest.raises(UpstreamError):
        store.recent_entities(A, 3)
    # "not found" is not an error
    assert store.get_dataset(A) is None
