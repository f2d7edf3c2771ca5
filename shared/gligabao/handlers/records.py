"""GET /v1/gb/inferences and GET /v1/gb/calls/{call_id}."""

from __future__ import annotations

import re

from aws_lambda_powertools.event_handler import Response

from .. import wiring
from ..api.app import json_response, lambda_entry, make_app
from ..api.auth import authorize
from ..api.requests import check_query_params, check_session_id, param_dataset, param_user
from ..errors import BadRequest, NotFound
from ..oneway import erased_user

app = make_app()
MAX_LIMIT = 200
_LIMIT = re.compile(r"^[0-9]{1,4}$")  # str.isdigit() also takes "²", which int() refuses


@app.get("/v1/gb/inferences")
def list_inferences() -> Response[str]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id", "dataset", "session_id", "call_id", "limit", "cursor"})
    user_id = param_user(params)
    authorize(app.current_event, user_id, operator_ok=True)
    dataset = param_dataset(params["dataset"]) if "dataset" in params else None
    try:
        session_id = check_session_id(params.get("session_id"))
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc
    raw_limit = params.get("limit", "50")
    if not _LIMIT.match(raw_limit) or not 1 <= int(raw_limit) <= MAX_LIMIT:
        raise BadRequest(f"limit must be an integer from 1 to {MAX_LIMIT}")
    rows, cursor = wiring.record_store().list_inferences(
        user_id,
        dataset=dataset,
        session_id=session_id,
        call_id=params.get("call_id"),
        limit=int(raw_limit),
        cursor=params.get("cursor"),
    )
    return json_response(200, {"inferences": [r.public() for r in rows], "next": cursor})


@app.get("/v1/gb/calls/<call_id>")
def get_call(call_id: str) -> Response[str]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id"})
    user_id = param_user(params)
    authorize(app.current_event, user_id, operator_ok=True)
    store = wiring.record_store()
    # An erase's record outlives the user, under a one-way hash of the ID.
    call = store.get_call(user_id, call_id) or store.get_call(erased_user(user_id), call_id)
    if call is None:
        raise NotFound(f"call {call_id!r} not found")
    return json_response(200, call.public())


lambda_handler = lambda_entry(app)
