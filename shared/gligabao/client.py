"""A Python client of the gligabao HTTP API.

    from gligabao.client import Client

    gb = Client("http://127.0.0.1:7878", user_id="alice")
    gb.remember("Alice moved to Lyon in March.")
    print(gb.query("Where does Alice live?").answer)

Results are the API's own response models. ``remember`` sends an
``Idempotency-Key`` (generated unless given), kept across its retries, so a
retry never stores a text twice. 409 (the same key still running), 429 and
5xx are retried with exponential backoff and full jitter, waiting what a
``Retry-After`` asks for. Authentication: ``Bearer`` (the ``jwt`` stack),
``SigV4`` (the ``iam`` stack, signed with botocore, imported only then),
``ApiKey`` (``gligabao serve`` with ``GB_DEV_API_KEY``). Standard library
HTTP; no LLM SDK is imported.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import logging
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel

from .api.schemas import (
    AcceptedOut,
    ArtifactDetailOut,
    ArtifactsOut,
    CallOut,
    DatasetsOut,
    EdgeDetailOut,
    EntitiesOut,
    EntityDetailOut,
    ForgottenOut,
    InferencesOut,
    QueryOut,
    RememberOut,
    SearchOut,
)

__all__ = [
    "ApiError",
    "ApiKey",
    "Bearer",
    "Client",
    "Retry",
    "SigV4",
]

logger = logging.getLogger("gligabao.client")
RETRY_STATUSES = frozenset({409, 429, 500, 502, 503, 504})
M = TypeVar("M", bound=BaseModel)


class ApiError(Exception):
    """A response the API refused or failed with, after the retries."""

    def __init__(self, status: int, message: str, call_id: str | None = None) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.call_id = call_id


@dataclass(frozen=True)
class _Request:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None


class Bearer:
    """``Authorization: Bearer``: a token, or a function returning a fresh one
    (it is called for every attempt, so an expired token can be renewed)."""

    def __init__(self, token: str | Callable[[], str]) -> None:
        self.token = token

    def apply(self, req: _Request) -> None:
        token = self.token() if callable(self.token) else self.token
        req.headers["Authorization"] = f"Bearer {token}"


class ApiKey:
    """``x-api-key``: the local server's ``GB_DEV_API_KEY``."""

    def __init__(self, key: str) -> None:
        self.key = key

    def apply(self, req: _Request) -> None:
        req.headers["x-api-key"] = self.key


class SigV4:
    """AWS Signature Version 4 for the ``iam`` stack (API Gateway's IAM
    authorization): the caller's credentials from botocore's usual chain
    (environment, profile, instance role) unless given."""

    def __init__(
        self, region: str, *, service: str = "execute-api", credentials: Any = None
    ) -> None:
        self.region = region
        self.service = service
        self._credentials = credentials

    def apply(self, req: _Request) -> None:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        credentials = self._credentials
        if credentials is None:
            import botocore.session

            credentials = botocore.session.get_session().get_credentials()
            if credentials is None:
                raise ApiError(0, "SigV4: no AWS credentials found")
        # Temporary credentials refresh themselves through this call.
        frozen = credentials.get_frozen_credentials()
        aws = AWSRequest(method=req.method, url=req.url, data=req.body or b"", headers=req.headers)
        SigV4Auth(frozen, self.service, self.region).add_auth(aws)
        req.headers.update({k: str(v) for k, v in aws.headers.items()})


Auth = Bearer | ApiKey | SigV4


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


