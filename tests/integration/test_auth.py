"""Who may act for which user: the JWT principal bound to user_id (events as
API Gateway's JWT authorizer delivers them), and the local dev key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Harness, configure_env
from gligabao.local.server import make_event


def _event(
    method: str, target: str, body: Any = None, claims: dict[str, Any] | None = None
) -> dict[str, Any]:
    raw = json.dumps(body).encode() if body is not None else b""
    event = make_event(method, target, {"Content-Type": "application/json"}, raw, "127.0.0.1")
    if claims is not None:
        event["requestContext"]["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
    return event


def _call(handler: Any, event: dict[str, Any]) -> tuple[int, Any]:
    out = handler(event, None)
    return out["statusCode"], json.loads(out["body"]) if out.get("body") else None


def test_principal_is_bound_to_user_id(gb: Harness) -> None:
    from gligabao.handlers import datasets, query, records, remember

    gb.remember("Alice works at Acme.", user="alice")
    before = gb.row_counts()
    cases = [
        (
            remember.lambda_handler,
            _event(
                "POST", "/v1/gb/remember", {"user_id": "alice", "text": "x"}, {"sub": "mallory"}
            ),
        ),
        (
            query.lambda_handler,
            _event("POST", "/v1/gb/query", {"user_id": "alice", "query": "x"}, {"sub": "mallory"}),
        ),
        (
            datasets.lambda_handler,
            _event("GET", "/v1/gb/datasets?user_id=alice", claims={"sub": "mallory"}),
        ),
        (
            datasets.lambda_handler,
            _event("DELETE", "/v1/gb/datasets/main?user_id=alice", claims={"sub": "mallory"}),
        ),
        (
            records.lambda_handler,
            _event("GET", "/v1/gb/inferences?user_id=alice", claims={"sub": "mallory"}),
        ),
    ]
    for handler, event in cases:
        status, body = _call(handler, event)
        assert status == 403, (event["rawPath"], body)
        assert "error" in body
    assert gb.row_counts() == before
    assert gb.llm.calls("query") == 0

    status, body = _call(
        datasets.lambda_handler,
        _event("GET", "/v1/gb/datasets?user_id=alice", claims={"sub": "alice"}),
    )
    assert status == 200 and body["datasets"][0]["name"] == "main"


def test_operator_reads_records_across_users_but_not_memory(gb: Harness) -> None:
    from gligabao.handlers import datasets, records

    gb.remember("Alice works at Acme.", user="alice")
    op = {"sub": "ops", "cognito:groups": "[gligabao-operators]"}
    status, body = _call(
        records.lambda_handler, _event("GET", "/v1/gb/inferences?user_id=alice", claims=op)
    )
    assert status == 200 and body["inferences"]
    status, _ = _call(
        datasets.lambda_handler, _event("DELETE", "/v1/gb/datasets/main?user_id=alice", claims=op)
    )
    assert status == 403


@pytest.fixture
def required(monkeypatch: pytest.MonkeyPatch, gb: Harness) -> Iterator[None]:
    from gligabao import wiring

    monkeypatch.setenv("GB_REQUIRE_AUTH", "true")
    wiring.settings.cache_clear()
    yield
    wiring.settings.cache_clear()


def test_deployed_without_claims_is_401(gb: Harness, required: None) -> None:
    r = gb.client.get("/v1/gb/datasets?user_id=u1")
    assert r.status == 401
    assert "error" in r.body


def test_dev_api_key(monkeypatch: pytest.MonkeyPatch, gb: Harness) -> None:
    from gligabao import wiring

    monkeypatch.setenv("GB_DEV_API_KEY", "s3cret")
    wiring.settings.cache_clear()
    try:
        r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "hello"})
        assert r.status == 401
        assert gb.scan("artifacts") == []
        wrong = gb.client.get("/v1/gb/datasets?user_id=u1", headers={"x-api-key": "nope"})
        assert wrong.status == 401
        ok = gb.client.get("/v1/gb/datasets?user_id=u1", headers={"Authorization": "Bearer s3cret"})
        assert ok.status == 200
        ok = gb.client.post(
            "/v1/gb/remember", {"user_id": "u1", "text": "hello"}, headers={"x-api-key": "s3cret"}
        )
        assert ok.status == 200
    finally:
        wiring.settings.cache_clear()


def test_serve_refuses_public_host_without_key(
    monkeypatch: pytest.MonkeyPatch, moto_url: str
) -> None:
    from gligabao.local.cli import main

    configure_env(monkeypatch, moto_url, GB_DEV_API_KEY="")
    assert main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2


def _iam_event(method: str, target: str, body: Any = None) -> dict[str, Any]:
    event = _event(method, target, body)
    event["requestContext"]["authorizer"] = {
        "iam": {
            "accessKey": "AKIDEXAMPLE",
            "accountId": "123456789012",
            "callerId": "AROAEXAMPLE:svc",
            "principalOrgId": None,
            "userArn": "arn:aws:sts::123456789012:assumed-role/app/svc",
            "userId": "AROAEXAMPLE:svc",
        }
    }
    return event


@pytest.fixture
def iam_mode(monkeypatch: pytest.MonkeyPatch, gb: Harness) -> Iterator[None]:
    from gligabao import wiring

    monkeypatch.setenv("GB_AUTH_MODE", "iam")
    wiring.settings.cache_clear()
    yield
    wiring.settings.cache_clear()


def test_iam_mode_refuses_an_unsigned_request_and_writes_nothing(
    gb: Harness, iam_mode: None
) -> None:
    from gligabao.handlers import datasets, query, records, remember

    before = gb.row_counts()
    cases = [
        (
            remember.lambda_handler,
            _event("POST", "/v1/gb/remember", {"user_id": "alice", "text": "Alice works at Acme."}),
        ),
        (query.lambda_handler, _event("POST", "/v1/gb/query", {"user_id": "alice", "query": "x"})),
        (datasets.lambda_handler, _event("DELETE", "/v1/gb/datasets/main?user_id=alice")),
        (records.lambda_handler, _event("GET", "/v1/gb/inferences?user_id=alice")),
        # JWT claims are no IAM identity
        (
            datasets.lambda_handler,
            _event("GET", "/v1/gb/datasets?user_id=alice", claims={"sub": "alice"}),
        ),
    ]
    for handler, event in cases:
        status, body = _call(handler, event)
        assert status == 401, (event["rawPath"], body)
        assert "SigV4" in body["error"]
    assert gb.row_counts() == before
    assert gb.llm.calls("extract") == 0 and gb.llm.calls("query") == 0


def test_iam_mode_lets_the_signed_service_act_for_any_user(gb: Harness, iam_mode: None) -> None:
    from gligabao.handlers import datasets, remember

    status, body = _call(
        remember.lambda_handler,
        _iam_event("POST", "/v1/gb/remember", {"user_id": "alice", "text": "Alice works at Acme."}),
    )
    assert status == 200, body
    status, body = _call(
        datasets.lambda_handler, _iam_event("GET", "/v1/gb/datasets?user_id=alice")
    )
    assert status == 200 and body["datasets"][0]["name"] == "main"


def test_a_scope_naming_the_operator_group_is_not_an_operator(
    monkeypatch: pytest.MonkeyPatch, gb: Harness
) -> None:
    from gligabao import wiring
    from gligabao.handlers import records

    gb.remember("Alice works at Acme.", user="alice")
    monkeypatch.setenv("GB_AUTH_MODE", "jwt")
    wiring.settings.cache_clear()
    client_app = {"sub": "app-client", "scope": "gligabao-operators openid"}
    status, body = _call(
        records.lambda_handler, _event("GET", "/v1/gb/inferences?user_id=alice", claims=client_app)
    )
    assert status == 403, body
    group = {"sub": "ops", "groups": ["gligabao-operators"]}
    status, body = _call(
        records.lambda_handler, _event("GET", "/v1/gb/inferences?user_id=alice", claims=group)
    )
    assert status == 200 and body["inferences"]
