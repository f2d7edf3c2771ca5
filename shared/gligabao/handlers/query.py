"""POST /v1/gb/query: synchronous by default; with ``Prefer: respond-async``
the validated request is queued and answered 202 (handlers/jobs.py), the
worker runs it and the answer lands in the call record: the path for
reasoning levels that do not fit API Gateway's 30 s."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response

from .. import wiring
from ..api.app import (
    current_call_id,
    json_body,
    json_response,
    lambda_entry,
    make_app,
    run_call,
)
from ..api.auth import authorize
from ..api.requests import QUERY_STAGES, QueryRequest, parse_models, parse_reasoning, validate
from ..config import settings
from ..errors import BadRequest, NotConfigured
from ..memory.options import StageOptions
from ..memory.query import QueryInput
from .jobs import accepted_response, enqueue, wants_async

app = make_app()


def query_input(req: QueryRequest) -> QueryInput:
    """The use case's input; BadRequest / NotConfigured before anything runs."""
    cfg = settings()
    options = StageOptions(
        cfg.llm_model,
        parse_reasoning(req.reasoning, QUERY_STAGES, "query"),
        parse_models(req.models, QUERY_STAGES),
    )
    radius: float | None = None
    if req.geo_nearby is not None or req.geo_radius_km is not None:
        if not cfg.geo and (req.geo_nearby or req.geo_radius_km is not None):
            raise BadRequest("geo search needs the server to have geo on (GB_GEO=on)")
        if req.geo_nearby is False and req.geo_radius_km is not None:
            raise BadRequest("geo_radius_km turns the nearby search on: not with geo_nearby false")
        if req.geo_nearby or req.geo_radius_km is not None:
            radius = req.geo_radius_km or cfg.geo_radius_km
    if not cfg.llm_configured:
        raise NotConfigured(cfg.llm_missing)
    return QueryInput(
        req.user_id,
        req.dataset,
        req.query,
        req.session_id,
        options,
        radius,
        req.as_of,
        req.max_context_tokens,
    )


def run_query(req: QueryRequest, *, background: bool = False, **kw: Any) -> dict[str, Any]:
    inp = query_input(req)
    return run_call(
        "query",
        req.user_id,
        req.dataset,
        req.session_id,
        lambda meter: wiring.query_service().run(inp, meter),
        background=background,
        **kw,
    )


@app.post("/v1/gb/query")
def query() -> Response[str]:
    body = json_body(app)
    req = validate(QueryRequest, body)
    authorize(app.current_event, req.user_id)
    query_input(req)  # every check answers now, before a 202
    if wants_async(app.current_event.headers.get("prefer")):
        job = {"request": body}
        payload = enqueue("query", req.user_id, req.dataset, req.session_id, current_call_id(), job)
        return accepted_response(payload)
    return json_response(200, run_query(req))


lambda_handler = lambda_entry(app)