class Client:
    def __init__(
        self,
        url: str,
        auth: Auth | None = None,
        *,
        user_id: str | None = None,
        dataset: str | None = None,
        timeout_s: float = 120.0,
        retry: Retry | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = url.rstrip("/")
        self.auth = auth
        self.user_id = user_id
        self.dataset = dataset
        self.timeout_s = timeout_s
        self.retry = retry or Retry()
        self._sleep = sleep

    # ------------------------------------------------------------ the API

    @overload
    def remember(
        self, text: str | None = ..., *, respond_async: Literal[False] = ..., **fields: Any
    ) -> RememberOut: ...

    @overload
    def remember(
        self, text: str | None = ..., *, respond_async: Literal[True], **fields: Any
    ) -> AcceptedOut: ...

    def remember(
        self,
        text: str | None = None,
        *,
        messages: list[dict[str, Any]] | None = None,
        user_id: str | None = None,
        dataset: str | None = None,
        session_id: str | None = None,
        reference_time: str | None = None,
        idempotency_key: str | None = None,
        respond_async: bool = False,
        **fields: Any,
    ) -> RememberOut | AcceptedOut:
        """Store a text, or chat messages (``messages``: ``{"role", "content",
        "name"?, "created_at"?}`` each; one of the two). ``fields``: any other
        field of the request body (``reasoning``, ``models``, ``extract``...).
        ``respond_async``: queued, answered with the call to poll (``call``)."""
        body = self._body(
            user_id,
            dataset,
            text=text,
            messages=messages,
            session_id=session_id,
            reference_time=reference_time,
            **fields,
        )
        headers = {"Idempotency-Key": idempotency_key or uuid.uuid4().hex}
        if respond_async:
            headers["Prefer"] = "respond-async"
        status, payload = self._send("POST", "/v1/gb/remember", body, headers)
        return AcceptedOut.model_validate(payload) if status == 202 else _as(RememberOut, payload)

    def remember_batch(
        self,
        items: list[dict[str, Any]],
        *,
        user_id: str | None = None,
        dataset: str | None = None,
        session_id: str | None = None,
        reference_time: str | None = None,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> AcceptedOut:
        """Queue many texts (each ``{"text", "speaker"?, "reference_time"?}`` or
        a message ``{"role", "content", "name"?, "created_at"?}``, either with
        ``session_id``? and ``extract``?). Poll ``call`` for the progress. The
        same ``idempotency_key`` and items again skip what was committed."""
        body = self._body(
            user_id,
            dataset,
            items=items,
            session_id=session_id,
            reference_time=reference_time,
            **fields,
        )
        headers = {"Idempotency-Key": idempotency_key or uuid.uuid4().hex}
        _, payload = self._send("POST", "/v1/gb/remember/batch", body, headers)
        return AcceptedOut.model_validate(payload)

    def query(
        self,
        query: str,
        *,
        user_id: str | None = None,
        dataset: str | None = None,
        session_id: str | None = None,
        **fields: Any,
    ) -> QueryOut:
        """Answer a question from memory, with its evidence."""
        body = self._body(user_id, dataset, query=query, session_id=session_id, **fields)
        return _as(QueryOut, self._send("POST", "/v1/gb/query", body)[1])

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        dataset: str | None = None,
        session_id: str | None = None,
        **fields: Any,
    ) -> SearchOut:
        """The ranked context of a question, without the answer (no LLM)."""
        body = self._body(user_id, dataset, query=query, session_id=session_id, **fields)
        return _as(SearchOut, self._send("POST", "/v1/gb/search", body)[1])

    def datasets(self, *, user_id: str | None = None) -> DatasetsOut:
        path = "/v1/gb/datasets?" + _qs(user_id=self._user(user_id))
        return _as(DatasetsOut, self._send("GET", path)[1])

    def delete_dataset(self, name: str, *, user_id: str | None = None) -> None:
        path = f"/v1/gb/datasets/{_seg(name)}?" + _qs(user_id=self._user(user_id))
        self._send("DELETE", path)

    # --- browse and forget (docs/api.md#browse-and-forget) ----------------------------

    def _browse(self, path: str, user_id: str | None, dataset: str | None, **params: Any) -> Any:
        query = _qs(user_id=self._user(user_id), dataset=dataset, **params)
        return self._send("GET", f"{path}?{query}")[1]

    def entities(
        self,
        *,
        q: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        user_id: str | None = None,
        dataset: str | None = None,
    ) -> EntitiesOut:
        """One page of entities, newest updated first (``q``: names matching)."""
        body = self._browse("/v1/gb/entities", user_id, dataset, q=q, limit=limit, cursor=cursor)
        return _as(EntitiesOut, body)

    def entity(
        self, entity_id: int, *, user_id: str | None = None, dataset: str | None = None
    ) -> EntityDetailOut:
        body = self._browse(f"/v1/gb/entities/{int(entity_id)}", user_id, dataset)
        return _as(EntityDetailOut, body)

    def edge(
        self, edge_id: int, *, user_id: str | None = None, dataset: str | None = None
    ) -> EdgeDetailOut:
        body = self._browse(f"/v1/gb/edges/{int(edge_id)}", user_id, dataset)
        return _as(EdgeDetailOut, body)

    def artifact(
        self, artifact_id: int, *, user_id: str | None = None, dataset: str | None = None
    ) -> ArtifactDetailOut:
        body = self._browse(f"/v1/gb/artifacts/{int(artifact_id)}", user_id, dataset)
        return _as(ArtifactDetailOut, body)

    def artifacts(
        self,
        *,
        session_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        user_id: str | None = None,
        dataset: str | None = None,
    ) -> ArtifactsOut:
        """One page of remembered texts (a session's in the order said)."""
        body = self._browse(
            "/v1/gb/artifacts", user_id, dataset, session_id=session_id, limit=limit, cursor=cursor
        )
        return _as(ArtifactsOut, body)

    def forget(
        self, artifact_id: int, *, user_id: str | None = None, dataset: str | None = None
    ) -> ForgottenOut:
        """Forget one remembered text (404 when it is already gone)."""
        query = _qs(user_id=self._user(user_id), dataset=dataset)
        return _as(
            ForgottenOut, self._send("DELETE", f"/v1/gb/artifacts/{int(artifact_id)}?{query}")[1]
        )

    def inferences(
        self,
        *,
        user_id: str | None = None,
        dataset: str | None = None,
        session_id: str | None = None,
        call_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> InferencesOut:
        """LLM and embeddings requests, newest first; ``next`` pages on."""
        query = _qs(
            user_id=self._user(user_id),
            dataset=dataset,
            session_id=session_id,
            call_id=call_id,
            limit=None if limit is None else str(limit),
            cursor=cursor,
        )
        return _as(InferencesOut, self._send("GET", "/v1/gb/inferences?" + query)[1])

    def call(self, call_id: str, *, user_id: str | None = None) -> CallOut:
        """One call's record: its status, steps, and a queued remember's result."""
        path = f"/v1/gb/calls/{_seg(call_id)}?" + _qs(user_id=self._user(user_id))
        return _as(CallOut, self._send("GET", path)[1])

    # ------------------------------------------------------------ plumbing

    def _user(self, user_id: str | None) -> str:
        user = user_id or self.user_id
        if not user:
            raise ValueError("user_id: give it to Client(...) or to the call")
        return user

    def _body(self, user_id: str | None, dataset: str | None, **fields: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"user_id": self._user(user_id)}
        if dataset or self.dataset:
            body["dataset"] = dataset or self.dataset
        body.update({k: v for k, v in fields.items() if v is not None})
        return body

    def _send(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        attempt = 0
        while True:
            attempt += 1
            req = _Request(method, self.url + path, {**(headers or {})}, data)
            if data is not None:
                req.headers["Content-Type"] = "application/json"
            if self.auth is not None:
                self.auth.apply(req)  # again per attempt: fresh signature, fresh token
            try:
                status, raw, reply_headers = self._exchange(req)
            except (OSError, http.client.HTTPException) as exc:
                # The request may or may not have arrived: safe to resend for
                # every method here (remember carries its idempotency key).
                if attempt >= self.retry.attempts:
                    raise ApiError(0, f"{type(exc).__name__}: {exc}") from exc
                self._wait(attempt, None, f"{method} {path}: {type(exc).__name__}")
                continue
            if status < 400:
                return status, json.loads(raw) if raw else None
            message = _message(raw, status)
            call_id = reply_headers.get("x-gb-call-id")
            wait = retry_after(reply_headers.get("retry-after"))
            if (
                status not in RETRY_STATUSES
                or attempt >= self.retry.attempts
                or (wait is not None and wait > self.retry.retry_after_max_s)
            ):
                raise ApiError(status, message, call_id)
            self._wait(attempt, wait, f"{method} {path}: {status} {message}")

    def _wait(self, attempt: int, retry_after_s: float | None, why: str) -> None:
        if retry_after_s is None:
            cap = min(self.retry.max_s, self.retry.base_s * 2 ** (attempt - 1))
            delay = random.uniform(0, cap)
        else:
            delay = retry_after_s
        logger.info("retrying after %.2f s (attempt %d): %s", delay, attempt, why)
        self._sleep(delay)

    def _exchange(self, req: _Request) -> tuple[int, bytes, dict[str, str]]:
        request = urllib.request.Request(
            req.url, data=req.body, headers=req.headers, method=req.method
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as resp:
                return resp.status, resp.read(), {k.lower(): v for k, v in resp.headers.items()}
        except urllib.error.HTTPError as err:
            with err:
                return err.code, err.read(), {k.lower(): v for k, v in err.headers.items()}


def _as(model: type[M], payload: Any) -> M:
    return model.model_validate(payload)


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


def _qs(**params: str | int | None) -> str:
    return urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})


def _seg(value: str) -> str:
    return urllib.parse.quote(value, safe="")
