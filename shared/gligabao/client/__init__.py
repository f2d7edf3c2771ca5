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

import time
import urllib.parse
import uuid
from collections.abc import Callable
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel

from ..api.fact_schemas import ConflictsOut, CorrectedOut, FactForgottenOut, MergesOut
from ..api.openapi_settings import DatasetSettingsOut
from ..api.schemas import (
    AcceptedOut,
    ArtifactDetailOut,
    ArtifactsOut,
    CallOut,
    DatasetSchemaOut,
    DatasetsOut,
    EdgeDetailOut,
    EntitiesOut,
    EntityDetailOut,
    ErasedOut,
    ForgottenOut,
    InferencesOut,
    QueryOut,
    RememberOut,
    SearchOut,
)
from .auth import ApiError, ApiKey, Auth, Bearer, SigV4
from .transport import Retry, Transport, retry_after

__all__ = [
    "ApiError",
    "ApiKey",
    "Bearer",
    "Client",
    "Retry",
    "SigV4",
    "retry_after",
]

M = TypeVar("M", bound=BaseModel)


class Client(Transport):
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
        super().__init__(url, auth, timeout_s=timeout_s, retry=retry, sleep=sleep)
        self.user_id = user_id
        self.dataset = dataset

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

    def schema(self, name: str, *, user_id: str | None = None) -> DatasetSchemaOut:
        """A dataset's entity and edge types (docs/api.md#dataset-schemas)."""
        path = f"/v1/gb/datasets/{_seg(name)}/schema?" + _qs(user_id=self._user(user_id))
        return _as(DatasetSchemaOut, self._send("GET", path)[1])

    def put_schema(
        self, name: str, schema: dict[str, Any], *, user_id: str | None = None
    ) -> DatasetSchemaOut:
        """Set a dataset's entity and edge types (``entity_types``, ``edge_types``)."""
        path = f"/v1/gb/datasets/{_seg(name)}/schema?" + _qs(user_id=self._user(user_id))
        return _as(DatasetSchemaOut, self._send("PUT", path, schema)[1])

    def settings(self, name: str, *, user_id: str | None = None) -> DatasetSettingsOut:
        """A dataset's settings in effect (docs/api.md#dataset-settings)."""
        path = f"/v1/gb/datasets/{_seg(name)}/settings?" + _qs(user_id=self._user(user_id))
        return _as(DatasetSettingsOut, self._send("GET", path)[1])

    def put_settings(
        self, name: str, settings: dict[str, Any], *, user_id: str | None = None
    ) -> DatasetSettingsOut:
        """Replace a dataset's settings (``summaries``, ``text_ttl_days``)."""
        path = f"/v1/gb/datasets/{_seg(name)}/settings?" + _qs(user_id=self._user(user_id))
        return _as(DatasetSettingsOut, self._send("PUT", path, settings)[1])

    # --- browse and forget (docs/api.md#browse-and-forget) ----------------------------

    def _browse(self, path: str, user_id: str | None, dataset: str | None, **params: Any) -> Any:
        query = _qs(user_id=self._user(user_id), dataset=dataset or self.dataset, **params)
        return self._send("GET", f"{path}?{query}")[1]

    def entities(
        self,
        *,
        q: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        user_id: str | None = None,
        dataset: str | None = None,
        type: str | None = None,
    ) -> EntitiesOut:
        """One page of entities, newest updated first (``q``: names matching;
        ``type``: of that entity type)."""
        body = self._browse(
            "/v1/gb/entities", user_id, dataset, q=q, limit=limit, cursor=cursor, type=type
        )
        return _as(EntitiesOut, body)

    def entity(
        self,
        entity_id: int,
        *,
        user_id: str | None = None,
        dataset: str | None = None,
        edge_type: str | None = None,
    ) -> EntityDetailOut:
        """An entity's page (``edge_type``: only its facts of that relation or type)."""
        path = f"/v1/gb/entities/{int(entity_id)}"
        return _as(EntityDetailOut, self._browse(path, user_id, dataset, edge_type=edge_type))

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
        query = _qs(user_id=self._user(user_id), dataset=dataset or self.dataset)
        return _as(
            ForgottenOut, self._send("DELETE", f"/v1/gb/artifacts/{int(artifact_id)}?{query}")[1]
        )

    # --- issue 44: correct, forget and audit facts (docs/api.md#correct-a-fact) --------

    def correct(
        self,
        edge_id: int,
        *,
        invalid_at: str | None = None,
        description: str | None = None,
        target: str | None = None,
        target_id: int | None = None,
        reason: str | None = None,
        user_id: str | None = None,
        dataset: str | None = None,
    ) -> CorrectedOut:
        """A fact ended (``invalid_at``) or was wrong (``description``,
        ``target``): a new fact supersedes it. (A retry of one that landed
        answers 400: the old fact is superseded already.)"""
        body = self._body(
            user_id,
            dataset,
            invalid_at=invalid_at,
            description=description,
            target=target,
            target_id=target_id,
            reason=reason,
        )
        return _as(CorrectedOut, self._send("PATCH", f"/v1/gb/edges/{int(edge_id)}", body)[1])

    def forget_fact(
        self, edge_id: int, *, user_id: str | None = None, dataset: str | None = None
    ) -> FactForgottenOut:
        """Forget one fact, keep its texts (a correction: the old fact comes back)."""
        query = _qs(user_id=self._user(user_id), dataset=dataset)
        path = f"/v1/gb/edges/{int(edge_id)}?{query}"
        return _as(FactForgottenOut, self._send("DELETE", path)[1])

    def conflicts(
        self, *, limit: int | None = None, user_id: str | None = None, dataset: str | None = None
    ) -> ConflictsOut:
        """Live facts that cannot all hold, newest first."""
        return _as(ConflictsOut, self._browse("/v1/gb/conflicts", user_id, dataset, limit=limit))

    def merges(
        self, entity_id: int, *, user_id: str | None = None, dataset: str | None = None
    ) -> MergesOut:
        """The names merged into an entity: when, from which text, and why."""
        body = self._browse(f"/v1/gb/entities/{int(entity_id)}/merges", user_id, dataset)
        return _as(MergesOut, body)

    def erase_user(self, user_id: str | None = None) -> ErasedOut:
        """Erase a user: every dataset, vector, call and inference record and
        idempotency record of theirs (202; the call record, under the same
        ``call_id``, says when it finished). Erasing a user with nothing
        stored is not an error."""
        path = f"/v1/gb/users/{_seg(self._user(user_id))}"
        return _as(ErasedOut, self._send("DELETE", path)[1])

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


def _as(model: type[M], payload: Any) -> M:
    return model.model_validate(payload)


def _qs(**params: str | int | None) -> str:
    return urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})


def _seg(value: str) -> str:
    return urllib.parse.quote(value, safe="")
