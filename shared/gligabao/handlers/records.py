"""GET /v1/gb/inferences and GET /v1/gb/calls/{call_id}."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response

from .. import wiring
from ..api.app import json_response, lambda_entry, make_app
from ..api.auth import authorize
from ..api.params import (
    check_query_params,
    param_call_id,
    param_cursor,
    param_dataset,
    param_limit,
    param_session,
    param_user,
)
from ..errors import NotFound
from ..oneway import erased_user

app = make_app()
MAX_LIMIT = 200


@app.get("/v1/gb/inferences")
def list_inferences() -> Response[str]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id", "dataset", "session_id", "call_id", "limit", "cursor"})
    user_id = param_user(params)
    authorize(app.current_event, user_id, operator_ok=True)
    return json_response(200, inferences_page(user_id, params))


def inferences_page(user_id: str, params: dict[str, str]) -> dict[str, Any]:
    """An authorized page of inference rows (``gligabao.Memory`` calls this too)."""
    dataset = param_dataset(params["dataset"]) if "dataset" in params else None
    rows, cursor = wiring.record_store().list_inferences(
        user_id,
        dataset=dataset,
        session_id=param_session(params),
        call_id=param_call_id(params.get("call_id")),
        limit=param_limit(params, 50, MAX_LIMIT),
        cursor=param_cursor(params, "inferences"),
    )
    return {"inferences": [r.public() for r in rows], "next": cursor}


@app.get("/v1/gb/calls/<call_id>")
def get_call(call_id: str) -> Response[str]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id"})
    user_id = param_user(params)
    authorize(app.current_event, user_id, operator_ok=True)
    return json_response(200, call_record(user_id, call_id))


def call_record(user_id: str, call_id: str) -> dict[str, Any]:
    call_id = str(param_call_id(call_id))
    store = wiring.record_store()
    # An erase's record outlives the user, under a one-way hash of the ID.
    call = store.get_call(user_id, call_id) or store.get_call(erased_user(user_id), call_id)
    if call is None:
        raise NotFound(f"call {call_id!r} not found")
    return call.public()


lambda_handler = lambda_entry(app)
