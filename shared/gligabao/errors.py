"""Domain errors. Each carries the HTTP status the API maps it to, so that the
use cases can say *what* went wrong without knowing anything about HTTP."""

from __future__ import annotations


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
    """The LLM a call needs has no credentials."""

    status = 503


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
