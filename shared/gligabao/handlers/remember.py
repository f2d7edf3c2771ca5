"""POST /v1/gb/remember: synchronous by default; with ``Prefer: respond-async``
(RFC 7240) the validated request is queued and answered 202 with its call id,
and the remember worker does the work (handlers/remember_worker.py). POST
/v1/gb/remember/batch, always queued (handlers/batch.py). And POST
/v1/gb/entities/{id}/split (operators). PATCH /v1/gb/edges/{id} (correct a
fact: it embeds the corrected fact, as a remember does)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response

from .. import clock, wiring
from ..api.app import current_call_id, json_body, json_response, lambda_entry, make_app, run_call
from ..api.auth import authorize
from ..api.params import header_idempotency_key, param_id
from ..api.requests import CorrectRequest, RememberRequest, SplitRequest, validate
from ..config import settings
from ..errors import NotConfigured
from .jobs import ACCEPTED, accepted_response, enqueue, wants_async
from .remember_input import remember_input

app = make_app()
__all__ = ["ACCEPTED", "lambda_handler", "wants_async"]


NO_EXTRACT_HINT = '; "extract": false stores the text as passages, which needs no LLM'


def check_llm(req: RememberRequest) -> None:
    """503 when the remember needs the LLM and it is not configured (the
    message names the provider, and says what works without one)."""
    if req.extract and not settings().llm_configured:
        raise NotConfigured(settings().llm_missing + NO_EXTRACT_HINT)


@app.post("/v1/gb/remember")
def remember() -> Response[str]:
    body = json_body(app)
    req = validate(RememberRequest, body)
    authorize(app.current_event, req.user_id)
    header_key = header_idempotency_key(app.current_event.headers)
    queued = wants_async(app.current_event.headers.get("prefer"))
    result = store(req, body, header_key or req.idempotency_key, app.lambda_context, queued=queued)
    if result.get("status") == ACCEPTED:  # queued now, or a replayed 202
        return accepted_response(result)
    return json_response(200, result)


def store(
    req: RememberRequest,
    body: dict[str, Any],
    key: str | None,
    lambda_context: Any,
    *,
    queued: bool = False,
) -> dict[str, Any]:
    """Remember an authorized request, once per idempotency key: now, or
    queued for the worker (the MCP ``remember`` tool calls this too)."""
    call_id = current_call_id()
    inp = remember_input(req, call_id, req.reference_time or clock.now_str())
    check_llm(req)

    def work() -> dict[str, object]:
        return run_call(
            wiring.call_services(),
            "remember",
            req.user_id,
            req.dataset,
            req.session_id,
            lambda meter: wiring.remember_service().run(inp, meter),
        )

    def queue() -> dict[str, object]:
        return queue_remember(body, req, call_id, inp.reference_time)

    run = queue if queued else work
    if not key:
        return run()
    return wiring.idempotency().once(req.user_id, key, run, lambda_context, fingerprint(body))


def fingerprint(body: dict[str, Any]) -> str:
    """The request's fingerprint, stored with its idempotency key: the body
    as JSON with sorted keys, less the key itself (in the body or not, the
    same request); not the mode (``Prefer``), which a repeat may change."""
    import hashlib
    import json

    rest = {k: v for k, v in body.items() if k != "idempotency_key"}
    canonical = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def queue_remember(
    body: dict[str, Any], req: RememberRequest, call_id: str, reference_time: str
) -> dict[str, object]:
    job = {"reference_time": reference_time, "request": body}
    return enqueue("remember", req.user_id, req.dataset, req.session_id, call_id, job)


# The batch and split routes share this function but not a remember's code: each
# imports its own (its request model, use case) when first called, not at the
# function's cold start (docs/performance.md).
@app.post("/v1/gb/remember/batch")
def remember_batch() -> Response[str]:
    from ..api.batch import BatchRequest
    from .batch import queue_batch

    body = json_body(app)
    req = validate(BatchRequest, body)
    authorize(app.current_event, req.user_id)
    header_key = header_idempotency_key(app.current_event.headers)
    return accepted_response(
        queue_batch(req, body, current_call_id(), header_key or req.idempotency_key)
    )


# The operators' undo of a wrong merge: it writes the graph as remember does,
# so it runs in the same function (its stores, embedder and records).
@app.post("/v1/gb/entities/<id>/split")
def split(id: str) -> Response[str]:
    from ..memory.split import SplitInput

    eid = param_id(id, "id")
    req = validate(SplitRequest, json_body(app))
    authorize(app.current_event, req.user_id, operator_only=True)
    inp = SplitInput(req.user_id, req.dataset, eid, req.name, req.edges, req.mentions)
    result = run_call(
        wiring.call_services(),
        "split",
        req.user_id,
        req.dataset,
        None,
        lambda meter: wiring.split_service().run(inp, meter),
    )
    return json_response(200, result)


# --- issue 44: correct a fact ------------------------------------------------------
@app.patch("/v1/gb/edges/<id>")
def correct_edge(id: str) -> Response[str]:
    edge_id = param_id(id, "id")
    req = validate(CorrectRequest, json_body(app))
    authorize(app.current_event, req.user_id, operator_ok=True)
    return json_response(200, correct(app.current_event, req, edge_id))


def correct(event: Any, req: CorrectRequest, edge_id: int) -> dict[str, Any]:
    """Correct one authorized fact (the MCP ``correct_fact`` tool calls this too)."""
    from ..api.auth import principal
    from ..memory.correct import Correct, CorrectInput

    inp = CorrectInput(
        req.user_id,
        req.dataset,
        edge_id,
        principal(event) or req.user_id,
        req.invalid_at,
        req.description,
        req.target,
        req.target_id,
        req.reason,
    )
    service = Correct(wiring.graph_store(), wiring.vector_index())
    return run_call(
        wiring.call_services(),
        "correct",
        req.user_id,
        req.dataset,
        None,
        lambda meter: service.run(inp, meter),
    )


lambda_handler = lambda_entry(app)
