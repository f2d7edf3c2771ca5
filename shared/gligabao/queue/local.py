"""JobQueue in this process: jobs run on a small background thread pool (the
local server, where no SQS queue is configured), with the consumer the
composer hands it. A job that asks to be retried (RetryLater) runs again
after a backoff, up to ``max_receives`` runs in all, as SQS would redeliver
it. Jobs still waiting when the process ends are lost; their calls stay
``accepted``."""

from __future__ import annotations

import json
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ..records.monitor import logger
from .port import JobConsumer, RetryLater

WORKERS = 4
MAX_RECEIVES = 3  # as the SQS queue's redrive policy
BACKOFF_S = 0.5


class LocalJobQueue:
    def __init__(
        self,
        consumer: JobConsumer,
        workers: int = WORKERS,
        *,
        max_receives: int = MAX_RECEIVES,
        backoff_s: float = BACKOFF_S,
    ) -> None:
        self._consumer = consumer
        self._max_receives = max_receives
        self._backoff_s = backoff_s
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gb-remember")

    def send(self, job: dict[str, Any]) -> None:
        # The same round trip through JSON as an SQS message body.
        self.submit(json.loads(json.dumps(job)))

    def submit(self, job: dict[str, Any], receive: int = 1) -> Future[None]:
        return self._pool.submit(self._run, job, receive)

    def _run(self, job: dict[str, Any], receive: int) -> None:
        try:
            self._consumer(job, final_attempt=receive >= self._max_receives)
        except RetryLater as exc:
            delay = self._backoff_s * 2 ** (receive - 1)
            logger.info(
                "queued job will run again",
                extra={"call_id": job.get("call_id"), "reason": exc.message, "delay_s": delay},
            )
            timer = threading.Timer(delay, self.submit, args=(job, receive + 1))
            timer.daemon = True
            timer.start()
        except Exception:  # the call record already says what failed
            logger.exception("queued job failed", extra={"call_id": job.get("call_id")})

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait)
