"""The Python client's transport against a loopback fake of the API: which
statuses it retries and how long it waits, the idempotency key kept across
retries, fresh credentials per attempt, and SigV4 signatures that verify."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from fakes.gligabao_api import FakeGligabao, sigv4_valid
from gligabao.client import ApiError, Bearer, Client, Retry, SigV4, retry_after
from gligabao.local.embedded import free_port

FAST = Retry(attempts=4, base_s=0.01, max_s=0.05)


@pytest.fixture
def api() -> Iterator[FakeGligabao]:
    with FakeGligabao() as fake:
        yield fake


def test_a_429_waits_its_retry_after_and_resends_the_same_key_with_a_fresh_token(
    api: FakeGligabao,
) -> None:
    tokens = iter(["token-1", "token-2"])
    api.reply_next(429, {"error": "slow down"}, {"Retry-After": "1"})
    gb = Client(api.url, Bearer(lambda: next(tokens)), user_id="u1", retry=FAST)
    out = gb.remember("Alice works at Acme.")
    assert out.artifact_id == 1
    first, second = api.requests
    assert second.received_at - first.received_at >= 0.95  # Retry-After: 1, not the backoff
    assert first.headers["idempotency-key"] == second.headers["idempotency-key"]
    assert len(first.headers["idempotency-key"]) >= 16
    assert [r.headers["authorization"] for r in api.requests] == [
        "Bearer token-1",
        "Bearer token-2",
    ]
    assert first.body == {"user_id": "u1", "text": "Alice works at Acme."}


def test_each_remember_gets_its_own_key_unless_given(api: FakeGligabao) -> None:
    gb = Client(api.url, user_id="u1")
    gb.remember("one")
    gb.remember("two")
    gb.remember("three", idempotency_key="mine", session_id="s1", reasoning="low")
    keys = [r.headers["idempotency-key"] for r in api.requests]
    assert keys[0] != keys[1] and keys[2] == "mine"
    assert api.requests[2].body == {
        "user_id": "u1",
        "text": "three",
        "session_id": "s1",
        "reasoning": "low",
    }


@pytest.mark.parametrize("status", [409, 429, 500, 502, 503, 504])
def test_transient_statuses_are_retried_with_backoff(api: FakeGligabao, status: int) -> None:
    api.reply_next(status, {"error": "busy"}, times=2)
    out = Client(api.url, user_id="u1", retry=FAST).datasets()
    assert out.datasets == []
    assert len(api.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413])
def test_other_errors_are_raised_at_once_with_the_server_message(
    api: FakeGligabao, status: int
) -> None:
    api.reply_next(status, {"error": "no such thing"}, {"X-Gb-Call-Id": "c-1"})
    with pytest.raises(ApiError) as err:
        Client(api.url, user_id="u1", retry=FAST).query("anything?")
    assert (err.value.status, err.value.message, err.value.call_id) == (
        status,
        "no such thing",
        "c-1",
    )
    assert len(api.requests) == 1


def test_retries_stop_after_the_attempts_and_before_a_long_retry_after(
    api: FakeGligabao,
) -> None:
    api.reply_next(502, {"error": "upstream"}, times=10)
    with pytest.raises(ApiError) as err:
        Client(api.url, user_id="u1", retry=Retry(attempts=3, base_s=0.01)).datasets()
    assert err.value.status == 502
    assert len(api.requests) == 3

    api.reset()
    api.reply_next(429, {"error": "come back tomorrow"}, {"Retry-After": "86400"})
    with pytest.raises(ApiError) as err:
        Client(api.url, user_id="u1", retry=Retry(retry_after_max_s=60)).datasets()
    assert err.value.status == 429
    assert len(api.requests) == 1


def test_a_server_that_cannot_be_reached_is_an_api_error_after_the_attempts() -> None:
    gb = Client(f"http://127.0.0.1:{free_port()}", user_id="u1", retry=FAST)
    with pytest.raises(ApiError) as err:
        gb.datasets()
    assert err.value.status == 0


def test_api_gateways_own_error_body_is_read() -> None:
    with FakeGligabao() as api:
        api.reply_next(403, {"message": "Forbidden"})
        with pytest.raises(ApiError) as err:
            Client(api.url, user_id="u1").datasets()
    assert err.value.message == "Forbidden"


def test_retry_after_is_read_as_seconds_or_a_date() -> None:
    assert retry_after("7") == 7.0
    assert retry_after(None) is None
    assert retry_after("soon") is None
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past: no wait
    assert (retry_after("Fri, 01 Jan 2100 00:00:00 GMT") or 0) > 3000


def test_without_a_user_id_nothing_is_sent(api: FakeGligabao) -> None:
    with pytest.raises(ValueError, match="user_id"):
        Client(api.url).datasets()
    assert api.requests == []


# ------------------------------------------------------------ SigV4 (iam)


def test_iam_mode_signs_every_request_with_sigv4(api: FakeGligabao) -> None:
    from botocore.credentials import Credentials

    creds = Credentials("AKIDEXAMPLE", "the-secret", "session-token")
    gb = Client(api.url, SigV4("eu-west-1", credentials=creds), user_id="user 1", retry=FAST)
    api.reply_next(503, {"error": "busy"})  # the retry is signed again
    gb.datasets()
    gb.remember("Alice works at Acme.", dataset="work")
    assert len(api.requests) == 3
    for req in api.requests:
        auth = req.headers["authorization"]
        assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
        assert "/eu-west-1/execute-api/aws4_request" in auth
        assert "host" in auth.split("SignedHeaders=")[1].split(",")[0].split(";")
        assert req.headers["x-amz-security-token"] == "session-token"
        assert req.headers["x-amz-date"]
        assert sigv4_valid(req, api.url, "the-secret", "eu-west-1"), req.path
        assert not sigv4_valid(req, api.url, "another-secret", "eu-west-1")
    assert api.requests[0].query == "user_id=user+1"


def test_the_client_imports_no_llm_sdk() -> None:
    code = (
        "import sys, gligabao.client\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('anthropic', 'openai', 'botocore', 'aws_lambda_powertools', 'pynamodb'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
