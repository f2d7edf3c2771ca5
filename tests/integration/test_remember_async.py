"""POST /v1/gb/remember with `Prefer: respond-async`: 202 with the call id, the
job run by the remember worker (in-process locally, SQS-fed deployed), the
call record accepted -> running -> ok with the response under `result`."""

from __future__ import annotations

import functools
import json
import time
from typing import Any

import pytest
from query_helpers import prompt
from remember_helpers import assert_nothing_written, works_at

from conftest import Harness, Reply

ASYNC = {"Prefer": "respond-async"}
REF = "2025-01-31T09:00:00Z"
TEXT = "Alice works at Acme."


def post_async(gb: Harness, body: dict[str, Any], **headers: str) -> Reply:
    return gb.client.post("/v1/gb/remember", body, headers={**ASYNC, **headers})


def wait_done(gb: Harness, call_id: str, user: str = "u1", timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        r = gb.client.get(f"/v1/gb/calls/{call_id}?user_id={user}")
        assert r.status == 200, r.body
        if r.body["status"] not in ("accepted", "running"):
            return r.body
        assert time.monotonic() < deadline, r.body
        time.sleep(0.05)


def _without_created_at(out: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(out))
    for edge in out["edges"]:
        edge.pop("created_at")
    return out


def test_async_remember_answers_202_and_the_call_record_holds_the_result(gb: Harness) -> None:
    gb.llm.script("extract", works_at(), times=2)
    base = {"user_id": "u1", "text": TEXT, "reference_time": REF, "session_id": "s-1"}
    sync = gb.remember(**{**base, "dataset": "sync"})

    r = post_async(gb, {**base, "dataset": "async"})
    assert r.status == 202, r.body
    assert r.body == {"call_id": r.call_id, "status": "accepted", "session_id": "s-1"}
    assert r.headers["Location"] == f"/v1/gb/calls/{r.call_id}"

    done = wait_done(gb, r.call_id)
    assert done["status"] == "ok"
    assert done["type"] == "remember"
    assert done["dataset"] == "async"
    assert done["session_id"] == "s-1"
    assert {s["name"] for s in done["steps"]} >= {"extract"}
    assert _without_created_at(done["result"]) == _without_created_at(sync)
    # written under the call id the client was given
    assert gb.graph.get_artifacts(_key("async"), [1])[1].call_id == r.call_id

    # the facts are queryable
    gb.emb.alias("Where does Alice work?", "works_at: Alice works at Acme.", 1.0)
    gb.llm.script("query", {"answer": "Alice works at Acme.", "entities": [1], "edges": [1]})
    out = gb.query("Where does Alice work?", dataset="async")
    assert "[edge 1] Alice(1) --works_at--> Acme(2)" in prompt(gb)
    [edge] = out["evidence"]["edges"]
    assert (edge["source"], edge["relation"], edge["target"]) == ("Alice", "works_at", "Acme")


def _key(dataset: str) -> Any:
    from remember_helpers import key

    return key(dataset=dataset)


def test_the_call_is_readable_at_once(gb: Harness) -> None:
    gb.llm.delay_next(0.5, stage="extract")
    gb.llm.script("extract", works_at())
    r = post_async(gb, {"user_id": "u1", "text": TEXT})
    assert r.status == 202
    first = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1")
    assert first.status == 200
    assert first.body["status"] in ("accepted", "running")
    assert "result" not in first.body
    assert "session_id" not in r.body
    assert wait_done(gb, r.call_id)["status"] == "ok"


def test_failing_llm_gives_the_error_in_the_call_record_and_writes_nothing(
    gb: Harness,
) -> None:
    gb.llm.fail_next(400)  # permanent: a transient error would be retried
    r = post_async(gb, {"user_id": "u1", "text": TEXT})
    assert r.status == 202, r.body
    done = wait_done(gb, r.call_id)
    assert done["status"] not in ("ok", "accepted", "running")
    assert "result" not in done
    assert_nothing_written(gb)


def test_bad_input_is_still_answered_synchronously(gb: Harness) -> None:
    r = post_async(gb, {"user_id": "u1", "text": "   "})
    assert r.status == 400
    assert "error" in r.body
    assert "Location" not in r.headers
    r = post_async(gb, {"user_id": "u1", "text": TEXT, "reasoning": "enormous"})
    assert r.status == 400
    assert gb.llm.calls() == 0


def test_without_prefer_it_stays_synchronous(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    r = gb.client.post(
        "/v1/gb/remember", {"user_id": "u1", "text": TEXT}, headers={"Prefer": "return=minimal"}
    )
    assert r.status == 200
    assert r.body["artifact_id"] == 1


def test_idempotency_key_replays_the_202(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    body = {"user_id": "u1", "text": TEXT}
    first = post_async(gb, body, **{"Idempotency-Key": "k-async"})
    assert first.status == 202
    wait_done(gb, first.call_id)
    again = post_async(gb, body, **{"Idempotency-Key": "k-async"})
    assert again.status == 202
    assert again.body == first.body
    assert again.headers["Location"] == first.headers["Location"]
    # a sync request with the key gets the first (async) response too
    sync = gb.client.post("/v1/gb/remember", body, headers={"Idempotency-Key": "k-async"})
    assert sync.status == 202 and sync.body == first.body
    assert gb.llm.calls("extract") == 1
    assert len(gb.scan("artifacts")) == 1


class _Captured:
    def __init__(self) -> None:
        self.jobs: list[dict[str, Any]] = []

    def send(self, job: dict[str, Any]) -> None:
        self.jobs.append(json.loads(json.dumps(job)))


def _sqs_event(*bodies: str) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": f"m-{i}",
                "receiptHandle": f"rh-{i}",
                "body": body,
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:gb-remember",
                "awsRegion": "us-east-1",
            }
            for i, body in enumerate(bodies)
        ]
    }


