"""The entity summaries' job (memory/summaries.py), run by the worker like a
queued remember (the ended sessions' summaries too, memory/sessions.py): deployed by the SQS worker, locally on the in-process
queue's threads; never on a request's path. Each job is a recorded call of
type ``summarize`` whose inferences have the stage ``summarize_entity``
(``GET /v1/gb/inferences`` lists them with their cost). A job that leaves
stale entities (it made its ``GB_SUMMARY_CALLS`` calls) queues the next."""

from __future__ import annotations

from typing import Any

from .. import wiring
from ..api.app import call_id_set, run_call
from ..errors import GbError, is_transient
from ..models import DatasetKey
from ..queue.port import RetryLater
from ..records.meter import Meter
from ..records.monitor import logger


def _both(key: DatasetKey, meter: Meter) -> dict[str, Any]:
    """The stale entities' summaries, then the ended sessions' (one job)."""
    done = wiring.summarizer().run(key, meter)
    sessions = wiring.session_summarizer().run(key, meter)
    return {
        **done,
        "calls": done["calls"] + sessions["calls"],
        "sessions": sessions["sessions"],
        "more": done["more"] or sessions["more"],
    }


def run_summary_job(job: dict[str, Any], *, final_attempt: bool = True) -> bool:
    key = DatasetKey(str(job["user_id"]), str(job["dataset"]))
    call_id = str(job.get("call_id") or "")
    retry_if = None if final_attempt else is_transient
    with call_id_set(call_id):
        try:
            result = run_call(
                wiring.call_services(),
                "summarize",
                key.user_id,
                key.dataset,
                None,
                lambda meter: _both(key, meter),
                retry_if=retry_if,
            )
        except GbError as exc:
            if retry_if is not None and retry_if(exc):
                raise RetryLater(exc.message) from exc
            logger.warning("summary job failed", extra={"call_id": call_id})
            return False
    if result.get("more"):
        wiring.schedule_summaries(key)
    return True
