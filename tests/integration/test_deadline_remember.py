"""A remember's embedding work within the request's deadline, on DynamoDB:
in the Lambda handler (the invocation's remaining time, less the reserve)
and on the local server (GB_REQUEST_TIMEOUT). An embedder slower than the
budget (the fake embeddings server holding its answer) ends the call as a
JSON 504 with a call id, and nothing is written: no text, no entity, no
vector, no dataset. The SQLite server's: tests/e2e/test_hostile_deadline.py."""

from __future__ import annotations

import json

import pytest
from remember_helpers import assert_nothing_written
from test_deadline import LambdaContext

from conftest import Harness
from gligabao.local.server import make_event

SLOW_S = 8.0  # the embeddings answer's delay: far past every budget below


@pytest.fixture
def gb_env() -> dict[str, str]:
    # gb_http's server reads it (the Lambda test passes its context instead)
    return {"GB_REQUEST_TIMEOUT": "1"}


def _remember_event(text: str) -> dict[str, object]:
    body = json.dumps({"user_id": "u1", "text": text, "extract": False}).encode()
    headers = {"content-type": "application/json", "idempotency-key": "slow-1"}
    return make_event("POST", "/v1/gb/remember", headers, body, "127.0.0.1")


def _browse_is_empty(gb: Harness) -> None:
    for path in ("/v1/gb/artifacts?user_id=u1", "/v1/gb/entities?user_id=u1"):
        r = gb.client.get(path)
        assert r.status in (200, 404), r.body
        if r.status == 200:
            listed = [v for v in r.body.values() if isinstance(v, list)]
            assert listed == [[]], r.body


def test_lambda_a_slow_embedder_past_the_remaining_time_is_a_504_with_nothing_written(
    gb: Harness,
) -> None:
    from gligabao.handlers import remember

    gb.emb.delay_next(SLOW_S)
    # 3 s left: 1 s of budget after the 2 s reserve
    out = remember.lambda_handler(_remember_event("Alice works at Acme."), LambdaContext(3_000))
    assert out["statusCode"] == 504, out
    assert out["headers"]["Content-Type"] == "application/json"
    assert "time budget ran out" in json.loads(out["body"])["error"]
    call_id = out["headers"]["X-Gb-Call-Id"]
    assert_nothing_written(gb)
    assert gb.scan("idempotency") == []  # the key is free for a retry
    _browse_is_empty(gb)
    call = gb.client.get(f"/v1/gb/calls/{call_id}?user_id=u1")
    assert call.status == 200 and "time budget ran out" in call.body["status"], call.body


def test_local_server_a_slow_embedder_past_the_request_timeout_is_a_504_with_nothing_written(
    gb_http: Harness,
) -> None:
    gb = gb_http
    gb.emb.delay_next(SLOW_S)
    r = gb.client.post(
        "/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme.", "extract": False}
    )
    assert r.status == 504, r.body
    assert "time budget ran out" in r.body["error"]
    assert r.headers.get("X-Gb-Call-Id"), r.headers
    assert_nothing_written(gb)
    _browse_is_empty(gb)
