"""Request models: the common rules of every endpoint, then each body.

Strict types (a number is not a string), unknown fields rejected; every
violation becomes a 400 with a readable reason.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    WithJsonSchema,
    field_validator,
)

from .. import clock
from ..errors import BadRequest
from .checks import (
    MAX_CONTEXT_TOKENS,
    MAX_RADIUS_KM,
    MAX_SPEAKER_CHARS,
    MIN_CONTEXT_TOKENS,
    QUERY_STAGES,
    REMEMBER_STAGES,
    SEARCH_STAGES,
    check_as_of,
    check_dataset,
    check_session_id,
    check_speaker,
    check_user_id,
)

_NO_CONTROL = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"
UserId = Annotated[
    str,
    BeforeValidator(check_user_id),
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": 128,
            "pattern": _NO_CONTROL,
            "description": "1 to 128 bytes, no control characters",
        }
    ),
]
DatasetName = Annotated[
    str,
    BeforeValidator(check_dataset),
    WithJsonSchema({"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$", "default": "main"}),
]
SessionId = Annotated[
    str | None,
    BeforeValidator(check_session_id),
    WithJsonSchema(
        {
            "type": "string",
            "maxLength": 128,
            "pattern": _NO_CONTROL,
            "description": "at most 128 bytes, no control characters",
        }
    ),
]
_STAGE_LEVELS = {
    "type": "string",
    "enum": ["none", "low", "medium", "high"],
    "description": "case-insensitive",
}


def _reasoning_schema(stages: tuple[str, ...]) -> dict[str, Any]:
    return {
        "anyOf": [
            _STAGE_LEVELS,
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {s: _STAGE_LEVELS for s in stages},
            },
        ]
    }


def _models_schema(stages: tuple[str, ...]) -> dict[str, Any]:
    name = {"type": "string", "pattern": "^[A-Za-z0-9._:/@-]{1,128}$"}
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {s: name for s in stages},
    }


class _Common(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    user_id: UserId
    dataset: DatasetName = "main"
    session_id: SessionId = None
    reasoning: Any = None
    models: Any = None


class RememberRequest(_Common):
    text: str = Field(min_length=1)
    reasoning: Annotated[Any, WithJsonSchema(_reasoning_schema(REMEMBER_STAGES))] = None
    models: Annotated[Any, WithJsonSchema(_models_schema(REMEMBER_STAGES))] = None
    reference_time: str | None = None
    speaker: Annotated[
        str | None,
        BeforeValidator(check_speaker),
        WithJsonSchema(
            {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_SPEAKER_CHARS,
                "description": 'who is talking (e.g. the user\'s name): "I" and "my" in the '
                "text are this person",
            }
        ),
    ] = None
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=256)

    @field_validator("text")
    @classmethod
    def _text(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("text must be a non-empty string")
        return v

    @field_validator("reference_time")
    @classmethod
    def _reference_time(cls, v: str | None) -> str | None:
        if v is None:
            return None
        ts = clock.normalize(v)
        if ts is None:
            raise ValueError("reference_time must be an RFC 3339 timestamp")
        return ts


class QueryRequest(_Common):
    query: str = Field(min_length=1)
    reasoning: Annotated[Any, WithJsonSchema(_reasoning_schema(QUERY_STAGES))] = None
    models: Annotated[Any, WithJsonSchema(_models_schema(QUERY_STAGES))] = None
    geo_nearby: StrictBool | None = None
    geo_radius_km: Annotated[
        float | None,
        WithJsonSchema({"type": "number", "exclusiveMinimum": 0, "maximum": MAX_RADIUS_KM}),
    ] = None
    as_of: Annotated[
        str | None,
        BeforeValidator(check_as_of),
        WithJsonSchema(
            {
                "type": "string",
                "format": "date-time",
                "description": "RFC 3339: answer from the world as it stood at that instant "
                "(the facts valid then, superseded since or not)",
            }
        ),
    ] = None
    # The token budget of this question's context (else the server's GB_CONTEXT_TOKENS).
    max_context_tokens: StrictInt | None = Field(
        default=None, ge=MIN_CONTEXT_TOKENS, le=MAX_CONTEXT_TOKENS
    )

    @field_validator("query")
    @classmethod
    def _query(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("query must be a non-empty string")
        return v

    @field_validator("geo_radius_km", mode="before")
    @classmethod
    def _radius(cls, v: Any) -> Any:
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ValueError("geo_radius_km must be a number")
        if not 0 < float(v) <= MAX_RADIUS_KM:
            raise ValueError("geo_radius_km must be greater than 0 and at most 20015")
        return float(v)


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "body"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        elif err["type"] == "missing":
            msg = "required"
        msg = msg.removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}")
    return "; ".join(parts)


M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], body: Any) -> M:
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise BadRequest(_describe(exc)) from exc




class SearchRequest(QueryRequest):
    """The query's retrieval without the answer: every field of a query (so
    that a field the query gains, search gains too); ``reasoning`` and
    ``models`` only name the stage retrieval may run (the nearby search's
    place detection)."""

    reasoning: Annotated[Any, WithJsonSchema(_reasoning_schema(SEARCH_STAGES))] = None
    models: Annotated[Any, WithJsonSchema(_models_schema(SEARCH_STAGES))] = None


class DatasetsRequest(BaseModel):
    """The arguments of listing datasets (query parameters over HTTP)."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    user_id: UserId
