"""JobQueue that runs each job as it is sent, in the sender's thread
(``gligabao.Memory``): a library call that queues (a batch, a
``respond_async`` remember or query) has its work done when it returns,
with no thread of its own. A job that asks to be retried (RetryLater) runs
again at once, up to ``max_receives`` runs in all, as SQS would redeliver
it (without SQS's wait: the caller is waiting)."""

from __future__ import annotations

import json
from typing import Any

from ..records.monitor import logger
from .port import JobConsumer, RetryLater

MAX_RECEIVES = 3  # as the SQS queue's redrive policy


class InlineJobQueue:
    def __init__(self, consumer: JobConsumer, *, max_receives: int = MAX_RECEIVES) -> None:
        self._consumer = consumer
        self._max_receives = max_receives

    def send(self, job: dict[str, Any]) -> None:
        job = json.loads(json.dumps(job))  # the same round trip as an SQS message body
        for receive in range(1, self._max_receives + 1):
            try:
                self._consumer(job, final_attempt=receive >= self._max_receives)
                return
            except RetryLater as exc:
                logger.info(
                    "queued job will run again",
                    extra={"call_id": job.get("call_id"), "reason": exc.message},
                )
            except Exception:  # the call record already says what failed
                logger.exception("queued job failed", extra={"call_id": job.get("call_id")})
                return
