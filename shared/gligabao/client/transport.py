"""The client's HTTP: one request, retried through tenacity on 409 (the same
key still running), 429, 5xx and connection errors, with full jitter or the
wait a ``Retry-After`` asks for. Standard library HTTP."""

from __future__ import annotations

import email.utils
import http.client
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

from .auth import ApiError, Auth, Request

logger = logging.getLogger("gligabao.client")
RETRY_STATUSES = frozenset({409, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class Retry:
    """At most ``attempts`` tries; between them, a random wait up to
    ``base_s * 2**n`` capped at ``max_s``, or the server's ``Retry-After``
    (a wait longer than ``retry_after_max_s`` is not waited for: the error is
    raised)."""

    attempts: int = 5
    base_s: float = 0.5
    max_s: float = 20.0
    retry_after_max_s: float = 120.0


class _Again(Exception):
    """A try that failed in a way another may not: the error to raise if
    none is left, the wait the server asked for, and why (the log)."""

    def __init__(self, error: ApiError, retry_after_s: float | None, why: str) -> None:
        super().__init__(why)
        self.error, self.retry_after_s, self.why = error, retry_after_s, why


def _again(state: RetryCallState) -> _Again:
    assert state.outcome is not None
    again = state.outcome.exception()
    assert isinstance(again, _Again)
    return again


def retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class Transport:
    """The base of the Client: where it sends, as whom, and how it retries."""

    def __init__(
        self,
        url: str,
        auth: Auth | None = None,
        *,
        timeout_s: float = 120.0,
        retry: Retry | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = url.rstrip("/")
        self.auth = auth
        self.timeout_s = timeout_s
        self.retry = retry or Retry()
        self._sleep = sleep

    def _send(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()

        def once() -> tuple[int, Any]:
            req = Request(method, self.url + path, {**(headers or {})}, data)
            if data is not None:
                req.headers["Content-Type"] = "application/json"
            if self.auth is not None:
                self.auth.apply(req)  # again per attempt: fresh signature, fresh token
            try:
                status, raw, reply_headers = self._exchange(req)
            except (OSError, http.client.HTTPException) as exc:
                # The request may or may not have arrived: safe to resend for
                # every method here (remember carries its idempotency key).
                raise _Again(
                    ApiError(0, f"{type(exc).__name__}: {exc}"), None, type(exc).__name__
                ) from exc
            if status < 400:
                return status, json.loads(raw) if raw else None
            message = _message(raw, status)
            error = ApiError(status, message, reply_headers.get("x-gb-call-id"))
            wait = retry_after(reply_headers.get("retry-after"))
            if status not in RETRY_STATUSES or (
                wait is not None and wait > self.retry.retry_after_max_s
            ):
                raise error
            raise _Again(error, wait, f"{status} {message}")

        def log(state: RetryCallState) -> None:
            assert state.next_action is not None
            logger.info(
                "retrying after %.2f s (attempt %d): %s %s: %s",
                state.next_action.sleep,
                state.attempt_number,
                method,
                path,
                _again(state).why,
            )

        def give_up(state: RetryCallState) -> NoReturn:
            again = _again(state)
            raise again.error from again.__cause__

        return Retrying(
            retry=retry_if_exception_type(_Again),
            stop=stop_after_attempt(self.retry.attempts),
            wait=self._wait,
            sleep=self._sleep,
            before_sleep=log,
            retry_error_callback=give_up,
        )(once)

    def _wait(self, state: RetryCallState) -> float:
        """The server's Retry-After, else full jitter: a random wait up to
        base_s * 2**(n-1), capped at max_s."""
        wait = _again(state).retry_after_s
        if wait is not None:
            return wait
        return wait_random_exponential(multiplier=self.retry.base_s, max=self.retry.max_s)(state)

    def _exchange(self, req: Request) -> tuple[int, bytes, dict[str, str]]:
        request = urllib.request.Request(
            req.url, data=req.body, headers=req.headers, method=req.method
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as resp:
                return resp.status, resp.read(), {k.lower(): v for k, v in resp.headers.items()}
        except urllib.error.HTTPError as err:
            with err:
                return err.code, err.read(), {k.lower(): v for k, v in err.headers.items()}


def _message(raw: bytes, status: int) -> str:
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return body["error"]
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]  # API Gateway's own answers ({"message": "Unauthorized"})
    return http.client.responses.get(status, "error")
