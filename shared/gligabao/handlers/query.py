"""POST /v1/gb/query."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from .. import wiring
from ..api.app import json_body, json_response, lambda_entry, make_app, run_call
from ..api.auth import authorize
from ..api.requests import QUERY_STAGES, QueryRequest, parse_models, parse_reasoning, validate
from ..config import settings
from ..errors import BadRequest, NotConfigured
from ..memory.options import StageOptions
from ..memory.query import QueryInput

app = make_app()


@app.post("/v1/gb/query")
def query() -> Response[str]:
    req = validate(QueryRequest, json_body(app))
    authorize(app.current_event, req.user_id)
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
        raise NotConfigured("LLM not configured: ANTHROPIC_API_KEY is not set")
    inp = QueryInput(
        req.user_id,
        req.dataset,
        req.query,
        req.session_id,
        options,
        radius,
        req.max_context_tokens,
    )
    result = run_call(
        "query",
        req.user_id,
        req.dataset,
        req.session_id,
        lambda meter: wiring.query_service().run(inp, meter),
    )
    return json_response(200, result)


lambda_handler = lambda_entry(app)
