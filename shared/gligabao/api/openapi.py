"""The OpenAPI 3.1 document of the API, generated from the request and
response models. `python -m gligabao.api.openapi` rewrites the committed copy
(shared/gligabao/openapi.json); a test fails when the two differ."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from ..memory.browse import MAX_LIMIT as BROWSE_LIMIT
from ..memory.browse import TYPE_SCAN
from . import openapi_facts, openapi_settings
from .batch import BatchRequest
from .fields import DatasetName, RowId, SessionId, Text, UserId
from .params import (
    ArtifactCursor,
    CallId,
    EntityCursor,
    HeaderKey,
    InferenceCursor,
    TypeName,
    page_limit,
    schema,
)
from .requests import QueryRequest, RememberRequest, SearchRequest, SplitRequest
from .routes import ROUTES, Route
from .schemas import (
    AcceptedOut,
    ArtifactDetailOut,
    ArtifactsOut,
    CallOut,
    DatasetSchema,
    DatasetSchemaOut,
    DatasetsOut,
    EdgeDetailOut,
    EntitiesOut,
    EntityDetailOut,
    ErasedOut,
    ErrorOut,
    ForgottenOut,
    InferencesOut,
    QueryOut,
    RememberOut,
    SearchOut,
    SplitOut,
)

REQUESTS = (
    RememberRequest,
    BatchRequest,
    QueryRequest,
    SearchRequest,
    SplitRequest,
    *openapi_facts.REQUESTS,
    *openapi_settings.REQUESTS,
)
DOC = Path(__file__).resolve().parent.parent / "openapi.json"
_MODELS: list[type[BaseModel]] = [
    RememberRequest,
    BatchRequest,
    QueryRequest,
    SearchRequest,
    SplitRequest,
    RememberOut,
    AcceptedOut,
    QueryOut,
    SearchOut,
    DatasetsOut,
    DatasetSchema,
    DatasetSchemaOut,
    InferencesOut,
    CallOut,
    SplitOut,
    ArtifactDetailOut,
    ArtifactsOut,
    EdgeDetailOut,
    EntitiesOut,
    EntityDetailOut,
    ForgottenOut,
    ErasedOut,
    ErrorOut,
    *openapi_facts.MODELS,
    *openapi_settings.MODELS,
]


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _json(model: type[BaseModel]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": _ref(model)}}}


def _errors(*codes: int) -> dict[str, Any]:
    text = {
        400: "invalid request",
        401: "not authenticated",
        403: "another user's data",
        404: "not found",
        409: "same Idempotency-Key still running",
        413: "body over 64 KiB",
        415: "a write not sent as application/json",
        422: "the Idempotency-Key was used with another body",
        502: "an upstream failed",
        503: "LLM not configured",
    }
    return {str(c): {"description": text[c], **_json(ErrorOut)} for c in codes}


def _param(
    name: str,
    kind: Any,
    required: bool = False,
    where: str = "query",
    description: str | None = None,
) -> dict[str, Any]:
    """A parameter whose schema is its type's (api/params.py reads it so)."""
    out = {"name": name, "in": where, "required": required, "schema": schema(kind)}
    if description:
        out["description"] = description
    return out


PREFER = _param(
    "Prefer",
    str,
    where="header",
    description=(
        "RFC 7240. `respond-async`: the request is validated, queued and answered 202; "
        "poll the Location (GET /v1/gb/calls/{call_id}) until its status is `ok` (the "
        "response is then its `result`) or an error. Without it remember answers 200 "
        "when done."
    ),
)
ACCEPTED = {
    "description": "queued (Prefer: respond-async)",
    "headers": {
        "Location": {
            "description": "/v1/gb/calls/{call_id}: the call to poll",
            "schema": {"type": "string"},
        }
    },
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AcceptedOut"}}},
}


USER = _param("user_id", UserId, True)
IDEMPOTENCY_KEY = _param("Idempotency-Key", HeaderKey, where="header")
# The fields of the nearby search: in the document only when the server has geo on.
GEO_FIELDS = ("geo_nearby", "geo_radius_km")


def build(geo: bool = True, routes: tuple[Route, ...] = ROUTES) -> dict[str, Any]:
    """The document; ``geo``: as a server with geo on serves it (the committed
    copy), else without the nearby search's fields. Its paths are the route
    table's (``routes``), each described below (a route without a
    description here gets a bare one)."""
    doc = _document(geo)
    described = doc["paths"]
    paths: dict[str, Any] = {}
    for r in routes:
        if r.operation is None:
            continue
        detail = dict(described.get(r.path, {}).get(r.method.lower()) or _bare())
        detail.update(operationId=r.operation, summary=r.summary)
        if r.method in ("POST", "PUT", "PATCH"):  # a write's body must say it is JSON
            detail["responses"] = {**_errors(415), **detail.get("responses", {})}
        paths.setdefault(r.path, {})[r.method.lower()] = detail
    doc["paths"] = paths
    return doc


def _bare() -> dict[str, Any]:
    return {"responses": _errors(400, 401, 403)}


