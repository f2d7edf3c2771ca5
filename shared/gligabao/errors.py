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


class PayloadTooLarge(GbError):
    status = 413


class UpstreamError(GbError):
    """An LLM, embeddings, vector-store or database call failed or returned
    something unusable."""

    status = 502

    def __init__(self, message: str, usage: object | None = None) -> None:
        super().__init__(message)
        self.usage = usage  # what the upstream reported before the reply was rejected


class NotConfigured(GbError):
    """The LLM a call needs has no credentials."""

    status = 503


class VectorIndexMissing(GbError):
    """A vector index a write needs does not exist (the deploy or
    `gligabao bootstrap` creates it; a write never does)."""

    status = 503


class DeadlineExceeded(GbError):
    """The request's time budget (the Lambda's remaining time) ran out."""

    status = 504
