"""JobQueue in this process: jobs run on a small background thread pool (the
local server, where no SQS queue is configured). Jobs still waiting when the
process ends are lost; their calls stay ``accepted``."""

from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ..records.monitor import logger

WORKERS = 4


class LocalJobQueue:
    def __init__(self, workers: int = WORKERS) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gb-remember")

    def send(self, job: dict[str, Any]) -> None:
        # The same round trip through JSON as an SQS message body.
        self.submit(json.loads(json.dumps(job)))

    def submit(self, job: dict[str, Any]) -> Future[None]:
        return self._pool.submit(_run, job)

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait)


def _run(job: dict[str, Any]) -> None:
    from ..handlers.remember_worker import process_job

    try:
        process_job(job)
    except Exception:  # the call record already says what failed
        logger.exception("queued remember failed", extra={"call_id": job.get("call_id")})
