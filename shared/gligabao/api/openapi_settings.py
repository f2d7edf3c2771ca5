"""The OpenAPI paths and bodies of a dataset's settings (issue 44), GET and
PUT /v1/gb/datasets/{name}/settings, merged into the document by
``openapi.build`` (docs/api.md#dataset-settings). The handler checks a body
with ``memory.dataset_settings.check``; these models describe it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..memory.dataset_settings import MAX_TTL_DAYS
from .fields import DatasetName
from .schemas import _Out


class DatasetSettings(_Out):
    """A PUT replaces the settings: a field left out or null goes back to its default."""

    summaries: bool | None = Field(
        None, description="entity summaries on or off (absent: the server's GB_SUMMARIES)"
    )
    text_ttl_days: int | None = Field(
        None,
        ge=1,
        le=MAX_TTL_DAYS,
        description=(
            "a text remembered into the dataset expires this many days after its remember "
            "(unless the remember gives expires_at); the retention sweep forgets it"
        ),
    )


class DatasetSettingsOut(_Out):
    dataset: str
    summaries: bool = Field(description="in effect: the dataset's setting, else the server's")
    text_ttl_days: int | None


REQUESTS: list[type[BaseModel]] = [DatasetSettings]
MODELS: list[type[BaseModel]] = [DatasetSettings, DatasetSettingsOut]


def settings_paths(param: Any, json_of: Any, errors: Any, user: Any) -> dict[str, dict[str, Any]]:
    """``param``, ``json_of``, ``errors``, ``user``: openapi.py's helpers and USER."""
    params = [param("name", DatasetName, True, "path"), user]
    out = {"200": {"description": "the settings in effect", **json_of(DatasetSettingsOut)}}
    return {
        "/v1/gb/datasets/{name}/settings": {
            "get": {
                "operationId": "getDatasetSettings",
                "parameters": params,
                "responses": {**out, **errors(400, 401, 403, 404)},
            },
            "put": {
                "operationId": "putDatasetSettings",
                "description": (
                    "Replaces the dataset's settings. An unknown field or a bad value is 400 "
                    "naming it, an unknown dataset 404; nothing is stored then. text_ttl_days "
                    "applies to texts remembered after the PUT."
                ),
                "parameters": params,
                "requestBody": {"required": True, **json_of(DatasetSettings)},
                "responses": {**out, **errors(400, 401, 403, 404, 413)},
            },
        }
    }
