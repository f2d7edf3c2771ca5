"""The remember worker: runs queued remembers (``Prefer: respond-async``).

Deployed, an SQS event source feeds ``lambda_handler`` (partial batch
responses through Powertools' BatchProcessor); locally the in-process queue
calls ``process_job``. A job runs the remember use case through ``run_call``
under the call id its request was answered with, so the call record goes
accepted -> running -> ok (with the response under ``result``) or the error.

SQS delivers at least once: a job whose call record is already final (``ok``
or an error of the use case) is skipped, so a redelivered message does not
remember twice. An unexpected failure (``internal error: ...``, a crash)
raises, and the message is retried and then dead-lettered."""

from __future__ import annotations

import json
from typing import Any

from .. import wiring
from ..api.app import call_id_set, run_call
from ..api.requests import RememberRequest, validate
from ..errors import GbError
from ..records.monitor import logger

RETRYABLE = ("accepted", "running")


def _final(status: str) -> bool:
    return status not in RETRYABLE and not status.startswith("internal error")


def process_job(job: dict[str, Any]) -> bool:
    """Run one queued remember; False when it had already been done."""
    from .remember import remember_input

    call_id = str(job["call_id"])
    req = validate(RememberRequest, job["request"])
    existing = wiring.record_store().get_call(req.user_id, call_id)
    if existing is not None and _final(existing.status):
        logger.info("remember job already done", extra={"call_id": call_id})
        return False
    with call_id_set(call_id):
        inp = remember_input(req, call_id, str(job["reference_time"]))
        try:
            run_call(
                "remember",
                req.user_id,
                req.dataset,
                req.session_id,
                lambda meter: wiring.remember_service().run(inp, meter),
                background=True,
            )
        except GbError:
            # Final: the call record holds the error for the client to read;
            # retrying the same input would fail the same way.
            logger.warning("queued remember failed", extra={"call_id": call_id})
    return True


def _record_handler(record: Any) -> None:
    process_job(json.loads(record.body))


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    from aws_lambda_powertools.utilities.batch import (
        BatchProcessor,
        EventType,
        process_partial_response,
    )

    processor = BatchProcessor(event_type=EventType.SQS)
    return dict(
        process_partial_response(
            event=event, record_handler=_record_handler, processor=processor, context=context
        )
    )
