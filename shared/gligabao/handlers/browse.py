"""Browse and forget: GET /v1/gb/entities[/{id}], GET /v1/gb/edges/{id},
GET /v1/gb/artifacts[/{id}], DELETE /v1/gb/artifacts/{id}; DELETE
/v1/gb/edges/{id}, GET /v1/gb/conflicts, GET /v1/gb/entities/{id}/merges
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
    param_type,
    param_user,
)
from ..memory.browse import DEFAULT_LIMIT, MAX_LIMIT, Browse
from ..memory.forget import Forget
from ..models import DatasetKey

app = make_app()


def params_key(params: dict[str, str], allowed: set[str]) -> DatasetKey:
    """The dataset a browse names in its query parameters (400 first)."""
    check_query_params(params, {"user_id", "dataset", *allowed})
    return DatasetKey(param_user(params), param_dataset(params.get("dataset", "main")))


def _key(allowed: set[str]) -> tuple[DatasetKey, dict[str, str]]:
    params = app.current_event.query_string_parameters or {}
    key = params_key(params, allowed)
    authorize(app.current_event, key.user_id, operator_ok=True)
    return key, params


def entities_page(key: DatasetKey, params: dict[str, str]) -> dict[str, Any]:
    """An authorized page of entities (``gligabao.Memory`` calls this too)."""
    limit, kind = _limit(params), param_type(params, "type")
    return browser().entities(key, param_q(params), limit, param_cursor(params, "entities"), kind)


def entity_page(key: DatasetKey, entity_id: int, params: dict[str, str]) -> dict[str, Any]:
    """An authorized entity's page (``gligabao.Memory`` calls this too)."""
    return browser().entity(key, entity_id, param_type(params, "edge_type"))


def artifacts_page(key: DatasetKey, params: dict[str, str]) -> dict[str, Any]:
    limit = _limit(params)
    session_id = param_session(params)
    return browser().artifacts(key, session_id, limit, param_cursor(params, "artifacts"))


def _limit(params: dict[str, str]) -> int:
    return param_limit(params, DEFAULT_LIMIT, MAX_LIMIT)


def browser() -> Browse:
    return Browse(wiring.graph_store(), wiring.notes_store())


@app.get("/v1/gb/entities")
def list_entities() -> Response[str]:
    key, params = _key({"q", "limit", "cursor", "type"})
    return json_response(200, entities_page(key, params))


@app.get("/v1/gb/entities/<id>")
def get_entity(id: str) -> Response[str]:
    wanted = param_id(id)
    key, params = _key({"edge_type"})
    return json_response(200, entity_page(key, wanted, params))


@app.get("/v1/gb/edges/<id>")
def get_edge(id: str) -> Response[str]:
    wanted = param_id(id)
    key, _ = _key(set())
    return json_response(200, browser().edge(key, wanted))


@app.get("/v1/gb/artifacts")
def list_artifacts() -> Response[str]:
    key, params = _key({"session_id", "limit", "cursor"})
    return json_response(200, artifacts_page(key, params))


@app.get("/v1/gb/artifacts/<id>")
def get_artifact(id: str) -> Response[str]:
    wanted = param_id(id)
    key, _ = _key(set())
    return json_response(200, browser().artifact(key, wanted))


def forget(event: APIGatewayProxyEventV2, key: DatasetKey, artifact_id: int) -> dict[str, Any]:
    """Forget one text (the MCP ``forget`` tool calls this too)."""
    authorize(event, key.user_id, operator_ok=True)
    return forget_artifact(key, artifact_id)


def forget_artifact(key: DatasetKey, artifact_id: int) -> dict[str, Any]:
    """Forget one text (the library calls this too); its event goes through
    the store's outbox, in the forget's own commit (docs/events.md)."""
    # A session's summary goes with its last text (memory/sessions.py).
    notes, schedule = wiring.notes_store(), wiring.schedule_summaries
    return Forget(wiring.graph_store(), wiring.vector_index(), notes, schedule).run(
        key, artifact_id
    )


@app.delete("/v1/gb/artifacts/<id>")
def delete_artifact(id: str) -> Response[str]:
    wanted = param_id(id)
    key, _ = _key(set())
    return json_response(200, forget(app.current_event, key, wanted))


# --- issue 44: forget one fact ------------------------------------------------------
def forget_fact(event: APIGatewayProxyEventV2, key: DatasetKey, edge_id: int) -> dict[str, Any]:
    """Forget one fact, keep its texts (the MCP ``forget_fact`` tool calls this too)."""
    from ..memory.forget import ForgetFact

    authorize(event, key.user_id, operator_ok=True)
    return ForgetFact(wiring.graph_store(), wiring.vector_index()).run(key, edge_id)


@app.delete("/v1/gb/edges/<id>")
def delete_edge(id: str) -> Response[str]:
    wanted = param_id(id)
    key, _ = _key(set())
    return json_response(200, forget_fact(app.current_event, key, wanted))


# --- issue 44: conflicts and merges ---------------------------------------------------
@app.get("/v1/gb/conflicts")
def list_conflicts() -> Response[str]:
    from ..memory.conflicts import Conflicts

    key, params = _key({"limit"})
    return json_response(
        200, Conflicts(wiring.graph_store(), wiring.notes_store()).run(key, _limit(params))
    )


@app.get("/v1/gb/entities/<id>/merges")
def entity_merges(id: str) -> Response[str]:
    from ..memory.merges import Merges

    wanted = param_id(id)
    key, _ = _key(set())
    return json_response(200, Merges(wiring.graph_store()).run(key, wanted))


lambda_handler = lambda_entry(app)
