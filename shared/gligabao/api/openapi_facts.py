"""The OpenAPI paths of the routes that correct, forget and audit facts
(issue 44), merged into the document by ``openapi.build``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..memory.browse import MAX_LIMIT as BROWSE_LIMIT
from .fact_schemas import ConflictsOut, CorrectedOut, FactForgottenOut, MergesOut
from .fields import DatasetName, RowId, UserId
from .params import page_limit
from .requests import CorrectRequest

REQUESTS: list[type[BaseModel]] = [CorrectRequest]
MODELS: list[type[BaseModel]] = [
    CorrectRequest,
    CorrectedOut,
    FactForgottenOut,
    ConflictsOut,
    MergesOut,
]


def fact_paths(param: Any, json_of: Any, errors: Any) -> dict[str, dict[str, Any]]:
    """``param``, ``json_of``, ``errors``: openapi.py's helpers."""
    user, ds = param("user_id", UserId, True), param("dataset", DatasetName)
    edge_id = param("id", RowId, True, "path")
    return {
        "/v1/gb/edges/{id}": {
            "patch": {
                "operationId": "correctEdge",
                "summary": "Correct a fact: it ended (invalid_at), or it was wrong",
                "description": (
                    "A correction is a new fact that supersedes the old one, with its "
                    "provenance (source `correction`, who, when, reason) in the history "
                    "(GET /v1/gb/edges/{id}). Forgetting the correction (DELETE) sets the "
                    "old fact back. `target` names a stored entity (or `target_id`)."
                ),
                "parameters": [edge_id],
                "requestBody": {"required": True, **json_of(CorrectRequest)},
                "responses": {
                    "200": {"description": "the new fact", **json_of(CorrectedOut)},
                    **errors(400, 401, 403, 404, 409, 413, 502),
                },
            },
            "delete": {
                "operationId": "forgetEdge",
                "summary": "Forget one fact (its vector too); its texts stay",
                "parameters": [edge_id, user, ds],
                "responses": {
                    "200": {"description": "forgotten", **json_of(FactForgottenOut)},
                    **errors(400, 401, 403, 404, 502),
                },
            },
        },
        "/v1/gb/conflicts": {
            "get": {
                "operationId": "listConflicts",
                "summary": "Live facts that cannot all hold, newest first (no LLM call)",
                "description": (
                    "One source with two or more live targets on a relation this memory "
                    "has seen superseding itself. Resolve one with PATCH (end or correct) "
                    "or DELETE /v1/gb/edges/{id}."
                ),
                "parameters": [user, ds, param("limit", page_limit(BROWSE_LIMIT))],
                "responses": {
                    "200": {"description": "the conflicts", **json_of(ConflictsOut)},
                    **errors(400, 401, 403, 404),
                },
            }
        },
        "/v1/gb/entities/{id}/merges": {
            "get": {
                "operationId": "getEntityMerges",
                "summary": "The names merged into an entity: when, from which text, why",
                "parameters": [edge_id, user, ds],
                "responses": {
                    "200": {"description": "the merges", **json_of(MergesOut)},
                    **errors(400, 401, 403, 404),
                },
            }
        },
    }
