"""GET /v1/gb/datasets and DELETE /v1/gb/datasets/{name}."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import wiring
from ..api.app import json_response, lambda_entry, make_app
from ..api.auth import authorize
from ..api.checks import check_query_params, param_dataset, param_user
from ..api.router import HttpEvent, Response

if TYPE_CHECKING:
    from ..memory.datasets import Datasets

app = make_app()


def _datasets() -> Datasets:
    from ..memory.datasets import Datasets

    return Datasets(wiring.graph_store(), wiring.vector_index(), wiring.record_store())


def listing(event: HttpEvent, user_id: str) -> dict[str, Any]:
    """A user's datasets (the MCP ``list_datasets`` tool calls this too)."""
    authorize(event, user_id)
    return _datasets().list(user_id)


@app.get("/v1/gb/datasets")
def list_datasets() -> Response[str]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id"})
    return json_response(200, listing(app.current_event, param_user(params)))


@app.delete("/v1/gb/datasets/<name>")
def delete_dataset(name: str) -> Response[str]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id"})
    user_id = param_user(params)
    authorize(app.current_event, user_id)
    _datasets().delete(user_id, param_dataset(name))
    return Response(status_code=204, body="")


lambda_handler = lambda_entry(app)
