"""``Prefer: respond-async`` (RFC 7240), shared by remember and query: the
validated request is saved as an ``accepted`` call, queued as a job of its
kind, and answered 202 with ``Location: /v1/gb/calls/{id}``; the worker
(handlers/remember_worker.py) runs it under the same call id and the result
lands in the call record."""

from __future__ import annotations

import re
from typing import Any

from aws_lambda_powertools.event_handler import Response

from .. import wiring
from ..api.app import json_response
from ..errors import GbError
from ..records.model import new_call

# The job kind of a queued remember/batch (handlers/batch.py), here so that the
# worker tells it apart without importing the batch route's code.
BATCH_KIND = "remember_batch"

ACCEPTED = "accepted"
_RESPOND_ASYNC = re.compile(r"^\s*respond-async\s*(;.*)?$", re.I)


def wants_async(prefer: str | None) -> bool:
    """True when a Prefer header (comma-separated preferences) asks respond-async."""
    return any(_RESPOND_ASYNC.match(p) for p in (prefer or "").split(","))


def accepted_response(payload: dict[str, Any]) -> Response[str]:
    resp = json_response(202, payload)
    resp.headers["Location"] = f"/v1/gb/calls/{payload['call_id']}"
    return resp


def enqueue(
    kind: str,
    user_id: str,
    dataset: str,
    session_id: str | None,
    call_id: str,
    job: dict[str, Any],
) -> dict[str, object]:
    """Save the call as accepted, then queue the job; if it cannot be queued
    the call record says so and the client gets the error."""
    records = wiring.record_store()
    call = new_call(call_id, kind, user_id, dataset, session_id)
    call.status = ACCEPTED
    records.save_call(call)
    try:
        wiring.remember_queue().send({"kind": kind, "call_id": call_id, **job})
    except GbError as exc:
        call.status = exc.message
        records.save_call(call)
        raise
    out: dict[str, object] = {"call_id": call_id, "status": ACCEPTED}
    if session_id is not None:
        out["session_id"] = session_id
    return out
