"""GET /v1/gb/datasets and DELETE /v1/gb/datasets/{name}."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from .. import wiring
from ..api.app import json_response, lambda_entry, make_app
from ..api.auth import authorize
from ..api.requests import check_query_params, param_dataset, param_user
from ..memory.datasets import Datasets

app = make_app()


def _datasets() -> Datasets:
    return Datasets(wiring.graph_store(), wiring.vector_index(), wiring.record_store())


@app.get("/v1/gb/datasets")
def list_datasets() -> Response[str]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id"})
    user_id = param_user(params)
    authorize(app.current_event, user_id)
    return json_response(200, _datasets().list(user_id))


@app.delete("/v1/gb/datasets/<name>")
def delete_dataset(name: str) -> Response[str]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id"})
    user_id = param_user(params)
    authorize(app.current_event, user_id)
    _datasets().delete(user_id, param_dataset(name))
    return Response(status_code=204, body="")


lambda_handler = lambda_entry(app)
