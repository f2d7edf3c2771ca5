"""The memory as a library: the HTTP API's use cases, called in this process.

    from gligabao import Memory

    with Memory(path="agent.db", user_id="alice") as gb:   # Memory(): in memory
        gb.remember("Alice moved to Lyon in March.")
        print(gb.query("Where does Alice live?").answer)

The methods are the HTTP client's (``gligabao.client.Client``), with its
arguments and its response models; a refused or failed call raises the
error the API would have answered with, as an exception with its ``status``
and ``message`` (``gligabao.errors``: ``BadRequest`` 400, ``NotFound`` 404,
``Conflict`` 409, ``NotConfigured`` 503, ``UpstreamError`` 502...).

It is the local server's composition (``wiring``, on one SQLite file,
``store=sqlite``) without the server: no socket, no event, no request or
queue thread. What the API queues (``remember_batch``, ``respond_async``)
runs in the caller's thread before the method returns (queue/inline.py), and
its call record says how it ended. The request checks are the API's own (request models, query
parameters); there is no caller to authenticate: the process is trusted.
Each call is recorded (``call``, ``inferences``) but prints no monitoring
line or metrics: the program's stdout is not CloudWatch.

The wiring is the process's: one Memory is open at a time (opening another
while one is open raises ``RuntimeError``). ``Memory()`` keeps its file in
RAM (``/dev/shm`` where Linux has it, else the temporary folder), removed at
``close()``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from typing import Any, Literal, overload

from .. import wiring
from ..api.app import call_id_set
from ..api.schemas import (
    AcceptedOut,
    CallOut,
    DatasetsOut,
    ErasedOut,
    InferencesOut,
    QueryOut,
    RememberOut,
    SearchOut,
)
from ..config import Settings, pin_settings
from ..records.monitor import silenced
from .browse import Browsing, query_params

__all__ = ["Memory"]

_open: list[Memory] = []


def memory_settings(path: str, overrides: dict[str, Any]) -> Settings:
    """The local server's settings on ``path``, whatever the environment says
    about AWS: no DynamoDB, OpenSearch or SQS, no caller to authenticate.
    The models (LLM, embedder) come from the environment, as for `gligabao
    serve`, unless ``overrides`` (Settings' field names) says otherwise."""
    fixed: dict[str, Any] = {
        "local": True,
        "data_path": path,
        "dynamodb_endpoint": "",
        "opensearch_url": "",
        "vector_store": "",
        "remember_queue_url": "",
        "auth_mode_override": "none",
        "dev_api_key": "",
    }
    return Settings(**{**fixed, **overrides})


def _ram_folder() -> str:
    shm = "/dev/shm"
    base = shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None
    return tempfile.mkdtemp(prefix="gligabao-", dir=base)


class Memory(Browsing):
    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        user_id: str | None = None,
        dataset: str | None = None,
        **settings: Any,
    ) -> None:
        if _open:
            raise RuntimeError("a gligabao.Memory is already open in this process: close() it")
        self.user_id = user_id
        self.dataset = dataset
        self._folder = _ram_folder() if path is None else None
        data = os.path.join(self._folder, "gligabao.db") if self._folder else os.fspath(path or "")
        self.path = data
        try:
            pin_settings(memory_settings(data, settings))
        except Exception:
            self._remove_folder()
            raise
        wiring.reset()
        from ..handlers.remember_worker import process_job
        from ..queue.inline import InlineJobQueue

        self._previous_queue = wiring.use_local_queue(InlineJobQueue(process_job))
        _open.append(self)
        wiring.database()  # the file opens now: a bad path fails here, not at the first call

    # ------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the file (and remove it, for ``Memory()``); the process's
        wiring goes back to the environment's settings."""
        if self not in _open:
            return
        _open.remove(self)
        wiring.reset()
        wiring.use_local_queue(self._previous_queue)
        pin_settings(None)
        self._remove_folder()

    def _remove_folder(self) -> None:
        if self._folder:
            shutil.rmtree(self._folder, ignore_errors=True)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ write

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
        """Store a text or chat messages (as ``Client.remember``). With an
        ``idempotency_key`` a second call with it replays the first's answer.
        ``respond_async``: run as the worker runs a queued one; the answer is
        the call to read (``call``), already finished."""
        from ..api.requests import RememberRequest, validate
        from ..handlers.remember import ACCEPTED, store

        body = self._body(
            user_id,
            dataset,
            text=text,
            messages=messages,
            session_id=session_id,
            reference_time=reference_time,
            **fields,
        )

        def run() -> dict[str, Any]:
            req = validate(RememberRequest, body)
            key = idempotency_key or req.idempotency_key
            return store(req, body, key, None, queued=respond_async)

        result = self._call(run)
        if result.get("status") == ACCEPTED:
            return AcceptedOut.model_validate(result)
        return RememberOut.model_validate(result)

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
        """Remember many texts (as ``Client.remember_batch``); they are done
        when this returns, and ``call(...)`` gives the totals."""
        from ..api.batch import BatchRequest
        from ..api.requests import validate
        from ..handlers.batch import queue_batch

        body = self._body(
            user_id,
            dataset,
            items=items,
            session_id=session_id,
            reference_time=reference_time,
            **fields,
        )

        def run() -> dict[str, Any]:
            req = validate(BatchRequest, body)
            call_id = _current_call()
            return dict(queue_batch(req, body, call_id, idempotency_key or req.idempotency_key))

        return AcceptedOut.model_validate(self._call(run))

    # ------------------------------------------------------------ read

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
        from ..api.requests import QueryRequest, validate
        from ..handlers.query import ask

        body = self._body(user_id, dataset, query=query, session_id=session_id, **fields)
        result = self._call(lambda: ask(validate(QueryRequest, body), body))
        return QueryOut.model_validate(result)

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
        from ..api.requests import SearchRequest, validate
        from ..handlers.query import search_context

        body = self._body(user_id, dataset, query=query, session_id=session_id, **fields)
        result = self._call(lambda: search_context(validate(SearchRequest, body)))
        return SearchOut.model_validate(result)

    def datasets(self, *, user_id: str | None = None) -> DatasetsOut:
        from ..api.params import param_user
        from ..handlers.datasets import datasets_service

        user = self._user(user_id)
        result = self._call(lambda: datasets_service().list(param_user({"user_id": user})))
        return DatasetsOut.model_validate(result)

    def delete_dataset(self, name: str, *, user_id: str | None = None) -> None:
        from ..api.params import param_dataset, param_user
        from ..handlers.datasets import datasets_service

        user = self._user(user_id)

        def run() -> dict[str, Any]:
            datasets_service().delete(param_user({"user_id": user}), param_dataset(name))
            return {}

        self._call(run)

    def erase_user(self, user_id: str | None = None) -> ErasedOut:
        """Erase a user: every dataset, vector, record and idempotency key."""
        from ..api.params import param_user
        from ..handlers.datasets import eraser

        user = self._user(user_id)
        result = self._call(lambda: eraser().run(param_user({"user_id": user}), _current_call()))
        return ErasedOut.model_validate(result)

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
        from ..api.params import param_user
        from ..handlers.records import inferences_page

        query = query_params(
            dataset=dataset, session_id=session_id, call_id=call_id, limit=limit, cursor=cursor
        )
        user = self._user(user_id)
        result = self._call(lambda: inferences_page(param_user({"user_id": user}), query))
        return InferencesOut.model_validate(result)

    def call(self, call_id: str, *, user_id: str | None = None) -> CallOut:
        """One call's record: its status, steps, and a queued call's result."""
        from ..api.params import param_user
        from ..handlers.records import call_record

        user = self._user(user_id)
        result = self._call(lambda: call_record(param_user({"user_id": user}), call_id))
        return CallOut.model_validate(result)

    # ------------------------------------------------------------ plumbing

    def _call(self, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """One call, under its own call id, as a request gets one."""
        if self not in _open:
            raise RuntimeError("this gligabao.Memory is closed")
        with call_id_set(uuid.uuid4().hex), silenced():
            return work()

    def _user(self, user_id: str | None) -> str:
        user = user_id or self.user_id
        if not user:
            raise ValueError("user_id: give it to Memory(...) or to the call")
        return user

    def _body(self, user_id: str | None, dataset: str | None, **fields: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"user_id": self._user(user_id)}
        if dataset or self.dataset:
            body["dataset"] = dataset or self.dataset
        body.update({k: v for k, v in fields.items() if v is not None})
        return body


def _current_call() -> str:
    from ..api.app import current_call_id

    return current_call_id()
