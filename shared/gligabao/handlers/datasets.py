"""GET /v1/gb/datasets, DELETE /v1/gb/datasets/{name}, a dataset's schema
(GET and PUT /v1/gb/datasets/{name}/schema), its settings (GET and PUT
/v1/gb/datasets/{name}/settings) and the erase of a user,
DELETE /v1/gb/users/{user_id}."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2

from .. import wiring
from ..api.app import current_call_id, json_body, json_response, lambda_entry, make_app
from ..api.auth import authorize
from ..api.params import check_query_params, param_dataset, param_path_user, param_user
from ..memory.dataset_settings import DatasetSettings
from ..memory.datasets import Datasets
from ..memory.erase import Erase

app = make_app()


def datasets_service() -> Datasets:
    return Datasets(wiring.graph_store(), wiring.vector_index(), wiring.record_store())


def listing(event: APIGatewayProxyEventV2, user_id: str) -> dict[str, Any]:
    """A user's datasets (the MCP ``list_datasets`` tool calls this too)."""
    authorize(event, user_id)
    return datasets_service().list(user_id)


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
    dataset = param_dataset(name)
    datasets_service().delete(user_id, dataset)  # its event: the store's outbox
    return Response(status_code=204, body="")


@app.get("/v1/gb/datasets/<name>/schema")
def get_schema(name: str) -> Response[str]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id"})
    user_id = param_user(params)
    authorize(app.current_event, user_id)
    return json_response(200, datasets_service().schema(user_id, param_dataset(name)))


@app.put("/v1/gb/datasets/<name>/schema")
def put_schema(name: str) -> Response[str]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id"})
    user_id = param_user(params)
    authorize(app.current_event, user_id)
    dataset = param_dataset(name)
    return json_response(200, datasets_service().put_schema(user_id, dataset, json_body(app)))


def settings_service() -> DatasetSettings:
    return DatasetSettings(wiring.graph_store(), wiring.notes_store(), wiring.settings().summaries)


@app.get("/v1/gb/datasets/<name>/settings")
def get_settings(name: str) -> Response[str]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id"})
    user_id = param_user(params)
    authorize(app.current_event, user_id)
    return json_response(200, settings_service().get(user_id, param_dataset(name)))


@app.put("/v1/gb/datasets/<name>/settings")
def put_settings(name: str) -> Response[str]:
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, {"user_id"})
    user_id = param_user(params)
    authorize(app.current_event, user_id)
    dataset = param_dataset(name)
    return json_response(200, settings_service().put(user_id, dataset, json_body(app)))


def eraser() -> Erase:
    return Erase(
        wiring.graph_store(), wiring.vector_index(), wiring.record_store(), wiring.idempotency()
    )


@app.delete("/v1/gb/users/<user_id>")
def erase_user(user_id: str) -> Response[str]:
    """202 with the call ID: the erase may outlast a request on a large
    memory (a timeout or a crash leaves it marked, and the next DELETE of
    the user finishes it under the same call ID). It runs here, to the end
    when it can; the call record (GET /v1/gb/calls/{id}?user_id=) says when
    it finished and what went. An unknown user is erased all the same
    (zero counts): a retried erase must not fail, and the answer must not
    tell whether someone was ever stored."""
    params = app.current_event.query_string_parameters or {}
    check_query_params(params, set())
    uid = param_path_user(user_id)
    authorize(app.current_event, uid, operator_ok=True)
    result = eraser().run(uid, current_call_id())  # its event: the store's outbox
    resp = json_response(202, result)
    resp.headers["Location"] = f"/v1/gb/calls/{result['call_id']}"
    return resp


lambda_handler = lambda_entry(app)