def _document(geo: bool) -> dict[str, Any]:
    _, defs = models_json_schema(
        [(m, "validation" if m in REQUESTS else "serialization") for m in _MODELS],
        ref_template="#/components/schemas/{model}",
    )
    schemas = defs.get("$defs", {})
    if not geo:
        for model in (QueryRequest, SearchRequest):
            for field in GEO_FIELDS:
                schemas[model.__name__]["properties"].pop(field)
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "gligabao",
            "version": "0.1.0",
            "description": "A bi-temporal knowledge-graph memory for LLM agents.",
        },
        "paths": {
            "/v1/gb/remember": {
                "post": {
                    "operationId": "remember",
                    "summary": "Remember a text",
                    "parameters": [IDEMPOTENCY_KEY, PREFER],
                    "requestBody": {"required": True, **_json(RememberRequest)},
                    "responses": {
                        "200": {"description": "what was stored", **_json(RememberOut)},
                        "202": ACCEPTED,
                        **_errors(400, 401, 403, 409, 413, 415, 422, 502, 503),
                    },
                }
            },
            "/v1/gb/remember/batch": {
                "post": {
                    "operationId": "rememberBatch",
                    "summary": "Remember many texts, in the order of their time (queued)",
                    "description": (
                        "Always asynchronous: 202 and the call to poll, whose `result` shows "
                        "the progress (texts done, skipped, failed, LLM calls, tokens, cost). "
                        "Several texts per extraction call; committed in pieces. A rerun "
                        "with the same key (Idempotency-Key or `idempotency_key`) and the "
                        "same texts skips those committed."
                    ),
                    "parameters": [IDEMPOTENCY_KEY],
                    "requestBody": {"required": True, **_json(BatchRequest)},
                    "responses": {
                        "202": {**ACCEPTED, "description": "queued"},
                        **_errors(400, 401, 403, 413, 502, 503),
                    },
                }
            },
            "/v1/gb/query": {
                "post": {
                    "operationId": "query",
                    "summary": "Answer a question from memory",
                    "requestBody": {"required": True, **_json(QueryRequest)},
                    "responses": {
                        "200": {"description": "the answer and its evidence", **_json(QueryOut)},
                        **_errors(400, 401, 403, 404, 413, 502, 503),
                    },
                }
            },
            "/v1/gb/search": {
                "post": {
                    "operationId": "search",
                    "summary": "The ranked context of a question, without the answer",
                    "description": (
                        "The query's retrieval without its LLM call: the entities, facts "
                        "and passages the answer would be given from, best first, and their "
                        "size in tokens. Needs no LLM key (unless the nearby search is "
                        "asked for: its place detection is an LLM call)."
                    ),
                    "requestBody": {"required": True, **_json(SearchRequest)},
                    "responses": {
                        "200": {"description": "the ranked context", **_json(SearchOut)},
                        **_errors(400, 401, 403, 404, 413, 502, 503),
                    },
                }
            },
            "/v1/gb/entities/{id}/split": {
                "post": {
                    "operationId": "splitEntity",
                    "summary": "Split a wrongly merged entity (operators)",
                    "description": (
                        "The given live facts and texts of the entity move to a new entity: "
                        "each fact is copied onto it (same validity, sources and time learned) "
                        "and the original expired; each text names the new entity instead."
                    ),
                    "parameters": [_param("id", RowId, True, "path")],
                    "requestBody": {"required": True, **_json(SplitRequest)},
                    "responses": {
                        "200": {"description": "the new entity", **_json(SplitOut)},
                        **_errors(400, 401, 403, 404, 409, 413, 502),
                    },
                }
            },
            "/v1/gb/datasets": {
                "get": {
                    "operationId": "listDatasets",
                    "summary": "A user's datasets",
                    "parameters": [USER],
                    "responses": {
                        "200": {"description": "datasets", **_json(DatasetsOut)},
                        **_errors(400, 401, 403),
                    },
                }
            },
            "/v1/gb/datasets/{name}": {
                "delete": {
                    "operationId": "deleteDataset",
                    "summary": "Delete a dataset and everything in it",
                    "parameters": [_param("name", DatasetName, True, "path"), USER],
                    "responses": {"204": {"description": "deleted"}, **_errors(400, 401, 403, 404)},
                }
            },
            "/v1/gb/datasets/{name}/schema": {
                "get": {
                    "operationId": "getDatasetSchema",
                    "summary": "A dataset's entity and edge types (empty when it has none)",
                    "parameters": [_param("name", DatasetName, True, "path"), USER],
                    "responses": {
                        "200": {"description": "the schema", **_json(DatasetSchemaOut)},
                        **_errors(400, 401, 403, 404),
                    },
                },
                "put": {
                    "operationId": "putDatasetSchema",
                    "summary": "Set a dataset's entity and edge types (the dataset is created)",
                    "description": (
                        "Replaces the whole schema. A schema over the limits, with an unknown "
                        "attribute type, or an edge type naming an undeclared entity type is "
                        "400, and nothing is stored."
                    ),
                    "parameters": [_param("name", DatasetName, True, "path"), USER],
                    "requestBody": {"required": True, **_json(DatasetSchema)},
                    "responses": {
                        "200": {"description": "the schema as stored", **_json(DatasetSchemaOut)},
                        **_errors(400, 401, 403, 413),
                    },
                },
            },
            "/v1/gb/users/{user_id}": {
                "delete": {
                    "operationId": "eraseUser",
                    "summary": "Erase a user: every dataset, vector, record of them, everywhere",
                    "description": (
                        "202 with the call ID (the work may outlast a request; a rerun "
                        "finishes an erase a crash interrupted, under the same call ID). "
                        "GET /v1/gb/calls/{call_id}?user_id= reads its record. A user with "
                        "nothing stored is erased all the same (zero counts)."
                    ),
                    "parameters": [_param("user_id", UserId, True, "path", "percent-encoded")],
                    "responses": {
                        "202": {
                            "description": "erased",
                            "headers": ACCEPTED["headers"],
                            **_json(ErasedOut),
                        },
                        **_errors(400, 401, 403, 502),
                    },
                }
            },
            **_browse_paths(),
            "/v1/gb/inferences": {
                "get": {
                    "operationId": "listInferences",
                    "summary": "LLM and embeddings requests, newest first",
                    "parameters": [
                        USER,
                        _param("dataset", DatasetName),
                        _param("session_id", SessionId),
                        _param("call_id", CallId),
                        _param("limit", page_limit(200)),
                        _param("cursor", InferenceCursor),
                    ],
                    "responses": {
                        "200": {"description": "inference rows", **_json(InferencesOut)},
                        **_errors(400, 401, 403),
                    },
                }
            },
            "/v1/gb/calls/{call_id}": {
                "get": {
                    "operationId": "getCall",
                    "summary": "The trajectory of one call",
                    "parameters": [_param("call_id", CallId, True, "path"), USER],
                    "responses": {
                        "200": {"description": "the call", **_json(CallOut)},
                        **_errors(400, 401, 403, 404),
                    },
                }
            },
        },
        "components": {"schemas": schemas},
    }
    paths: dict[str, Any] = doc["paths"]
    for path, ops in openapi_facts.fact_paths(_param, _json, _errors).items():
        paths.setdefault(path, {}).update(ops)
    for path, ops in openapi_settings.settings_paths(_param, _json, _errors, USER).items():
        paths.setdefault(path, {}).update(ops)
    return doc


