"""Upstream faults with the SDKs' own retries on (issue "Security and
reliability"): rate limits, overloads and 5xx are retried and the call
succeeds; exhausted retries, timeouts, unusable replies, embeddings failures
and a store failure in the middle of the writes are a 502 that leaves no row
behind, and the retry of the whole remember completes the work (spec:
remember.md, Conventions and Idempotency; query.md, Errors)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from remember_helpers import extraction, fact, key, vector_counts, works_at

from conftest import Harness, Reply
from fakes._server import Response
from fakes.openai_server import error_body
from gligabao.models import DatasetKey

TEXT = "Alice works at Acme."
TIMEOUT_S = 2.0

#: The graph tables a remember writes its rows to (the datasets row aside).
ROW_TABLES = ("entities", "edges", "artifacts", "links", "names", "terms")


@pytest.fixture
def gb_env() -> dict[str, str]:
    return {"GB_LLM_MAX_RETRIES": "2", "GB_LLM_TIMEOUT_S": str(int(TIMEOUT_S))}


# --- helpers -------------------------------------------------------------------


def remember(gb: Harness, text: str = TEXT, idem: str | None = None, user: str = "u1") -> Reply:
    headers = {"Idempotency-Key": idem} if idem else None
    return gb.client.post("/v1/gb/remember", {"user_id": user, "text": text}, headers=headers)


def rows(gb: Harness) -> dict[str, int]:
    return {t: len(gb.scan(t)) for t in ROW_TABLES}


def assert_no_rows(gb: Harness) -> None:
    assert rows(gb) == dict.fromkeys(ROW_TABLES, 0)
    # a first call that fails before the writes does not even create the dataset
    # (after a failure in the writes the dataset row may exist, empty: see below)
    for d in gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"]:
        assert (d["entities"], d["edges"], d["artifacts"]) == (0, 0, 0), d


def inferences(gb: Harness, call_id: str, user: str = "u1") -> list[dict[str, Any]]:
    r = gb.client.get(f"/v1/gb/inferences?user_id={user}&call_id={call_id}")
    assert r.status == 200, r.body
    return list(r.body["inferences"])


def call_status(gb: Harness, call_id: str, user: str = "u1") -> str:
    r = gb.client.get(f"/v1/gb/calls/{call_id}?user_id={user}")
    assert r.status == 200, r.body
    return str(r.body["status"])


def assert_failed_call(gb: Harness, r: Reply, stage: str) -> list[dict[str, Any]]:
    """A 502 whose call and inference of ``stage`` record the error."""
    assert r.status == 502, (r.status, r.body)
    assert set(r.body) == {"error"} and r.body["error"]
    assert r.call_id
    assert call_status(gb, r.call_id) not in ("", "ok")
    infs = inferences(gb, r.call_id)
    failed = [i for i in infs if i["stage"] == stage and i["status"] != "ok"]
    assert len(failed) == 1, infs
    return infs


def assert_completed(gb: Harness, r: Reply) -> None:
    assert r.status == 200, r.body
    assert [e["name"] for e in r.body["entities"]] == ["Alice", "Acme"]
    assert [e["created"] for e in r.body["entities"]] == [True, True]
    assert [(e["source"], e["relation"], e["target"]) for e in r.body["edges"]] == [
        ("Alice", "works_at", "Acme")
    ]
    assert len(gb.scan("entities")) == 2
    assert len(gb.scan("edges")) == 1
    assert len(gb.scan("artifacts")) == 1
    assert len(gb.scan("names")) == 2
    [ds] = gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"]
    assert (ds["entities"], ds["edges"], ds["artifacts"]) == (2, 1, 1)
    assert call_status(gb, r.call_id) == "ok"
    assert all(i["status"] == "ok" for i in inferences(gb, r.call_id))


# --- retried and successful ----------------------------------------------------------


RETRIED: dict[str, Callable[[Harness], None]] = {
    "429_retry_after": lambda gb: gb.llm.fail_next(429, retry_after=0.001, stage="extract"),
    "429_retry_after_ms": lambda gb: gb.llm.fail_next(429, retry_after_ms=1, stage="extract"),
    "529_retry_after": lambda gb: gb.llm.fail_next(529, retry_after=0.001, stage="extract"),
    "529_retry_after_ms": lambda gb: gb.llm.fail_next(529, retry_after_ms=1, stage="extract"),
    "500": lambda gb: gb.llm.fail_next(500, retry_after_ms=1, stage="extract"),
    "503": lambda gb: gb.llm.fail_next(503, retry_after_ms=1, stage="extract"),
}


@pytest.mark.parametrize("fault", list(RETRIED))
def test_llm_error_is_retried_and_the_call_succeeds(gb: Harness, fault: str) -> None:
    gb.llm.default("extract", works_at())
    RETRIED[fault](gb)
    started = time.monotonic()
    r = remember(gb)
    elapsed = time.monotonic() - started
    assert_completed(gb, r)
    reqs = gb.llm.requests_for("extract")
    assert [q.status for q in reqs] == [int(fault[:3]), 200]
    assert reqs[0].body == reqs[1].body  # the same request again
    # the retry honoured the short retry-after (the SDK's own backoff is >= 0.5 s)
    assert reqs[1].received_at - reqs[0].received_at < 0.4, elapsed
    # the SDK's retries are one request of the product: one inference row, ok
    [extract] = [i for i in inferences(gb, r.call_id) if i["stage"] == "extract"]
    assert extract["status"] == "ok"


def test_two_failures_then_success_within_the_retries(gb: Harness) -> None:
    gb.llm.default("extract", works_at())
    gb.llm.fail_next(529, retry_after_ms=1, stage="extract")
    gb.llm.fail_next(429, retry_after_ms=1, stage="extract")
    assert_completed(gb, remember(gb))
    assert gb.llm.calls("extract") == 3


def test_embeddings_rate_limit_is_retried(gb: Harness) -> None:
    gb.llm.default("extract", works_at())
    gb.emb.fail_next(429, retry_after_ms=1)
    r = remember(gb)
    assert_completed(gb, r)
    assert [q.status for q in gb.emb.requests][:2] == [429, 200]
    assert gb.emb.requests[0]["input"] == gb.emb.requests[1]["input"]


def test_llm_timeout_is_retried(gb: Harness) -> None:
    gb.llm.default("extract", works_at())
    gb.llm.delay_next(TIMEOUT_S + 1.5, stage="extract")
    started = time.monotonic()
    r = remember(gb)
    assert_completed(gb, r)
    assert time.monotonic() - started >= TIMEOUT_S
    assert gb.llm.calls("extract") == 2


# --- failed, nothing written, the retry completes -----------------------------------


def _exhausted_529(gb: Harness) -> None:
    gb.llm.fail_next(529, retry_after_ms=1, stage="extract", times=3)


def _exhausted_429(gb: Harness) -> None:
    gb.llm.fail_next(429, retry_after=0.001, stage="extract", times=3)


def _exhausted_500(gb: Harness) -> None:
    gb.llm.fail_next(500, retry_after_ms=1, stage="extract", times=3)


def _not_retried_400(gb: Harness) -> None:
    gb.llm.fail_next(400, stage="extract")


def _timeouts(gb: Harness) -> None:
    gb.llm.delay_next(TIMEOUT_S + 1.5, stage="extract", times=3)


def _truncated(gb: Harness) -> None:
    gb.llm.truncate_next(stage="extract")


def _truncated_whole_json(gb: Harness) -> None:
    gb.llm.truncate_next(stage="extract", cut=False)


def _empty(gb: Harness) -> None:
    gb.llm.empty_next(stage="extract")


def _empty_text(gb: Harness) -> None:
    gb.llm.empty_next(stage="extract", empty_text=True)


def _emb_exhausted(gb: Harness) -> None:
    gb.emb.fail_next(500, retry_after_ms=1, times=3)


def _emb_second_request_exhausted(gb: Harness) -> None:
    # the first request (the text) passes; the second (names, facts) fails,
    # and so do its two retries
    original = gb.emb._handle
    seen = [0]

    def handle(req: Any) -> Any:
        seen[0] += 1
        if 2 <= seen[0] <= 4:
            return Response(500, error_body(500, "down"), {"retry-after-ms": "1"})
        return original(req)

    gb.emb._handle = handle  # type: ignore[method-assign]


def _emb_400(gb: Harness) -> None:
    gb.emb.fail_next(400)


# fault -> (stage whose inference failed, requests of that stage the fault saw)
FAILED: dict[str, tuple[Callable[[Harness], None], str, int]] = {
    "llm_529_exhausted": (_exhausted_529, "extract", 3),
    "llm_429_exhausted": (_exhausted_429, "extract", 3),
    "llm_500_exhausted": (_exhausted_500, "extract", 3),
    "llm_400_not_retried": (_not_retried_400, "extract", 1),
    "llm_timeouts": (_timeouts, "extract", 3),
    "truncated": (_truncated, "extract", 1),
    "truncated_whole_json": (_truncated_whole_json, "extract", 1),
    "empty": (_empty, "extract", 1),
    "empty_text": (_empty_text, "extract", 1),
    "embeddings_exhausted": (_emb_exhausted, "embed", 3),
    "embeddings_second_request": (_emb_second_request_exhausted, "embed", 3),
    "embeddings_400": (_emb_400, "embed", 1),
}


@pytest.fixture
def restore_emb(gb: Harness) -> Iterator[None]:
    yield
    gb.emb.__dict__.pop("_handle", None)  # the session's fake: drop the override


@pytest.mark.parametrize("fault", list(FAILED))
def test_failure_is_502_nothing_written_and_the_retry_completes(
    gb: Harness, fault: str, restore_emb: None
) -> None:
    inject, stage, seen = FAILED[fault]
    gb.llm.default("extract", works_at())
    inject(gb)
    r = remember(gb, idem=f"retry-{fault}")
    infs = assert_failed_call(gb, r, stage)
    assert_no_rows(gb)
    assert gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"] == []
    assert vector_counts(gb) == dict.fromkeys(vector_counts(gb), 0)
    if stage == "embed":
        failed_requests = [q for q in gb.emb.requests if q.status != 200]
        assert len(failed_requests) == seen
        assert gb.llm.calls("extract") <= 1
    else:
        reqs = gb.llm.requests_for("extract")
        assert len(reqs) == seen, [q.status for q in reqs]
        # nothing after the failed stage ran
        assert [i["stage"] for i in infs if i["stage"] != "embed"] == ["extract"]
    # a query sees nothing of it (the dataset does not even exist)
    q = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"})
    assert q.status == 404, q.body

    gb.emb.__dict__.pop("_handle", None)
    again = remember(gb, idem=f"retry-{fault}")
    assert_completed(gb, again)
    assert again.call_id != r.call_id
    assert vector_counts(gb)["entities"] == 2
    # the key now replays the completed call and writes nothing new
    before = rows(gb)
    third = remember(gb, idem=f"retry-{fault}")
    assert third.status == 200 and third.body == again.body
    assert rows(gb) == before


def test_a_failed_later_call_changes_nothing(gb: Harness) -> None:
    gb.llm.script("extract", works_at(person_desc="engineer"))
    assert remember(gb).status == 200
    before = {t: sorted(map(repr, gb.scan(t))) for t in (*ROW_TABLES, "datasets")}
    vectors = vector_counts(gb)
    moved = extraction(
        [
            {"name": "Alice", "type": "person", "description": "moved on"},
            {"name": "Globex", "type": "organization"},
        ],
        [fact("Alice", "Globex", "works_at")],
    )
    gb.llm.script("extract", moved)
    gb.llm.fail_next(529, retry_after_ms=1, stage="invalidate", times=3)
    r = remember(gb, "Alice joined Globex.", idem="later")
    assert_failed_call(gb, r, "invalidate")
    assert gb.llm.calls("invalidate") == 3
    assert {t: sorted(map(repr, gb.scan(t))) for t in before} == before
    # vectors of the failed call may stay (IDs are never reused), but no
    # query can reach them: the query sees only the first text's facts
    assert vector_counts(gb)["entities"] >= vectors["entities"]

    gb.llm.script("extract", moved)
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    out = remember(gb, "Alice joined Globex.", idem="later")
    assert out.status == 200, out.body
    assert [i["id"] for i in out.body["invalidated"]] == [1]
    assert [e.id for e in gb.graph.live_edges_around(key(), [1], 100)] == [2]


# --- a store failure in the middle of the writes ----------------------------------------


def _many_entities(n: int) -> dict[str, Any]:
    """An extraction with enough rows (entities and their keyword terms) that
    the graph write takes several BatchWriteItem pages, the edges last."""
    ents = [
        {
            "name": f"Person{i:02d}",
            "type": "person",
            "description": f"engineer number {i} working on project zeta{i} alpha{i} beta{i}",
        }
        for i in range(n)
    ]
    ents.append({"name": "Acme", "type": "organization", "description": "a company"})
    edges = [fact(f"Person{i:02d}", "Acme", "works_at") for i in range(n)]
    return extraction(ents, edges)


def _drop_table(gb: Harness, short: str) -> None:
    import boto3

    from gligabao.config import settings

    cfg = settings()
    client = boto3.client(
        "dynamodb", endpoint_url=cfg.dynamodb_endpoint or None, region_name=cfg.region
    )
    client.delete_table(TableName=cfg.table(short))
    client.get_waiter("table_not_exists").wait(TableName=cfg.table(short))


@pytest.mark.parametrize("table", ["edges", "links"])
def test_store_failure_mid_write_is_invisible_and_the_retry_completes(
    gb: Harness, table: str, caplog: pytest.LogCaptureFixture
) -> None:
    from gligabao.dynamodb import admin

    n = 8
    gb.llm.default("extract", _many_entities(n))
    text = "Eight engineers work at Acme."
    _drop_table(gb, table)

    r = remember(gb, text, idem="mid-write")
    assert r.status == 502, r.body
    # what failed, not how: no table name, no exception class. Without the links
    # table the remember stops at its first read of it, the dataset's settings
    # (memory/dataset_settings.py), before any write.
    said = {
        "edges": "graph store write failed: a missing table",
        "links": "notes store get_options failed: a missing table",
    }[table]
    assert r.body == {"error": said}
    assert call_status(gb, r.call_id) == said
    if table == "links":  # refused before the write: nothing of it anywhere
        assert list(gb.graph.iter_entities(DatasetKey("u1", "main"))) == []
        assert list(gb.graph.iter_artifacts(DatasetKey("u1", "main"))) == []
        return
    # how it failed (exception class, table names) is in the log, with the call id
    [logged] = [
        rec.getMessage()
        for rec in caplog.records
        if rec.getMessage().startswith("upstream failure")
        and getattr(rec, "call_id", None) == r.call_id
    ]
    assert "ResourceNotFoundException" in logged and gb.prefix in logged
    assert gb.prefix not in str(r.body) and "Exception" not in str(r.body)
    # every LLM / embeddings request of the call succeeded; the call failed
    assert all(i["status"] == "ok" for i in inferences(gb, r.call_id))
    # the write failed half-way (its abort too: the table is missing), and
    # what it left is tagged: no reader sees it (the record never committed)
    assert list(gb.graph.iter_entities(DatasetKey("u1", "main"))) == []
    assert list(gb.graph.iter_artifacts(DatasetKey("u1", "main"))) == []
    [ds] = gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"]
    assert (ds["entities"], ds["edges"], ds["artifacts"]) == (0, 0, 0)
    # the table back (empty): a query sees nothing, the vectors written
    # before the rows resolve to no visible row
    admin.create_tables()
    gb.emb.alias("Who works at Acme?", "Acme", 1.0)
    q = gb.query("Who works at Acme?")
    assert q["evidence"] == {"entities": [], "edges": [], "passages": []}
    assert gb.llm.calls("query") == 0

    again = remember(gb, text, idem="mid-write")
    assert again.status == 200, again.body
    assert len(again.body["entities"]) == n + 1
    assert all(e["created"] for e in again.body["entities"])
    assert len(again.body["edges"]) == n
    assert len(list(gb.graph.iter_entities(DatasetKey("u1", "main")))) == n + 1
    assert len(list(gb.graph.iter_edges(DatasetKey("u1", "main")))) == n
    # the IDs of the failed attempt are not reused
    assert again.body["artifact_id"] == 2
    assert min(e["id"] for e in again.body["entities"]) == n + 2
    [ds] = gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"]
    assert (ds["entities"], ds["edges"], ds["artifacts"]) == (n + 1, n, 1)
    # now a query finds the facts
    gb.llm.script("query", {"answer": "eight people", "entities": [], "edges": [], "passages": []})
    q = gb.query("Who works at Acme?")
    assert q["answer"] == "eight people"
    prompt = gb.llm.requests_for("query")[-1]["messages"][0]["content"]
    prompt = prompt if isinstance(prompt, str) else "".join(b["text"] for b in prompt)
    assert "Person00" in prompt and "works_at" in prompt


# --- query ----------------------------------------------------------------------------


def test_query_llm_error_is_retried(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    assert remember(gb).status == 200
    gb.llm.fail_next(529, retry_after_ms=1, stage="query")
    gb.llm.script("query", {"answer": "Acme", "entities": [1], "edges": [1], "passages": []})
    out = gb.query("Where does Alice work?")
    assert out["answer"] == "Acme"
    assert gb.llm.calls("query") == 2


QUERY_FAULTS: dict[str, Callable[[Harness], None]] = {
    "529_exhausted": lambda gb: gb.llm.fail_next(529, retry_after_ms=1, stage="query", times=3),
    "500_exhausted": lambda gb: gb.llm.fail_next(500, retry_after_ms=1, stage="query", times=3),
    "timeouts": lambda gb: gb.llm.delay_next(TIMEOUT_S + 1.5, stage="query", times=3),
    "truncated": lambda gb: gb.llm.truncate_next(stage="query"),
    "empty": lambda gb: gb.llm.empty_next(stage="query"),
    "unparsable": lambda gb: gb.llm.script("query", "I think Alice works at Acme."),
    "embeddings": lambda gb: gb.emb.fail_next(500, retry_after_ms=1, times=3),
}


@pytest.mark.parametrize("fault", list(QUERY_FAULTS))
def test_query_failure_is_502_and_writes_nothing(gb: Harness, fault: str) -> None:
    gb.llm.script("extract", works_at())
    assert remember(gb).status == 200
    before = {t: sorted(map(repr, gb.scan(t))) for t in (*ROW_TABLES, "datasets")}
    vectors = vector_counts(gb)
    QUERY_FAULTS[fault](gb)
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"})
    assert r.status == 502, r.body
    assert set(r.body) == {"error"} and r.body["error"]
    stage = "embed" if fault == "embeddings" else "query"
    assert call_status(gb, r.call_id) not in ("", "ok")
    failed = [i for i in inferences(gb, r.call_id) if i["status"] != "ok"]
    assert [i["stage"] for i in failed] == [stage]
    assert all(i["type"] == "query" for i in failed)
    assert {t: sorted(map(repr, gb.scan(t))) for t in before} == before
    assert vector_counts(gb) == vectors

    gb.llm.script("query", {"answer": "Acme", "entities": [], "edges": [1], "passages": []})
    out = gb.query("Where does Alice work?")
    assert out["answer"] == "Acme"
    assert [e["id"] for e in out["evidence"]["edges"]] == [1]


def test_store_failure_while_the_question_is_embedded_is_502(gb: Harness) -> None:
    """The keyword reads fail (their table is gone) while the embeddings
    request is in flight on the worker: 502 naming the read, nothing
    written, and the embedding that finished meanwhile is on the call's
    record (the call waits for it before saving)."""
    from gligabao.dynamodb import admin

    gb.llm.script("extract", works_at())
    assert remember(gb).status == 200
    kept_tables = tuple(t for t in (*ROW_TABLES, "datasets") if t != "terms")
    before = {t: sorted(map(repr, gb.scan(t))) for t in kept_tables}
    vectors = vector_counts(gb)
    _drop_table(gb, "terms")
    try:
        r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"})
        assert r.status == 502, r.body
        assert r.body == {"error": "graph store keyword_hits failed: a missing table"}
        assert call_status(gb, r.call_id) == r.body["error"]
        assert [(i["stage"], i["status"]) for i in inferences(gb, r.call_id)] == [("embed", "ok")]
        assert gb.llm.calls("query") == 0
        assert {t: sorted(map(repr, gb.scan(t))) for t in kept_tables} == before
        assert vector_counts(gb) == vectors
    finally:
        admin.create_tables()
