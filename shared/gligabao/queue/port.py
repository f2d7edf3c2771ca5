"""The queue port: a job is a JSON object. The consumer is injected into the
queue by whoever composes the process (the local server; on AWS, Lambda's
event source mapping calls the worker handler): a queue adapter never
imports a handler.

A consumer raises RetryLater when the job failed for a reason that may pass
(a 429, a 5xx, a timeout of the LLM or the embeddings): the queue delivers
the job again after a backoff, up to its maximum number of receives."""

from __future__ import annotations

from typing import Any, Protocol


class RetryLater(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class JobConsumer(Protocol):
    def __call__(self, job: dict[str, Any], *, final_attempt: bool) -> object:
        """Run the job; raise RetryLater to have it delivered again (never on
        the final attempt: then a transient failure ends the job)."""


class JobQueue(Protocol):
    def send(self, job: dict[str, Any]) -> None:
        """Queue one job; raises UpstreamError when it could not be queued."""
