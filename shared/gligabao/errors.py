"""Domain errors. Each carries the HTTP status the API maps it to, so that the
use cases can say *what* went wrong without knowing anything about HTTP."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

# HTTP statuses worth another try later: throttling, overload (Anthropic's
# 529), server errors.
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 529})
_TRANSIENT_NAMES = ("Timeout", "ConnectionError", "APIConnectionError", "Throttling")


def is_transient(exc: BaseException) -> bool:
    """True when a failure may pass on its own (a 429, 529 or 5xx from the
    LLM or embeddings provider, a timeout, a dropped connection): found on
    the exception or the SDK error it was raised from. A bad request, a
    refused key or an unusable reply is not."""
    seen: BaseException | None = exc
    while seen is not None:
        status = getattr(seen, "status_code", None)
        if isinstance(status, int):
            return status in TRANSIENT_STATUSES
        response = getattr(seen, "response", None)
        if isinstance(response, dict):  # botocore ClientError
            code = str(response.get("Error", {}).get("Code", ""))
            http = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            return "Throttl" in code or (isinstance(http, int) and http in TRANSIENT_STATUSES)
        if isinstance(seen, TimeoutError | ConnectionError) or any(
            n in type(seen).__name__ for n in _TRANSIENT_NAMES
        ):
            return True
        seen = seen.__cause__
    return False


class GbError(Exception):
    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(GbError):
    status = 400


class Unauthorized(GbError):
    status = 401


class Forbidden(GbError):
    status = 403


class NotFound(GbError):
    status = 404


class Conflict(GbError):
    status = 409


class Busy(Conflict):
    """A name or fact this call needs is leased by a concurrent write that
    has neither landed nor expired: try again after ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = max(1, retry_after)


class KeyReused(GbError):
    """An Idempotency-Key sent again with another request (IETF draft: 422)."""

    status = 422


class PayloadTooLarge(GbError):
    status = 413


class UpstreamError(GbError):
    """An LLM, embeddings, vector-store or database call failed or returned
    something unusable."""

    status = 502

    def __init__(self, message: str, usage: object | None = None, detail: str = "") -> None:
        # ``message`` names the upstream and the kind of failure (it reaches
        # the client); ``detail`` (exception classes, request IDs, table
        # names) only goes to the log, with the call id.
        super().__init__(message)
        self.usage = usage  # what the upstream reported before the reply was rejected
        self.detail = detail


class Truncated(UpstreamError):
    """The LLM's reply stopped at its output limit (``max_tokens``): a
    shorter input may fit."""


class NotConfigured(GbError):
    """The LLM a call needs has no credentials, or a client it needs is not
    installed."""

    status = 503


def optional_sdk(module: str, needed_for: str, package: str = "") -> Any:
    """Import a client only some configurations use: on AWS it is in the
    clients layer, which the template attaches only when a parameter needs it
    (layers/clients). Missing, the call is not configured (503), in words that
    say where the package comes from, rather than an import error (500)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        raise NotConfigured(
            f"{needed_for} needs the Python package {package or module}, which is not "
            "installed (on AWS the stack's clients layer holds it, attached when a parameter "
            "uses it; locally: pip install 'gligabao[clients]')"
        ) from exc


def failure_kind(exc: BaseException) -> str:
    """The kind of a client library's failure, in words a client may see
    (never the exception class, a request ID or a resource name)."""
    name = type(exc).__name__.lower()
    for words, kind in (
        (("timeout", "timedout"), "timed out"),
        (("connect",), "unreachable"),
        (("ratelimit", "throttl"), "throttled"),
        (("auth", "permission", "accessdenied", "credential"), "access denied"),
        (("notfound",), "not found"),
    ):
        if any(w in name for w in words):
            return kind
    return "an error"


def detail_of(exc: BaseException) -> str:
    """Everything about a failure, for the log only."""
    return f"{type(exc).__name__}: {exc}"


class VectorIndexMissing(GbError):
    """A vector index a write needs does not exist (the deploy or
    `gligabao bootstrap` creates it; a write never does)."""

    status = 503


class DeadlineExceeded(GbError):
    """The request's time budget (the Lambda's remaining time) ran out."""

    status = 504


class ClientGone(GbError):
    """The request's client disconnected (the local server can tell): the
    call stopped at a stage boundary. Nobody reads the answer; the status
    (nginx's 499) is for the call record and the log."""

    status = 499


def mapped_to_upstream(
    catch: tuple[type[BaseException], ...], to_error: Callable[[BaseException], UpstreamError]
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator: the wrapped method's ``catch`` failures become the
    UpstreamError ``to_error`` makes of them; domain errors pass through (a
    store adapter's calls, whatever its client library raises)."""

    def deco(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(*args, **kwargs)
            except GbError:
                raise
            except catch as exc:
                raise to_error(exc) from exc

        return wrapper

    return deco