_TYPE = (
    "only entities of this type (without case); a page may then hold fewer than limit "
    f"with a next_cursor: the listing reads at most {TYPE_SCAN} entities a page"
)


def _entity_op(op: dict[str, Any]) -> dict[str, Any]:
    """getEntity: its facts filtered by ``edge_type``."""
    about = "only the facts of this relation or edge type (without case; as search's edge_types)"
    op["parameters"].append(_param("edge_type", TypeName, description=about))
    return op


def _browse_paths() -> dict[str, Any]:
    """The browse and forget routes (docs/api.md#browse-and-forget)."""
    ds = _param("dataset", DatasetName)
    limit = _param("limit", page_limit(BROWSE_LIMIT))

    def one(op: str, summary: str, out: Any, name: str) -> dict[str, Any]:
        return {
            "operationId": op,
            "summary": summary,
            "parameters": [_param(name, RowId, True, "path"), USER, ds],
            "responses": {
                "200": {"description": summary, **_json(out)},
                **_errors(400, 401, 403, 404),
            },
        }

    return {
        "/v1/gb/entities": {
            "get": {
                "operationId": "listEntities",
                "summary": "Entities, newest updated first, or those whose name matches q",
                "parameters": [
                    USER,
                    ds,
                    _param("q", Text),
                    _param("type", TypeName, description=_TYPE),
                    limit,
                    _param("cursor", EntityCursor),
                ],
                "responses": {
                    "200": {"description": "a page of entities", **_json(EntitiesOut)},
                    **_errors(400, 401, 403, 404),
                },
            }
        },
        "/v1/gb/entities/{id}": {
            "get": _entity_op(
                one(
                    "getEntity",
                    "An entity, its summary, its live facts, its mentions (the user's own: their profile)",
                    EntityDetailOut,
                    "id",
                )
            )
        },
        "/v1/gb/edges/{id}": {
            "get": one("getEdge", "A fact, its sources and its history", EdgeDetailOut, "id")
        },
        "/v1/gb/artifacts": {
            "get": {
                "operationId": "listArtifacts",
                "summary": "Remembered texts, newest first (a session's in the order said)",
                "parameters": [
                    USER,
                    ds,
                    _param("session_id", SessionId),
                    limit,
                    _param("cursor", ArtifactCursor),
                ],
                "responses": {
                    "200": {"description": "a page of texts", **_json(ArtifactsOut)},
                    **_errors(400, 401, 403, 404),
                },
            }
        },
        "/v1/gb/artifacts/{id}": {
            "get": one(
                "getArtifact",
                "A remembered text and what was taken from it",
                ArtifactDetailOut,
                "id",
            ),
            "delete": one("forgetArtifact", "Forget one text", ForgottenOut, "id"),
        },
    }


def render(geo: bool = True) -> str:
    return json.dumps(build(geo), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    DOC.write_text(render())
    print(f"wrote {DOC}", file=sys.stderr)
