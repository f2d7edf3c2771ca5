"""POST /v1/gb/query and POST /v1/gb/search (``answer`` and ``context``,
which the MCP ``query`` and ``search`` tools call too)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2

from .. import wiring
from ..api.app import json_body, json_response, lambda_entry, make_app, run_call
from ..api.auth import authorize
from ..api.requests import (
    QUERY_STAGES,
    SEARCH_STAGES,
    QueryRequest,
    SearchRequest,
    parse_models,
    parse_reasoning,
    validate,
)
from ..config import settings
from ..errors import BadRequest, NotConfigured
from ..memory.options import StageOptions
from ..memory.query import QueryInput
from ..memory.search import Search

app = make_app()


def geo_radius(req: QueryRequest) -> float | None:
    """The nearby search's radius when the caller asked for it, else None."""
    cfg = settings()
    if req.geo_nearby is None and req.geo_radius_km is None:
        return None
    if not cfg.geo and (req.geo_nearby or req.geo_radius_km is not None):
        raise BadRequest("geo search needs the server to have geo on (GB_GEO=on)")
    if req.geo_nearby is False and req.geo_radius_km is not None:
        raise BadRequest("geo_radius_km turns the nearby search on: not with geo_nearby false")
    if req.geo_nearby or req.geo_radius_km is not None:
        return req.geo_radius_km or cfg.geo_radius_km
    return None


def query_input(
    req: QueryRequest, stages: tuple[str, ...], main_stage: str
) -> tuple[QueryInput, float | None]:
    """The retrieval's input from a query or search request (one place, so
    that a field the query gains, search gains too), and the nearby radius."""
    options = StageOptions(
        settings().llm_model,
        parse_reasoning(req.reasoning, stages, main_stage),
        parse_models(req.models, stages),
    )
    radius = geo_radius(req)
    inp = QueryInput(req.user_id, req.dataset, req.query, req.session_id, options, radius)
    return inp, radius


def answer(event: APIGatewayProxyEventV2, req: QueryRequest) -> dict[str, Any]:
    authorize(event, req.user_id)
    inp, _ = query_input(req, QUERY_STAGES, "query")
    cfg = settings()
    if not cfg.llm_configured:
        raise NotConfigured(cfg.llm_missing)
    return run_call(
        "query",
        req.user_id,
        req.dataset,
        req.session_id,
        lambda meter: wiring.query_service().run(inp, meter),
    )


@app.post("/v1/gb/query")
def query() -> Response[str]:
    req = validate(QueryRequest, json_body(app))
    return json_response(200, answer(app.current_event, req))


def context(event: APIGatewayProxyEventV2, req: SearchRequest) -> dict[str, Any]:
    """The query's retrieval without the answer: no LLM key needed, unless
    the caller asks for the nearby search (its place detection is an LLM call)."""
    authorize(event, req.user_id)
    inp, radius = query_input(req, SEARCH_STAGES, "detect_geo")
    cfg = settings()
    if radius is not None and not cfg.llm_configured:
        # The nearby search's place detection is an LLM call.
        raise NotConfigured(cfg.llm_missing)
    return run_call(
        "search",
        req.user_id,
        req.dataset,
        req.session_id,
        lambda meter: Search(wiring.graph_store(), wiring.query_service().retriever).run(
            inp, meter
        ),
    )


@app.post("/v1/gb/search")
def search() -> Response[str]:
    req = validate(SearchRequest, json_body(app))
    return json_response(200, context(app.current_event, req))


lambda_handler = lambda_entry(app)
