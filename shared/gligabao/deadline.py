"""One deadline per request: the Lambda's remaining time, less a reserve to
save the call record and answer, is the budget of every call after it.

``lambda_entry`` sets it from ``context.get_remaining_time_in_millis()``;
the LLM and embeddings calls (through the Meter) run within what is left,
and the vector store and the use cases check it between calls. When it runs
out the call ends with DeadlineExceeded: a JSON 504 with a call record,
never Lambda's bare 500 after a kill. The local server sets it from
``GB_REQUEST_TIMEOUT`` (local/asgi.py). No deadline (a queued job on the
local server, a test): nothing is limited.

The local server also knows when a request's client has gone (its
``http.disconnect``): ``watched`` hands the call that signal, and the same
checks (before an embeddings batch, an LLM call, the write) end the call
with ClientGone, before anything is written if it had not committed. A
Lambda behind API Gateway cannot tell: there the deadline alone bounds it."""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from .errors import ClientGone, DeadlineExceeded

T = TypeVar("T")

# Kept back from the Lambda's remaining time: saving the call record (one
# DynamoDB write and its retries) and returning the answer.
RESERVE_S = 2.0

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "gb_deadline", default=None
)
# Set by the local server when the request's client disconnects.
_gone: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "gb_client_gone", default=None
)


@contextlib.contextmanager
def budget(seconds: float | None) -> Iterator[None]:
    """Run with this many seconds from now (None: no deadline)."""
    token = _deadline.set(None if seconds is None else time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


@contextlib.contextmanager
def watched(gone: threading.Event | None) -> Iterator[None]:
    """Run knowing that ``gone`` is set once the client has disconnected."""
    token = _gone.set(gone)
    try:
        yield
    finally:
        _gone.reset(token)


@contextlib.contextmanager
def lambda_budget(context: object) -> Iterator[None]:
    """A Lambda invocation's budget; without a Lambda context (the local
    server, which has set its own, or a test) the one already set stays."""
    seconds = from_lambda_context(context)
    if seconds is None:
        yield
        return
    with budget(seconds):
        yield


def client_gone() -> bool:
    gone = _gone.get()
    return gone is not None and gone.is_set()


def from_lambda_context(context: object) -> float | None:
    """The budget a Lambda invocation leaves, or None outside Lambda."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if remaining is None:
        return None
    return max(0.0, int(remaining()) / 1000.0 - RESERVE_S)


def remaining() -> float | None:
    end = _deadline.get()
    return None if end is None else end - time.monotonic()


def leaves(seconds: float) -> bool:
    """Whether the budget has this many seconds left (a retry's wait)."""
    left = remaining()
    return left is None or left >= seconds


def expired() -> bool:
    left = remaining()
    return left is not None and left <= 0


def check(what: str) -> None:
    """A stage boundary: raise ClientGone if the client has disconnected,
    DeadlineExceeded if the budget is spent (before starting ``what``)."""
    if client_gone():
        raise ClientGone(f"the client disconnected before {what}")
    if expired():
        raise DeadlineExceeded(f"the time budget ran out before {what}")


def within(what: str, fn: Callable[[], T]) -> T:
    """Run ``fn`` (an LLM or embeddings request) within the remaining budget.
    Past it the caller gets DeadlineExceeded; the request itself is left to
    finish or time out on a daemon thread, its result discarded (a model
    call has no side effect to undo)."""
    check(what)
    left = remaining()
    if left is None:
        return fn()
    box: dict[str, object] = {}
    ctx = contextvars.copy_context()

    def run() -> None:
        try:
            box["value"] = ctx.run(fn)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True, name="gb-deadline")
    thread.start()
    thread.join(left)
    if thread.is_alive():
        raise DeadlineExceeded(f"the time budget ran out during {what}")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]
