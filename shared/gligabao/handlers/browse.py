"""Browse and forget: GET /v1/gb/entities[/{id}], GET /v1/gb/edges/{id},
GET /v1/gb/artifacts[/{id}], DELETE /v1/gb/artifacts/{id}
(docs/api.md#browse-and-forget)."""

from __future__ import annotations

import re
from typing import Any

from .. import wiring
from ..api.app import json_response, lambda_entry, make_app
from ..api.auth import authorize
from ..api.requests import check_query_params, check_session_id, param_dataset, param_user
from ..api.router import HttpEvent, Response
from ..errors import BadRequest
from ..memory.browse import Browse, check_limit
from ..memory.forget import Forget
from ..models import DatasetKey

app = make_app()
_ID = re.compile(r"^[1-9][0-9]{0,17}$")


def row_id(value: Any, what: str = "id") -> int:
    """A row ID: a positive integer (in a path: digits only)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10**18:
        return value
    if isinstance(value, str) and _ID.fullmatch(value):
        return int(value)
    raise BadRequest(f"{what} must be a positive integer")


def _key(allowed: set[str]) -> tuple[DatasetKey, dict[str, str]]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id", "dataset", *allowed})
    user_id = param_user(params)
    key = DatasetKey(user_id, param_dataset(params.get("dataset", "main")))
    authorize(app.current_event, user_id, operator_ok=True)
    return key, params


def _limit(params: dict[str, str]) -> int:
    raw = params.get("limit")
    if raw is None:
        return check_limit(None)
    if not re.fullmatch(r"[0-9]{1,4}", raw):
        raise BadRequest("limit must be an integer from 1 to 100")
    return check_limit(int(raw))


def _browse() -> Browse:
    return Browse(wiring.graph_store())


@app.get("/v1/gb/entities")
def list_entities() -> Response[str]:
    key, params = _key({"q", "limit", "cursor"})
    limit = _limit(params)
    q = params.get("q")
    if q is not None and not q.strip():
        raise BadRequest("q must not be empty")
    return json_response(200, _browse().entities(key, q, limit, params.get("cursor")))


@app.get("/v1/gb/entities/<id>")
def get_entity(id: str) -> Response[str]:
    wanted = row_id(id)
    key, _ = _key(set())
    return json_response(200, _browse().entity(key, wanted))


@app.get("/v1/gb/edges/<id>")
def get_edge(id: str) -> Response[str]:
    wanted = row_id(id)
    key, _ = _key(set())
    return json_response(200, _browse().edge(key, wanted))


@app.get("/v1/gb/artifacts")
def list_artifacts() -> Response[str]:
    key, params = _key({"session_id", "limit", "cursor"})
    limit = _limit(params)
    try:
        session_id = check_session_id(params.get("session_id"))
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc
    return json_response(200, _browse().artifacts(key, session_id, limit, params.get("cursor")))


@app.get("/v1/gb/artifacts/<id>")
def get_artifact(id: str) -> Response[str]:
    wanted = row_id(id)
    key, _ = _key(set())
    return json_response(200, _browse().artifact(key, wanted))


def forget(event: HttpEvent, key: DatasetKey, artifact_id: int) -> dict[str, Any]:
    """Forget one text (the MCP ``forget`` tool calls this too)."""
    authorize(event, key.user_id, operator_ok=True)
    return Forget(wiring.graph_store(), wiring.vector_index()).run(key, artifact_id)


@app.delete("/v1/gb/artifacts/<id>")
def delete_artifact(id: str) -> Response[str]:
    wanted = row_id(id)
    key, _ = _key(set())
    return json_response(200, forget(app.current_event, key, wanted))


lambda_handler = lambda_entry(app)
