"""X-Ray subsegments without the X-Ray SDK.

With ``Tracing: Active`` (template.yaml) Lambda itself records the
invocation's segment; this module adds what the SDK (through Powertools'
Tracer) added: a ``## <handler>`` subsegment per invocation, annotated with
``ColdStart`` and ``Service``, and under it one subsegment per AWS call
(DynamoDB, SQS, Bedrock, ...; ``namespace: aws``, with the operation, table
and request ID) and per request to another service (the LLM, the embeddings,
OpenSearch; ``namespace: remote``). Each is sent when it ends, as a document
of its own, to the X-Ray daemon Lambda runs (UDP, ``AWS_XRAY_DAEMON_ADDRESS``),
in the format the SDK streams subsegments in.

Why not the SDK: importing ``aws_xray_sdk.core`` costs 180-300 ms of every
cold start (it loads botocore's session and docs for its sampling client and
scans the installed packages for plugins); this module costs nothing at
import (stdlib only) and, outside a sampled Lambda invocation, one context
variable lookup per call. AWS calls are traced by :mod:`.aws_calls`.

Tracing is on when running in Lambda (``LAMBDA_TASK_ROOT``), not under
``sam local`` (``AWS_SAM_LOCAL``), ``POWERTOOLS_TRACE_DISABLED`` is not true,
and the invocation's trace header (``_X_AMZN_TRACE_ID``) says ``Sampled=1``.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

TRACE_ENV = "_X_AMZN_TRACE_ID"
DAEMON_ENV = "AWS_XRAY_DAEMON_ADDRESS"
DEFAULT_DAEMON = "127.0.0.1:2000"
SERVICE = "gligabao"
_HEADER = b'{"format": "json", "version": 1}\n'
_TRUE = {"1", "true", "yes", "on"}


def _new_id() -> str:
    """A subsegment or exception ID: 16 hex digits."""
    return os.urandom(8).hex()


@dataclass
class Span:
    """One subsegment being recorded; ``doc`` ends up in the document as is."""

    trace_id: str
    parent_id: str
    name: str
    id: str = field(default_factory=_new_id)
    start: float = field(default_factory=time.time)
    doc: dict[str, Any] = field(default_factory=dict)

    def document(self) -> dict[str, Any]:
        return {
            "type": "subsegment",
            "id": self.id,
            "trace_id": self.trace_id,
            "parent_id": self.parent_id,
            "name": self.name,
            "start_time": self.start,
            "end_time": time.time(),
            **self.doc,
        }


_current: contextvars.ContextVar[Span | None] = contextvars.ContextVar("gb_xray", default=None)
# The invocation's own subsegment: the parent of calls made on threads that
# did not inherit the context (a store's own pool). Lambda runs one
# invocation at a time per process.
_invocation: list[Span] = []
_cold = [True]
_sock: list[Any] = []  # the UDP socket, opened by the first send
_lock = threading.Lock()


def _in_lambda() -> bool:
    env = os.environ
    if not env.get("LAMBDA_TASK_ROOT") or env.get("AWS_SAM_LOCAL"):
        return False
    return env.get("POWERTOOLS_TRACE_DISABLED", "").strip().lower() not in _TRUE


def trace_header() -> tuple[str, str, bool] | None:
    """(root trace ID, parent segment ID, sampled) of this invocation, or None."""
    raw = os.environ.get(TRACE_ENV, "")
    parts = dict(p.split("=", 1) for p in raw.split(";") if "=" in p)
    root, parent = parts.get("Root"), parts.get("Parent")
    if not root or not parent:
        return None
    return root, parent, parts.get("Sampled") == "1"


def _daemon() -> tuple[str, int]:
    """The daemon's UDP address: "host:port", or "tcp:h:p udp:h:p"."""
    parts = (os.environ.get(DAEMON_ENV) or DEFAULT_DAEMON).split()
    chosen = next((p.removeprefix("udp:") for p in parts if p.startswith("udp:")), parts[0])
    host, _, port = chosen.removeprefix("tcp:").rpartition(":")
    return host, int(port)


def send(doc: dict[str, Any]) -> None:
    """One document to the daemon; never raises (tracing must not fail a call)."""
    try:
        with _lock:
            if not _sock:
                import socket

                _sock.append(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
            sock = _sock[0]
        sock.sendto(_HEADER + json.dumps(doc, default=str).encode(), _daemon())
    except Exception:  # a lost trace is better than a failed request
        pass


@contextlib.contextmanager
def invocation(handler_name: str) -> Iterator[Span | None]:
    """The ``## handler`` subsegment of one invocation (a no-op when not traced)."""
    cold, _cold[0] = _cold[0], False
    header = trace_header() if _in_lambda() else None
    if header is None or not header[2]:
        yield None
        return
    root, parent, _ = header
    span = Span(root, parent, f"## {handler_name}")
    span.doc["annotations"] = {"ColdStart": cold, "Service": SERVICE}
    token = _current.set(span)
    _invocation[:] = [span]
    try:
        yield span
    except BaseException as exc:
        _fail(span, exc, fault=True)
        raise
    finally:
        _current.reset(token)
        _invocation.clear()
        send(span.document())


@contextlib.contextmanager
def subsegment(name: str, namespace: str | None = None, **doc: Any) -> Iterator[Span | None]:
    """A child of the current subsegment (no-op outside a traced invocation).
    An exception marks it as a fault (``fault``; ``error`` for a 4xx set by
    the caller) with its type and message, and passes on."""
    parent = current()
    if parent is None:
        yield None
        return
    span = Span(parent.trace_id, parent.id, name)
    if namespace:
        span.doc["namespace"] = namespace
    span.doc.update(doc)
    token = _current.set(span)
    try:
        yield span
    except BaseException as exc:
        _fail(span, exc, fault="error" not in span.doc and "throttle" not in span.doc)
        raise
    finally:
        _current.reset(token)
        send(span.document())


def _fail(span: Span, exc: BaseException, *, fault: bool) -> None:
    if fault:
        span.doc["fault"] = True
    span.doc["cause"] = {
        "exceptions": [{"id": _new_id(), "type": type(exc).__name__,
                        "message": str(exc)[:1000]}]
    }


def http_status(span: Span | None, status: int) -> None:
    """Record a response status, and flag it as X-Ray does (429 throttle, 4xx
    error, 5xx fault)."""
    if span is None:
        return
    span.doc.setdefault("http", {})["response"] = {"status": status}
    if status == 429:
        span.doc["throttle"] = span.doc["error"] = True
    elif 400 <= status < 500:
        span.doc["error"] = True
    elif status >= 500:
        span.doc["fault"] = True


def current() -> Span | None:
    """The subsegment new ones would go under (None: not tracing)."""
    return _current.get() or (_invocation[0] if _invocation else None)


def model_request(provider: str, stage: str, model: str) -> contextlib.AbstractContextManager[Span | None]:
    """An LLM or embeddings request: a ``remote`` subsegment named by the
    provider ("local" for the in-process model: not remote)."""
    return subsegment(
        provider,
        None if provider == "local" else "remote",
        metadata={SERVICE: {"stage": stage, "model": model}},
    )
