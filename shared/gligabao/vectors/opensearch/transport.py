"""How the OpenSearch adapter talks to a node: the client (SigV4-signed on an
AWS endpoint), and every logical request retried with backoff.

``Transport.requests`` counts every HTTP request, retries included (the
benchmarks read it). Failures raise UpstreamError; 429 and 5xx (whole request
or bulk items) and connection errors are retried with exponential backoff
first, within the call's deadline.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar
from urllib.parse import urlparse

from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from ... import deadline
from ...backoff import half_jitter
from ...errors import UpstreamError, optional_sdk

T = TypeVar("T")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

# A bulk action line and its source (None for a delete).
BulkAction = tuple[dict[str, Any], dict[str, Any] | None]


def is_aws_endpoint(url: str) -> bool:
    parsed = urlparse(url)
    host = (parsed.hostname or "").lower()
    return parsed.scheme == "https" and (
        host.endswith(".amazonaws.com") or host.endswith(".amazonaws.com.cn")
    )


def error_text(error: Any) -> str:
    """An OpenSearch error (a response body, or its ``error`` part) as one line."""
    if isinstance(error, dict) and "error" in error:  # a whole response body
        return error_text(error["error"])
    if isinstance(error, dict):
        reason = error.get("reason") or ""
        kind = error.get("type") or ""
        caused = error.get("caused_by")
        text = f"{kind}: {reason}" if kind else str(reason)
        if isinstance(caused, dict):
            text += f" (caused by {error_text(caused)})"
        return text
    return str(error)


def make_client(
    url: str, *, service: str, region: str, aws_auth: bool | None, timeout_s: float
) -> Any:
    """An ``opensearchpy.OpenSearch`` client for ``url``; signed with the
    session's AWS credentials when ``aws_auth`` (None: when the URL is an AWS
    endpoint)."""
    opensearchpy = optional_sdk("opensearchpy", "the OpenSearch vector store", "opensearch-py")
    if aws_auth is None:
        aws_auth = is_aws_endpoint(url)
    auth: Any = None
    if aws_auth:
        import boto3

        credentials = boto3.Session().get_credentials()
        if credentials is None:
            raise UpstreamError("opensearch: no AWS credentials to sign requests with")
        auth = opensearchpy.Urllib3AWSV4SignerAuth(credentials, region, service)
    # The adapter retries with backoff itself; the client must not.
    return opensearchpy.OpenSearch(
        hosts=[url],
        http_auth=auth,
        timeout=timeout_s,
        max_retries=0,
        retry_on_timeout=False,
        # gzip request bodies (vectors are long JSON arrays); managed domains
        # accept them, Serverless is left uncompressed to be safe.
        http_compress=service == "es",
    )


class _Retry(Exception):
    """Raised inside an attempt to ask for another one after a backoff."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Transient(Exception):
    """One try failed in a way another may not (429, 5xx, unreachable)."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.message, self.detail = message, detail


def _failure(state: RetryCallState) -> _Transient:
    assert state.outcome is not None
    failed = state.outcome.exception()
    assert isinstance(failed, _Transient)
    return failed


class Transport:
    """One client, and the retries around each logical request."""

    def __init__(
        self,
        client: Any,
        *,
        max_retries: int = 4,
        backoff_s: float = 0.2,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client = client
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self._sleep = sleep
        self._lock = threading.Lock()
        self.requests = 0  # HTTP round trips, retries included (benchmarks)

    def call(self, op: str, fn: Callable[[], T]) -> T:
        """One logical request: retried on 429, 5xx and connection errors with
        exponential backoff (and jitter); UpstreamError on anything else or
        when the retries run out. ``fn`` may raise _Retry to retry by itself."""
        from opensearchpy.exceptions import (
            ConnectionError as OsConnectionError,
        )
        from opensearchpy.exceptions import (
            OpenSearchException,
            TransportError,
        )

        def once() -> T:
            deadline.check(f"opensearch {op}")
            with self._lock:
                self.requests += 1
            try:
                return fn()
            # The body names the operation and the kind of failure; the
            # error text (index names, request IDs) goes to the log.
            except _Retry as e:
                raise _Transient("throttled", e.message) from e
            except OsConnectionError as e:  # includes timeouts
                raise _Transient("unreachable", str(e)) from e
            except TransportError as e:
                status = e.status_code if isinstance(e.status_code, int) else 0
                message, detail = f"HTTP {status}", error_text(e.info or e.error)
                if status not in RETRY_STATUSES:
                    raise UpstreamError(f"opensearch {op}: {message}", detail=detail) from e
                raise _Transient(message, detail) from e
            except OpenSearchException as e:
                raise UpstreamError(f"opensearch {op}: an error", detail=str(e)) from e

        def give_up(state: RetryCallState) -> NoReturn:
            failed = _failure(state)
            raise UpstreamError(
                f"opensearch {op}: {failed.message} (after {state.attempt_number} tries)",
                detail=failed.detail,
            )

        def no_time_left(state: RetryCallState) -> None:
            assert state.next_action is not None
            if not deadline.leaves(state.next_action.sleep):
                failed = _failure(state)
                raise UpstreamError(
                    f"opensearch {op}: {failed.message} (no time left to retry)",
                    detail=failed.detail,
                )

        retrying = Retrying(
            retry=retry_if_exception_type(_Transient),
            stop=stop_after_attempt(self.max_retries + 1),
            wait=half_jitter(self.backoff_s),
            sleep=self._sleep,
            before_sleep=no_time_left,
            retry_error_callback=give_up,
        )
        return retrying(once)

    def bulk(self, op: str, actions: list[BulkAction], *, refresh: bool) -> None:
        """Send bulk actions (an action line and an optional source); items
        that fail with 429/5xx are sent again with backoff, other item
        failures raise. Deleting a document that is already gone is fine.
        ``refresh``: the writes are searchable when the call returns."""
        pending = actions

        def attempt() -> None:
            nonlocal pending
            lines: list[str] = []
            for action, source in pending:
                lines.append(json.dumps(action))
                if source is not None:
                    lines.append(json.dumps(source))
            params = {"refresh": "true"} if refresh else None
            response = self.client.bulk(body="\n".join(lines) + "\n", params=params)
            if not response.get("errors"):
                return
            retry: list[BulkAction] = []
            for (action, source), item in zip(pending, response["items"], strict=True):
                ((verb, result),) = item.items()
                status = int(result.get("status", 0))
                if status < 300 or (verb == "delete" and status == 404):
                    continue
                if status in RETRY_STATUSES:
                    retry.append((action, source))
                    continue
                raise UpstreamError(
                    f"opensearch {op}: {verb} failed: {status} {error_text(result.get('error'))}"
                )
            if retry:
                pending = retry
                raise _Retry(f"{len(retry)} bulk items throttled or failed")

        self.call(op, attempt)
