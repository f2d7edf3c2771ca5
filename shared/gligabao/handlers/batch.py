"""POST /v1/gb/remember/batch, asynchronous by nature: the validated request
is queued (``jobs.enqueue``) and answered 202 with its call ID; the worker
runs ``run_batch`` under that ID, and the call record's ``result`` shows the
progress while it runs (texts done, skipped, failed, pieces, LLM calls,
tokens, cost) and the totals at the end. The batch's key (``Idempotency-Key``
or ``idempotency_key``; else the call ID) names its ledger: a rerun with the
same key and texts skips the texts already committed."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from .. import clock, wiring
from ..api.app import run_call
from ..api.batch import BatchRequest
from ..api.requests import MAX_MESSAGES
from ..api.stages import levels, models
from ..config import settings
from ..crash import crash_point
from ..errors import GbError, NotConfigured
from ..events.model import batch_ended
from ..memory.batch import BatchInput, Item, ledger_id
from ..memory.options import StageOptions
from ..records.meter import Meter
from ..records.monitor import logger
from .jobs import BATCH_KIND, enqueue

KIND = BATCH_KIND
NO_EXTRACT_HINT = '; items with "extract": false are stored as passages, which needs no LLM'


def batch_input(req: BatchRequest, call_id: str, key: str | None, now: str) -> BatchInput:
    cfg = settings()
    options = StageOptions(
        cfg.llm_model,
        levels(req.reasoning, "extract"),
        models(req.models),
    )
    reference = req.reference_time or now
    items = [
        Item(
            it.said,
            it.said_at or reference,
            it.said_by,
            it.session_id or req.session_id,
            it.extract,
        )
        for it in req.items
    ]
    # The ledger of the texts as given: one without a time gets "now", which
    # a rerun's request would not share.
    given: list[object] = [req.session_id, req.reference_time]
    given += [it.model_dump() for it in req.items]
    return BatchInput(
        req.user_id,
        req.dataset,
        items,
        options,
        key or call_id,
        call_id,
        ledger_id(req.user_id, req.dataset, key or call_id, given),
        cfg.batch_window_tokens,
        min(cfg.batch_window_texts, MAX_MESSAGES),
    )


def check_llm(req: BatchRequest) -> None:
    if any(it.extract for it in req.items) and not settings().llm_configured:
        raise NotConfigured(settings().llm_missing + NO_EXTRACT_HINT)


def queue_batch(
    req: BatchRequest, body: dict[str, Any], call_id: str, key: str | None
) -> dict[str, object]:
    """Check what can fail at once (the body, the LLM's key), then queue."""
    batch_input(req, call_id, key, clock.now_str())  # the options' 400s, before the 202
    check_llm(req)
    job = {"reference_time": req.reference_time or clock.now_str(), "key": key, "request": body}
    return enqueue(KIND, req.user_id, req.dataset, req.session_id, call_id, job)


def run_batch(
    req: BatchRequest,
    call_id: str,
    job: dict[str, Any],
    retry_if: Callable[[GbError], bool] | None = None,
    on_progress: Callable[[dict[str, object]], None] = lambda progress: None,
) -> dict[str, Any]:
    """Run a queued batch (the worker; ``gligabao ingest`` on the local file,
    which also watches ``on_progress``). Its end's event (``batch.finished``
    or ``batch.failed``, its ID from the call's) is written in the graph
    store's outbox before the call record says the batch ended, and delivered
    after it: a process killed in between has it delivered by the outbox's
    recovery (docs/events.md); one killed before has none."""
    inp = batch_input(req, call_id, job.get("key"), str(job["reference_time"]))
    records = wiring.record_store()
    ended: list[dict[str, Any]] = []

    def report(meter: Meter, progress: dict[str, object]) -> None:
        meter.call.result = progress  # shown by GET /v1/gb/calls/{id} while running
        # progress is news, not the work: never fail on it
        with contextlib.suppress(Exception):
            records.save_call(meter.call)
        on_progress(progress)

    def work(meter: Meter) -> dict[str, Any]:
        with _ending(req, call_id, retry_if, ended):
            return dict(wiring.batch_service().run(inp, meter, lambda p: report(meter, p)))

    try:
        return run_call(
            wiring.call_services(),
            KIND,
            req.user_id,
            req.dataset,
            req.session_id,
            work,
            background=True,
            retry_if=retry_if,
        )
    finally:
        crash_point("batch_ended")  # tests: the event waits in the outbox
        if ended:
            # never fails the batch: what was not delivered waits in the outbox
            try:
                wiring.graph_store().send_events(ended)
            except Exception:
                logger.exception("the batch's event waits in the outbox")


@contextlib.contextmanager
def _ending(
    req: BatchRequest,
    call_id: str,
    retry_if: Callable[[GbError], bool] | None,
    ended: list[dict[str, Any]],
) -> Iterator[None]:
    """Keep the batch's end's event in the outbox as the work ends (a
    failure to be retried ends nothing: its rerun makes the event)."""

    def keep(error: str | None) -> None:
        event = batch_ended(req.user_id, req.dataset, call_id, error).public()
        wiring.graph_store().keep_events([event])
        ended.append(event)

    try:
        yield
    except GbError as exc:
        if retry_if is None or not retry_if(exc):
            keep(f"{exc.status}")
        raise
    except Exception:
        keep("500")
        raise
    keep(None)
