"""POST /v1/gb/query: synchronous by default; with ``Prefer: respond-async``
the validated request is queued and answered 202 (handlers/jobs.py), the
worker runs it and the answer lands in the call record: the path for
reasoning levels that do not fit API Gateway's 30 s.

POST /v1/gb/search: the same retrieval without the answer. ``answer`` and
``context`` are what the MCP ``query`` and ``search`` tools call too."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2

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
from ..api.requests import QueryRequest, SearchRequest, validate
from ..api.stages import levels, models
from ..config import settings
from ..errors import BadRequest, NotConfigured
from ..memory.options import StageOptions
from ..memory.query import QueryInput
from ..memory.search import Search
from ..retrieval_profile import RetrievalProfile
from .jobs import ACCEPTED, accepted_response, enqueue, wants_async

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


def request_profile(req: QueryRequest) -> RetrievalProfile | None:
    """A request's profile overrides, on the local server only: a deployed
    API's pools are the query's cost bounds (rows read, round trips), which
    a caller must not raise (GB_RETRIEVAL_PROFILE sets them). BadRequest
    naming the field on an unknown one or a bad value."""
    if req.profile is None:
        return None
    cfg = settings()
    if not cfg.local:
        raise BadRequest(
            "profile: only the local server (gligabao serve) takes a request's profile; "
            "a deployment sets GB_RETRIEVAL_PROFILE"
        )
    return cfg.profile.with_overrides(req.profile.model_dump(exclude_none=True))


def check_question(text: str) -> None:
    """A question past the embedder's window (in its tokens) is refused
    before anything is embedded: an embedder that counts its tokens says
    its window (the local one: the question would otherwise run the model
    once per window, minutes of CPU for a long text; docs/limits.md)."""
    embedder: Any = wiring.embedder()
    window = getattr(embedder, "query_window", None)
    if window is None:
        return  # a provider's API holds its own window (and bills the tokens)
    tokens = embedder.count_tokens(text, "query")
    if tokens > window:
        raise BadRequest(
            f"query: {tokens} tokens of the embedding model ({embedder.model}), over its "
            f"limit of {window} tokens: ask a shorter question"
        )


def retrieval_input(req: QueryRequest, main_stage: str) -> QueryInput:
    """The retrieval's input from a query or search request (one place, so
    that a field the query gains, search gains too); BadRequest first."""
    check_question(req.query)
    options = StageOptions(
        settings().llm_model,
        levels(req.reasoning, main_stage),
        models(req.models),
    )
    return QueryInput(
        req.user_id,
        req.dataset,
        req.query,
        req.session_id,
        options,
        geo_radius(req),
        req.as_of,
        req.max_context_tokens,
        request_profile(req),
        req.explain,
        _folded(req.entity_types),
        _folded(req.edge_types),
    )


def _folded(names: list[str] | None) -> frozenset[str] | None:
    return frozenset(n.casefold() for n in names) if names is not None else None


def query_input(req: QueryRequest) -> QueryInput:
    """The use case's input; BadRequest / NotConfigured before anything runs."""
    inp = retrieval_input(req, "query")
    cfg = settings()
    if not cfg.llm_configured:
        raise NotConfigured(cfg.llm_missing)
    return inp


def run_query(req: QueryRequest, *, background: bool = False, **kw: Any) -> dict[str, Any]:
    inp = query_input(req)
    return run_call(
        wiring.call_services(),
        "query",
        req.user_id,
        req.dataset,
        req.session_id,
        lambda meter: wiring.query_service().run(inp, meter),
        background=background,
        **kw,
    )


def answer(event: APIGatewayProxyEventV2, req: QueryRequest) -> dict[str, Any]:
    authorize(event, req.user_id)
    return run_query(req)


@app.post("/v1/gb/query")
def query() -> Response[str]:
    body = json_body(app)
    req = validate(QueryRequest, body)
    authorize(app.current_event, req.user_id)
    result = ask(req, body, queued=wants_async(app.current_event.headers.get("prefer")))
    if result.get("status") == ACCEPTED:
        return accepted_response(result)
    return json_response(200, result)


def ask(req: QueryRequest, body: dict[str, Any], *, queued: bool = False) -> dict[str, Any]:
    """An authorized query, answered now or queued (``gligabao.Memory`` too)."""
    query_input(req)  # every check answers now, before a 202
    if queued:
        job = {"request": body}
        return enqueue("query", req.user_id, req.dataset, req.session_id, current_call_id(), job)
    return run_query(req)


def context(event: APIGatewayProxyEventV2, req: SearchRequest) -> dict[str, Any]:
    """The query's retrieval without the answer: no LLM key needed, unless
    the caller asks for the nearby search (its place detection is an LLM call)."""
    authorize(event, req.user_id)
    return search_context(req)


def search_context(req: SearchRequest) -> dict[str, Any]:
    """An authorized search (``gligabao.Memory`` calls this too)."""
    inp = retrieval_input(req, "detect_geo")
    cfg = settings()
    if inp.geo_radius_km is not None and not cfg.llm_configured:
        raise NotConfigured(cfg.llm_missing)
    return run_call(
        wiring.call_services(),
        "search",
        req.user_id,
        req.dataset,
        req.session_id,
        lambda meter: Search(wiring.query_service().retriever).run(inp, meter),
    )


@app.post("/v1/gb/search")
def search() -> Response[str]:
    req = validate(SearchRequest, json_body(app))
    return json_response(200, context(app.current_event, req))


lambda_handler = lambda_entry(app)
