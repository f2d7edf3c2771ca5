"""The queue port: a job is a JSON object; whoever consumes it calls
``gligabao.handlers.remember_worker.process_job``."""

from __future__ import annotations

from typing import Any, Protocol


class JobQueue(Protocol):
    def send(self, job: dict[str, Any]) -> None:
        """Queue one job; raises UpstreamError when it could not be queued."""
