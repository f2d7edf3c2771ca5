"""Browse and forget: GET /v1/gb/entities[/{id}], GET /v1/gb/edges/{id},
GET /v1/gb/artifacts[/{id}], DELETE /v1/gb/artifacts/{id}
(docs/api.md#browse-and-forget)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2

from .. import wiring
from ..api.app import json_response, lambda_entry, make_app
from ..api.auth import authorize
from ..api.params import (
    check_query_params,
    param_cursor,
    param_dataset,
    param_id,
    param_limit,
    param_q,
    param_session,
    param_user,
)
from ..memory.browse import DEFAULT_LIMIT, MAX_LIMIT, Browse
from ..memory.forget import Forget
from ..models import DatasetKey

app = make_app()


def _key(allowed: set[str]) -> tuple[DatasetKey, dict[str, str]]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id", "dataset", *allowed})
    user_id = param_user(params)
    key = DatasetKey(user_id, param_dataset(params.get("dataset", "main")))
    authorize(app.current_event, user_id, operator_ok=True)
    return key, params


def _limit(params: dict[str, str]) -> int:
    return param_limit(params, DEFAULT_LIMIT, MAX_LIMIT)


def _browse() -> Browse:
    return Browse(wiring.graph_store(), wiring.notes_store())


@app.get("/v1/gb/entities")
def list_entities() -> Response[str]:
    key, params = _key({"q", "limit", "cursor"})
    limit = _limit(params)
    return json_response(
        200, _browse().entities(key, param_q(params), limit, param_cursor(params, "entities"))
    )


@app.get("/v1/gb/entities/<id>")
def get_entity(id: str) -> Response[str]:
    wanted = param_id(id)
    key, _ = _key(set())
    return json_response(200, _browse().entity(key, wanted))


@app.get("/v1/gb/edges/<id>")
def get_edge(id: str) -> Response[str]:
    wanted = param_id(id)
    key, _ = _key(set())
    return json_response(200, _browse().edge(key, wanted))


@app.get("/v1/gb/artifacts")
def list_artifacts() -> Response[str]:
    key, params = _key({"session_id", "limit", "cursor"})
    limit = _limit(params)
    session_id = param_session(params)
    return json_response(
        200, _browse().artifacts(key, session_id, limit, param_cursor(params, "artifacts"))
    )


@app.get("/v1/gb/artifacts/<id>")
def get_artifact(id: str) -> Response[str]:
    wanted = param_id(id)
    key, _ = _key(set())
    return json_response(200, _browse().artifact(key, wanted))


def forget(event: APIGatewayProxyEventV2, key: DatasetKey, artifact_id: int) -> dict[str, Any]:
    """Forget one text (the MCP ``forget`` tool calls this too)."""
    authorize(event, key.user_id, operator_ok=True)
    return Forget(wiring.graph_store(), wiring.vector_index()).run(key, artifact_id)


@app.delete("/v1/gb/artifacts/<id>")
def delete_artifact(id: str) -> Response[str]:
    wanted = param_id(id)
    key, _ = _key(set())
    return json_response(200, forget(app.current_event, key, wanted))


lambda_handler = lambda_entry(app)