def test_worker_on_sqs_events_remembers_once_when_delivered_twice(
    gb: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gligabao import wiring
    from gligabao.handlers.remember_worker import lambda_handler

    queue = _Captured()
    # cached like the real one: the harness clears every cache on teardown
    monkeypatch.setattr(wiring, "remember_queue", functools.lru_cache(maxsize=1)(lambda: queue))
    gb.llm.script("extract", works_at())
    r = post_async(gb, {"user_id": "u1", "text": TEXT})
    assert r.status == 202
    [job] = queue.jobs
    assert job["call_id"] == r.call_id
    assert gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1").body["status"] == "accepted"

    message = json.dumps(job)
    assert lambda_handler(_sqs_event(message), None) == {"batchItemFailures": []}
    done = wait_done(gb, r.call_id, timeout=0.1)
    assert done["status"] == "ok"
    # redelivered, alone and twice in one batch: nothing more is done
    assert lambda_handler(_sqs_event(message), None) == {"batchItemFailures": []}
    assert lambda_handler(_sqs_event(message, message), None) == {"batchItemFailures": []}
    assert gb.llm.calls("extract") == 1
    assert len(gb.scan("artifacts")) == 1
    assert len(gb.scan("edges")) == 1
    assert wait_done(gb, r.call_id)["result"] == done["result"]


def test_worker_reports_a_broken_message_as_a_batch_item_failure(gb: Harness) -> None:
    from gligabao.handlers.remember_worker import lambda_handler

    gb.llm.script("extract", works_at())
    job = {
        "call_id": "c-good",
        "reference_time": REF,
        "request": {"user_id": "u1", "text": TEXT},
    }
    _accepted("c-good", "u1")  # as the request saved it before queueing
    out = lambda_handler(_sqs_event("not json", json.dumps(job)), None)
    assert out == {"batchItemFailures": [{"itemIdentifier": "m-0"}]}
    assert wait_done(gb, "c-good", timeout=0.1)["status"] == "ok"


def _accepted(call_id: str, user: str) -> None:
    from gligabao import wiring
    from gligabao.records.model import new_call

    call = new_call(call_id, "remember", user, "main", None)
    call.status = "accepted"
    wiring.record_store().save_call(call)


def test_a_job_whose_call_record_is_gone_is_dropped(gb: Harness) -> None:
    """Its user was erased since it was queued: nothing runs, nothing is written."""
    from gligabao.handlers.remember_worker import lambda_handler

    job = {"call_id": "c-erased", "reference_time": REF, "request": {"user_id": "u1", "text": TEXT}}
    before = gb.row_counts()
    assert lambda_handler(_sqs_event(json.dumps(job)), None) == {"batchItemFailures": []}
    assert gb.row_counts() == before and gb.llm.calls("extract") == 0
