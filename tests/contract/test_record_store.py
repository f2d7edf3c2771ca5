"""The RecordStore contract on both adapters (DynamoRecordStore on moto,
SqliteRecordStore on a fresh file): calls, inference listing (newest first,
filters, cursor pagination), tenant isolation, dataset deletion, retention."""

from __future__ import annotations

import random
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dynamo_fixtures import dynamodb_client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gligabao.dynamodb import tables
from gligabao.dynamodb.client import REQUESTS
from gligabao.errors import BadRequest, UpstreamError
from gligabao.records.codec import INFERENCE_CURSOR
from gligabao.records.dynamodb.store import DynamoRecordStore, decode_cursor, encode_cursor
from gligabao.records.model import CallRecord, Inference, Step
from gligabao.records.sqlite.store import SqliteRecordStore
from gligabao.sqlite.db import Database


@pytest.fixture(params=["dynamodb", "dynamodb-process", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        db = Database(tmp_path / "gligabao.db")
        yield SqliteRecordStore(db)
        db.close()
        return
    # "dynamodb-process": moto's server in another process, as under `sam local`
    # (this process cannot tell that moto answers).
    request.getfixturevalue("dynamo" if request.param == "dynamodb" else "dynamo_process")
    yield DynamoRecordStore()


def raw_rows(store: Any, short: str) -> list[dict[str, Any]]:
    """A table's rows read around the adapter, values as plain strings."""
    if isinstance(store, SqliteRecordStore):
        with sqlite3.connect(store.db.path) as conn:
            cur = conn.execute(f"SELECT * FROM {short}")
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, r, strict=True)) for r in cur]
    name = tables.CallRow.Meta.table_name.removesuffix("calls") + short
    items = dynamodb_client().scan(TableName=name)["Items"]
    return [{k: next(iter(v.values())) for k, v in i.items()} for i in items]


def inf(
    n: int,
    user: str = "u1",
    dataset: str = "main",
    session: str | None = "s1",
    call: str = "c1",
    stage: str = "extract",
) -> Inference:
    return Inference(
        id=f"{n:032x}",
        user_id=user,
        dataset=dataset,
        session_id=session,
        call_id=call,
        type="remember",
        stage=stage,
        model="claude-haiku-5-5",
        reasoning=f"because {n}",
        input_tokens=100 + n,
        output_tokens=10 + n,
        thinking_tokens=None if n % 2 else n,
        cost_usd=0.000123 * n,
        latency_ms=50 + n,
        status="ok",
        created_at=f"2024-01-01T00:{n // 60:02d}:{n % 60:02d}Z",
        provider="anthropic" if n % 3 else "local",
    )


def call(
    call_id: str, infs: list[Inference], user: str = "u1", dataset: str = "main"
) -> CallRecord:
    c = CallRecord(call_id, "remember", user, dataset, "s1", "2024-01-01T00:00:00Z")
    c.steps = [Step("extract", 12.5, {"entities": 3}), Step("write", 3.25)]
    c.inferences = infs
    c.finish("ok")
    return c


def save_many(store: Any, count: int = 40) -> list[Inference]:
    """Inferences over 2 datasets, 2 sessions and several calls."""
    out: list[Inference] = []
    for n in range(1, count + 1):
        out.append(
            inf(
                n,
                dataset="main" if n % 3 else "other",
                session="s1" if n % 2 else "s2",
                call=f"c{n // 5}",
            )
        )
    by_call: dict[str, list[Inference]] = {}
    for i in out:
        by_call.setdefault(i.call_id, []).append(i)
    for cid, infs in by_call.items():
        store.save_call(call(cid, infs, dataset=infs[0].dataset))
    return out


def test_save_and_get_call(store: Any) -> None:
    infs = [inf(1, stage="extract"), inf(2, stage="embed"), inf(3, stage="resolve")]
    c = call("call-1", infs)
    c.session_id = None
    store.save_call(c)
    got = store.get_call("u1", "call-1")
    assert got is not None
    assert got.public() == c.public()
    assert got.inferences == infs
    assert got.steps[0].counts == {"entities": 3}
    assert got.totals() == c.totals()
    assert store.get_call("u1", "nope") is None
    assert store.get_call("u2", "call-1") is None  # another user


def test_call_without_inferences(store: Any) -> None:
    c = call("call-0", [])
    c.finish("rate limited")
    store.save_call(c)
    got = store.get_call("u1", "call-0")
    assert got is not None and got.inferences == [] and got.status == "rate limited"


def test_call_result_round_trips_and_an_oversized_one_is_left_out(
    store: Any,
) -> None:
    from gligabao.records.dynamodb.store import MAX_RESULT_BYTES

    c = call("call-r", [])
    assert store.get_call("u1", "call-r") is None
    c.result = {"artifact_id": 1, "entities": [], "edges": [], "invalidated": [], "chunks": 0}
    store.save_call(c)
    got = store.get_call("u1", "call-r")
    assert got is not None and got.result == c.result
    assert got.public()["result"] == c.result
    c.result = {"text": "x" * MAX_RESULT_BYTES}
    store.save_call(c)
    got = store.get_call("u1", "call-r")
    assert got is not None and got.result is None and got.status == "ok"


