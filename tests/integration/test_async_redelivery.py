"""Async that loses nothing: a transient LLM error (429, 529, 5xx, timeout)
leaves the job on the queue to run again after a backoff; a permanent one
(another 4xx) ends the call as failed at once; the last receive ends it
too. Through the local queue over HTTP, and through the worker on a real
SQS queue (moto's, over HTTP)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from remember_helpers import assert_nothing_written, works_at

from conftest import Harness

TEXT = "Alice works at Acme."


def _wait(gb: Harness, call_id: str, timeout: float = 30.0) -> Any:
    end = time.monotonic() + timeout
    while True:
        body = gb.client.get(f"/v1/gb/calls/{call_id}?user_id=u1").body
        if body["status"] not in ("accepted", "running") and not body["status"].startswith(
            "retrying"
        ):
            return body
        assert time.monotonic() < end, body
        time.sleep(0.05)


@pytest.mark.parametrize("status", [429, 529, 503])
def test_a_transient_llm_error_is_retried_and_the_call_ends_ok(gb: Harness, status: int) -> None:
    gb.llm.fail_next(status, stage="extract")
    gb.llm.script("extract", works_at())
    r = gb.client.post(
        "/v1/gb/remember", {"user_id": "u1", "text": TEXT}, headers={"Prefer": "respond-async"}
    )
    assert r.status == 202, r.body
    done = _wait(gb, r.call_id)
    assert done["status"] == "ok", done
    assert gb.llm.calls("extract") == 2
    assert len(gb.scan("artifacts")) == 1 and len(gb.scan("edges")) == 1


def test_a_permanent_llm_error_ends_the_call_at_once(gb: Harness) -> None:
    gb.llm.fail_next(400, stage="extract")
    r = gb.client.post(
        "/v1/gb/remember", {"user_id": "u1", "text": TEXT}, headers={"Prefer": "respond-async"}
    )
    assert r.status == 202
    done = _wait(gb, r.call_id)
    assert "400" in done["status"] and not done["status"].startswith("retrying")
    assert gb.llm.calls("extract") == 1
    assert_nothing_written(gb)


# ------------------------------------------------------------------ the worker on SQS


@pytest.fixture
def sqs_queue(
    monkeypatch: pytest.MonkeyPatch, gb: Harness, moto_url: str
) -> Iterator[tuple[Any, str]]:
    from gligabao import wiring

    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", moto_url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    sqs = boto3.client("sqs", region_name="us-east-1")
    url = sqs.create_queue(
        QueueName=f"{gb.prefix}remember", Attributes={"VisibilityTimeout": "900"}
    )["QueueUrl"]
    monkeypatch.setenv("GB_REMEMBER_QUEUE_URL", url)
    wiring.reset()
    yield sqs, url
    wiring.reset()


def _receive(sqs: Any, url: str) -> dict[str, Any]:
    [msg] = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=1, MessageSystemAttributeNames=["ApproximateReceiveCount"]
    )["Messages"]
    return dict(msg)


def _event(msg: dict[str, Any]) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": msg["MessageId"],
                "receiptHandle": msg["ReceiptHandle"],
                "body": msg["Body"],
                "attributes": {
                    "ApproximateReceiveCount": msg["Attributes"]["ApproximateReceiveCount"]
                },
                "messageAttributes": {},
                "md5OfBody": msg["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q",
                "awsRegion": "us-east-1",
            }
        ]
    }


def _visible_now(sqs: Any, url: str) -> int:
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attrs["Attributes"]["ApproximateNumberOfMessages"])


def test_worker_leaves_a_429_for_redelivery_and_the_next_receive_ends_ok(
    gb: Harness, sqs_queue: tuple[Any, str]
) -> None:
    from gligabao.handlers.remember_worker import lambda_handler

    sqs, url = sqs_queue
    r = gb.client.post(
        "/v1/gb/remember", {"user_id": "u1", "text": TEXT}, headers={"Prefer": "respond-async"}
    )
    assert r.status == 202

    gb.llm.fail_next(429, stage="extract")
    first = _receive(sqs, url)
    out = lambda_handler(_event(first), None)
    assert out == {"batchItemFailures": [{"itemIdentifier": first["MessageId"]}]}
    call = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1").body
    assert call["status"].startswith("retrying: ") and "429" in call["status"]
    assert_nothing_written(gb)
    # the backoff: the message is not visible again at once (the queue's own
    # visibility is 900 s; the worker set 30-37 s)
    assert _visible_now(sqs, url) == 0
    sqs.change_message_visibility(
        QueueUrl=url, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0
    )

    gb.llm.script("extract", works_at())
    second = _receive(sqs, url)
    assert second["Attributes"]["ApproximateReceiveCount"] == "2"
    assert lambda_handler(_event(second), None) == {"batchItemFailures": []}
    done = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1").body
    assert done["status"] == "ok", done
    assert len(gb.scan("artifacts")) == 1


def test_worker_ends_a_transient_failure_on_the_last_receive(
    gb: Harness, sqs_queue: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gligabao import wiring
    from gligabao.handlers.remember_worker import lambda_handler

    monkeypatch.setenv("GB_REMEMBER_MAX_RECEIVES", "1")
    wiring.settings.cache_clear()  # read again, with the new variable
    sqs, url = sqs_queue
    r = gb.client.post(
        "/v1/gb/remember", {"user_id": "u1", "text": TEXT}, headers={"Prefer": "respond-async"}
    )
    gb.llm.fail_next(529, stage="extract")
    msg = _receive(sqs, url)
    assert lambda_handler(_event(msg), None) == {"batchItemFailures": []}
    call = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1").body
    assert "529" in call["status"] and not call["status"].startswith("retrying")
    assert_nothing_written(gb)
    json.dumps(call)


def test_query_with_prefer_respond_async_answers_202_and_the_record_holds_the_answer(
    gb: Harness,
) -> None:
    gb.llm.script("extract", works_at())
    gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": TEXT})
    r = gb.client.post(
        "/v1/gb/query",
        {"user_id": "u1", "query": "Where does Alice work?", "reasoning": "high"},
        headers={"Prefer": "respond-async"},
    )
    assert r.status == 202, r.body
    assert r.body == {"call_id": r.call_id, "status": "accepted"}
    assert r.headers["Location"] == f"/v1/gb/calls/{r.call_id}"
    done = _wait(gb, r.call_id)
    assert done["status"] == "ok" and done["type"] == "query", done
    assert "answer" in done["result"]
    [req] = gb.llm.requests_for("query")
    assert req.get("thinking", {}).get("type") == "enabled"  # reasoning high ran in the worker
    # bad input is still answered at once, and nothing is queued
    bad = gb.client.post(
        "/v1/gb/query",
        {"user_id": "u1", "query": "x", "reasoning": "enormous"},
        headers={"Prefer": "respond-async"},
    )
    assert bad.status == 400
