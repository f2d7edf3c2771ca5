"""The worker: runs queued remembers and queries (``Prefer: respond-async``).

Deployed, an SQS event source feeds ``lambda_handler`` (partial batch
responses, ``partial_batch_response``); locally the in-process queue
is given ``process_job`` as its consumer. A job runs the remember use case
through ``run_call`` under the call id its request was answered with, so the
call record goes accepted -> running -> ok (with the response under
``result``) or the error.

Failures that may pass (an LLM or embeddings 429, 529, 5xx or timeout) leave
the job on the queue: the call record says ``retrying: <error>``, the
message is reported as a batch item failure and made visible again after a
backoff, and the next receive runs it again. On the last receive
(``GB_REMEMBER_MAX_RECEIVES``, the queue's maxReceiveCount) such a failure
is final. Other failures of the use case (bad input, a 4xx) end the call at
once: retrying the same input would fail the same way.

SQS delivers at least once: a job whose call record is already final is
skipped, so a redelivered message does not remember twice. A job whose call
record is gone is dropped: its user was erased (DELETE /v1/gb/users/{id}). An unexpected
failure (``internal error: ...``, a crash) raises, and the message is
retried and then dead-lettered."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from .. import deadline, wiring
from ..api.app import RETRYING, call_id_set, run_call
from ..api.requests import QueryRequest, RememberRequest, validate
from ..errors import GbError, is_transient
from ..queue.port import RetryLater
from ..queue.sqs import SqsJobQueue
from ..records.monitor import lambda_stack, logger
from .jobs import BATCH_KIND
from .remember_input import remember_input

if TYPE_CHECKING:
    from ..api.batch import BatchRequest

NOT_DONE = ("accepted", "running")
# Visibility backoff of a job to retry: 30 s, 60 s, 120 s ... at most 15 min.
BACKOFF_S = 30
MAX_BACKOFF_S = 900


def _final(status: str) -> bool:
    return status not in NOT_DONE and not status.startswith(("internal error", RETRYING))


def process_job(job: dict[str, Any], *, final_attempt: bool = True) -> bool:
    """Run one queued remember; False when it had already been done. Raises
    RetryLater on a transient failure unless this is the final attempt."""
    call_id = str(job["call_id"])
    kind = str(job.get("kind", "remember"))
    if kind == wiring.SUMMARIZE_KIND:  # not a request's call: it has no record yet
        from .summarize import run_summary_job

        return run_summary_job(job, final_attempt=final_attempt)
    req: QueryRequest | RememberRequest | BatchRequest
    if kind == "query":
        req = validate(QueryRequest, job["request"])
    elif kind == BATCH_KIND:
        # A batch's request model and use case load with the first queued batch:
        # most jobs are single remembers (docs/performance.md).
        from ..api.batch import BatchRequest

        req = validate(BatchRequest, job["request"])
    else:
        req = validate(RememberRequest, job["request"])
    existing = wiring.record_store().get_call(req.user_id, call_id)
    if existing is None:
        # The request saved it (accepted) before queueing the job: gone
        # means the user was erased since, and the job goes with them.
        logger.info("queued job of an erased user dropped", extra={"call_id": call_id})
        return False
    if _final(existing.status):
        logger.info("queued job already done", extra={"call_id": call_id, "kind": kind})
        return False
    retry_if = None if final_attempt else is_transient
    with call_id_set(call_id):
        try:
            if isinstance(req, QueryRequest):
                # The query route's code (retrieval, context, prompts) loads with the
                # first queued query: most jobs are remembers (docs/performance.md).
                from .query import run_query

                run_query(req, background=True, retry_if=retry_if)
            elif isinstance(req, RememberRequest):
                inp = remember_input(req, call_id, str(job["reference_time"]))
                run_call(
                    wiring.call_services(),
                    "remember",
                    req.user_id,
                    req.dataset,
                    req.session_id,
                    lambda meter: wiring.remember_service().run(inp, meter),
                    background=True,
                    retry_if=retry_if,
                )
            else:
                from .batch import run_batch

                run_batch(req, call_id, job, retry_if)
        except GbError as exc:
            if retry_if is not None and retry_if(exc):
                raise RetryLater(exc.message) from exc
            # Final: the call record holds the error for the client to read.
            logger.warning("queued job failed", extra={"call_id": call_id, "kind": kind})
    return True


def _max_receives() -> int:
    return wiring.settings().remember_max_receives


def _record_handler(record: SQSRecord) -> None:
    receives = int(record.attributes.get("ApproximateReceiveCount") or 1)
    try:
        process_job(json.loads(record.body), final_attempt=receives >= _max_receives())
    except RetryLater:
        delay = min(MAX_BACKOFF_S, BACKOFF_S * 2 ** (receives - 1))
        delay += random.randint(0, delay // 4)  # jitter: a burst does not return as one
        queue = wiring.remember_queue()
        if isinstance(queue, SqsJobQueue):
            try:
                queue.retry_later(record.receipt_handle, delay)
            except Exception:  # then the queue's own visibility timeout applies
                logger.exception("could not set the retry backoff")
        raise


def partial_batch_response(
    event: dict[str, Any], record_handler: Callable[[SQSRecord], None]
) -> dict[str, list[dict[str, str]]]:
    """Each record of an SQS event through ``record_handler``; those that
    raised are reported by message id and redelivered, the others deleted.
    What Powertools' BatchProcessor with ``process_partial_response`` did for
    a standard queue (``raise_on_entire_batch_failure=False``), without its
    batch module: it imports asyncio and every stream's record types, 23 ms
    of the worker's 172 ms cold import (load 5, docs/performance.md)."""
    failures: list[dict[str, str]] = []
    for raw in event.get("Records") or []:
        record = SQSRecord(raw)
        try:
            record_handler(record)
        except Exception:  # reported: SQS redelivers it (after its backoff)
            logger.debug("queued job failed, left on the queue", exc_info=True)
            failures.append({"itemIdentifier": record.message_id})
    return {"batchItemFailures": failures}


@lambda_stack
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    # A batch whose every record failed is still a partial response: SQS
    # redelivers the failed ones (after their backoff), the invocation is
    # not an error.
    with deadline.budget(deadline.from_lambda_context(context)):
        return dict(partial_batch_response(event, _record_handler))