def test_list_inferences_newest_first_and_filters(store: Any) -> None:
    saved = save_many(store, 40)
    newest_first = sorted(saved, key=lambda i: (i.created_at, i.id), reverse=True)

    got, cursor = store.list_inferences(
        "u1", dataset=None, session_id=None, call_id=None, limit=100, cursor=None
    )
    assert got == newest_first and cursor is None

    got, _ = store.list_inferences(
        "u1", dataset="other", session_id=None, call_id=None, limit=100, cursor=None
    )
    assert got == [i for i in newest_first if i.dataset == "other"]

    got, _ = store.list_inferences(
        "u1", dataset="main", session_id="s2", call_id=None, limit=100, cursor=None
    )
    assert got == [i for i in newest_first if i.dataset == "main" and i.session_id == "s2"]

    got, _ = store.list_inferences(
        "u1", dataset=None, session_id=None, call_id="c3", limit=100, cursor=None
    )
    assert got == [i for i in newest_first if i.call_id == "c3"] and len(got) == 5

    got, cursor = store.list_inferences(
        "u1", dataset="nope", session_id=None, call_id=None, limit=10, cursor=None
    )
    assert got == [] and cursor is None


@pytest.mark.parametrize("limit", [1, 3, 7, 13, 39, 40])
@pytest.mark.parametrize("dataset", [None, "main", "other"])
def test_pagination_returns_each_item_exactly_once(
    store: Any, limit: int, dataset: str | None
) -> None:
    saved = save_many(store, 40)
    want = sorted(
        (i for i in saved if dataset is None or i.dataset == dataset),
        key=lambda i: (i.created_at, i.id),
        reverse=True,
    )
    got: list[Inference] = []
    cursor: str | None = None
    pages = 0
    while True:
        page, cursor = store.list_inferences(
            "u1", dataset=dataset, session_id=None, call_id=None, limit=limit, cursor=cursor
        )
        pages += 1
        assert len(page) <= limit
        got.extend(page)
        if cursor is None:
            break
        assert page, "a cursor never comes with an empty page"
        assert pages < 100
    assert got == want
    assert pages == max(1, -(-len(want) // limit))


def test_cursor_is_the_sort_key_validated_and_scoped_to_the_user(store: Any) -> None:
    save_many(store, 10)
    store.save_call(call("cb", [inf(n, user="u2") for n in range(1, 4)], user="u2"))
    page, cursor = store.list_inferences(
        "u1", dataset=None, session_id=None, call_id=None, limit=2, cursor=None
    )
    last = page[-1]
    assert (
        cursor == f"i{last.created_at}_{last.id}" == encode_cursor(f"{last.created_at}#{last.id}")
    )
    assert decode_cursor(cursor) == f"{last.created_at}#{last.id}"
    # u1's cursor used by u2 reads u2's rows only
    other, _ = store.list_inferences(
        "u2", dataset=None, session_id=None, call_id=None, limit=10, cursor=cursor
    )
    assert all(i.user_id == "u2" for i in other)
    hexid = "0" * 32
    for bad in [
        "!!!",
        "e30",  # the base64url JSON cursors of before
        "eyJzayI6IjIwMjQtMDEtMDFUMDA6MDA6MDBaIzEifQ",
        f"2024-01-01T00:00:00Z#{hexid}",  # the sort key as it is stored
        f"i2024-01-01T00:00:00Z#{hexid}",
        f"i2024-01-01T00:00:00Z_{hexid[:-1]}",
        f"i2024-01-01T00:00:00Z_{'A' * 32}",
        f"i2024-01-01T00:00:00+00:00_{hexid}",
        f"i2024-01-01T00:00:00Z_{hexid}\n",
        "e2024-01-01T00:00:00Z_000000000001",  # an entities cursor
        "a1",  # an artifacts cursor
    ]:
        with pytest.raises(BadRequest):
            store.list_inferences(
                "u1", dataset=None, session_id=None, call_id=None, limit=2, cursor=bad
            )


@pytest.mark.parametrize(
    ("cursor", "rows"),
    [
        (f"i0000-00-00T00:00:00Z_{'0' * 32}", 0),
        (f"i9999-99-99T99:99:99Z_{'f' * 32}", 10),
        (f"i2024-01-01T00:00:05Z_{'0' * 32}", 4),
        (f"i2024-01-01T00:00:05Z_{'f' * 32}", 5),
        (f"i2024-01-01T00:00:05Z_{5:032x}", 4),
    ],
)
def test_every_cursor_of_the_pattern_is_a_position(store: Any, cursor: str, rows: int) -> None:
    """Any string of the cursor's shape (the OpenAPI pattern) pages from
    there on both stores: DynamoDB takes it as ExclusiveStartKey."""
    assert re.fullmatch(INFERENCE_CURSOR, cursor)
    save_many(store, 10)  # created 00:00:01 .. 00:00:10 (and 2 hex IDs in a second)
    page, nxt = store.list_inferences(
        "u1", dataset=None, session_id=None, call_id=None, limit=100, cursor=cursor
    )
    sk = decode_cursor(cursor)
    assert [f"{i.created_at}#{i.id}" < sk for i in page] == [True] * len(page)
    assert len(page) == rows and nxt is None


def test_tenant_isolation(store: Any) -> None:
    store.save_call(call("ca", [inf(1, user="u1")], user="u1"))
    store.save_call(call("cb", [inf(2, user="u2")], user="u2"))
    got, _ = store.list_inferences(
        "u2", dataset="main", session_id=None, call_id=None, limit=10, cursor=None
    )
    assert [i.user_id for i in got] == ["u2"]
    assert store.get_call("u2", "ca") is None


def test_delete_dataset_only_touches_that_users_dataset(store: Any) -> None:
    saved = save_many(store, 30)
    store.save_call(call("u2-call", [inf(1, user="u2", call="u2-call")], user="u2"))
    store.delete_dataset("u1", "other")
    got, _ = store.list_inferences(
        "u1", dataset=None, session_id=None, call_id=None, limit=100, cursor=None
    )
    assert {i.id for i in got} == {i.id for i in saved if i.dataset == "main"}
    for short in ("calls", "inferences"):
        items = raw_rows(store, short)
        assert not [i for i in items if i["user_id"] == "u1" and i["dataset"] == "other"]
    u2, _ = store.list_inferences(
        "u2", dataset="main", session_id=None, call_id=None, limit=10, cursor=None
    )
    assert len(u2) == 1 and store.get_call("u2", "u2-call") is not None


def test_retention_sets_ttl(dynamo: str) -> None:
    store = DynamoRecordStore(retention_days=7)
    store.save_call(call("ttl", [inf(1)]))
    client = dynamodb_client()
    for short in ("calls", "inferences"):
        items = client.scan(TableName=dynamo + short)["Items"]
        assert items and all("expires_at" in i for i in items)


def test_sqlite_retention_expires_rows(tmp_path: Path) -> None:
    db = Database(tmp_path / "gligabao.db")
    store = SqliteRecordStore(db, retention_days=7)
    store.save_call(call("old", [inf(1, call="old")]))
    store.save_call(call("new", [inf(2, call="new")]))
    for short in ("calls", "inferences"):
        assert all(r["expires_at"] > time.time() + 6 * 86400 for r in raw_rows(store, short))
    with sqlite3.connect(db.path) as conn:  # "old" is now past its retention
        conn.execute("UPDATE calls SET expires_at = 1 WHERE call_id = 'old'")
        conn.execute("UPDATE inferences SET expires_at = 1 WHERE call_id = 'old'")
    assert store.get_call("u1", "old") is None
    got, _ = store.list_inferences(
        "u1", dataset=None, session_id=None, call_id=None, limit=10, cursor=None
    )
    assert [i.call_id for i in got] == ["new"]
    store.save_call(call("newer", []))  # a save purges what expired
    assert sorted(r["call_id"] for r in raw_rows(store, "calls")) == ["new", "newer"]
    assert [r["call_id"] for r in raw_rows(store, "inferences")] == ["new"]
    db.close()


def test_many_inferences_in_one_call(store: Any) -> None:
    infs = [inf(n) for n in range(1, 61)]
    random.Random(1).shuffle(infs)
    store.save_call(call("big", infs))
    got = store.get_call("u1", "big")
    assert got is not None and [i.id for i in got.inferences] == [f"{n:032x}" for n in range(1, 61)]


def test_errors_are_upstream_errors(store: Any) -> None:
    if isinstance(store, SqliteRecordStore):
        with sqlite3.connect(store.db.path) as conn:
            conn.execute("DROP TABLE inferences")
    else:
        tables.InferenceRow.delete_table()
    with pytest.raises(UpstreamError):
        store.list_inferences(
            "u1", dataset=None, session_id=None, call_id=None, limit=5, cursor=None
        )
    with pytest.raises(UpstreamError):
        store.save_call(call("x", [inf(1)]))
    assert store.get_call("u1", "missing") is None


def test_records_count_requests(dynamo: str) -> None:
    store = DynamoRecordStore()
    before = REQUESTS.total
    store.save_call(call("r", [inf(1), inf(2)]))
    assert REQUESTS.total - before == 1  # one BatchWriteItem
    assert store.requests == REQUESTS.total


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(cursor=st.from_regex(INFERENCE_CURSOR, fullmatch=True))
def test_every_generated_cursor_of_the_pattern_pages(store: Any, cursor: str) -> None:
    """What a schema-driven client (schemathesis) makes of the pattern: each
    string a page on both stores (DynamoDB's ExclusiveStartKey), never an error."""
    store.save_call(call("c1", [inf(1), inf(2)]))
    page, nxt = store.list_inferences(
        "u1", dataset=None, session_id=None, call_id=None, limit=1, cursor=cursor
    )
    sk = decode_cursor(cursor)
    assert all(f"{i.created_at}#{i.id}" < sk for i in page)
    assert len(page) <= 1 and (nxt is None or page)
