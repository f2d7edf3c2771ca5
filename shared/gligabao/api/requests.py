"""Request models: the common rules of every endpoint, then each body.

Strict types (a number is not a string), unknown fields rejected; every
violation becomes a 400 with a readable reason.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, TypeVar
from urllib.parse import unquote

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
    model_validator,
)

from .. import clock
from ..errors import BadRequest

LEVELS = ("none", "low", "medium", "high")
REMEMBER_STAGES = ("extract", "invalidate", "summarize")
QUERY_STAGES = ("query", "detect_geo")
ALL_STAGES = REMEMBER_STAGES + QUERY_STAGES + ("embed", "rerank")
_DATASET = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_MODEL = re.compile(r"^[A-Za-z0-9._:/@-]{1,128}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MAX_ID_BYTES = 128
MAX_RADIUS_KM = 20015.0
MIN_CONTEXT_TOKENS = 100
MAX_CONTEXT_TOKENS = 16000


def check_user_id(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("user_id must be a string")
    if not value or len(value.encode()) > MAX_ID_BYTES:
        raise ValueError("user_id must be 1 to 128 bytes")
    if _CONTROL.search(value):
        raise ValueError("user_id must not contain control characters")
    return value


def check_dataset(value: Any) -> str:
    if not isinstance(value, str) or not _DATASET.fullmatch(value):
        raise ValueError("dataset must be 1 to 64 characters of A-Z a-z 0-9 . _ -")
    return value


def check_session_id(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("session_id must be a string")
    if len(value.encode()) > MAX_ID_BYTES:
        raise ValueError("session_id must be at most 128 bytes")
    if _CONTROL.search(value):
        raise ValueError("session_id must not contain control characters")
    return value


MAX_SPEAKER_CHARS = 200
# RFC 3339: a date, "T", a time, and a zone ("Z" or an offset); no bare dates.
_RFC3339 = re.compile(r"^\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$")


def check_speaker(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError("speaker must be a non-empty string")
    if len(value) > MAX_SPEAKER_CHARS:
        raise ValueError("speaker must be at most 200 characters")
    if _CONTROL.search(value):
        raise ValueError("speaker must not contain control characters")
    return value.strip()


def check_as_of(value: Any) -> str | None:
    """An RFC 3339 timestamp, as UTC with a trailing Z."""
    if value is None:
        return None
    ts = clock.normalize(value) if isinstance(value, str) and _RFC3339.match(value) else None
    if ts is None:
        raise ValueError("as_of must be an RFC 3339 timestamp (2024-05-01T00:00:00Z)")
    return ts


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


def parse_reasoning(value: Any, stages: tuple[str, ...], main_stage: str) -> dict[str, str]:
    """A string is the level of the endpoint's main stage; an object gives a
    level per stage. Stages left out run with "none"."""
    if value is None:
        return {}
    if isinstance(value, str):
        level = value.lower()
        if level not in LEVELS:
            raise BadRequest(f"reasoning: unknown level {value!r} (none, low, medium, high)")
        return {main_stage: level}
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for stage, level in value.items():
            if stage not in stages:
                raise BadRequest(
                    f"reasoning: unknown stage {stage!r} (expected one of {', '.join(stages)})"
                )
            if not isinstance(level, str) or level.lower() not in LEVELS:
                raise BadRequest(
                    f"reasoning.{stage}: unknown level {level!r} (none, low, medium, high)"
                )
            out[stage] = level.lower()
        return out
    raise BadRequest("reasoning must be a string or an object")


def parse_models(value: Any, stages: tuple[str, ...]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequest("models must be an object of stage to model name")
    out: dict[str, str] = {}
    for stage, model in value.items():
        if stage not in stages:
            raise BadRequest(
                f"models: unknown stage {stage!r} (expected one of {', '.join(stages)})"
            )
        if not isinstance(model, str) or not _MODEL.fullmatch(model):
            raise BadRequest(
                f"models.{stage}: a model name is 1 to 128 characters of A-Z a-z 0-9 . _ : / @ -"
            )
        out[stage] = model
    return out


class _Common(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    user_id: UserId
    dataset: DatasetName = "main"
    session_id: SessionId = None
    reasoning: Any = None
    models: Any = None


MESSAGE_ROLES = ("user", "assistant", "system", "tool")
MAX_MESSAGES = 100


class Message(BaseModel):
    """One chat message of ``remember``'s ``messages``."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    role: Annotated[str, WithJsonSchema({"type": "string", "enum": list(MESSAGE_ROLES)})]
    content: str = Field(min_length=1)
    name: Annotated[
        str | None,
        BeforeValidator(check_speaker),
        WithJsonSchema(
            {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_SPEAKER_CHARS,
                "description": "who wrote it (its speaker; else the role is)",
            }
        ),
    ] = None
    created_at: Annotated[
        str | None,
        WithJsonSchema(
            {
                "type": "string",
                "format": "date-time",
                "description": "when it was said (else the request's reference_time, else now)",
            }
        ),
    ] = None

    @field_validator("role")
    @classmethod
    def _role(cls, v: str) -> str:
        if v not in MESSAGE_ROLES:
            raise ValueError(f"role must be one of {', '.join(MESSAGE_ROLES)}")
        return v

    @field_validator("content")
    @classmethod
    def _content(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("content must be a non-empty string")
        return v

    @field_validator("created_at")
    @classmethod
    def _created_at(cls, v: str | None) -> str | None:
        if v is None:
            return None
        ts = clock.normalize(v) if _RFC3339.match(v) else None
        if ts is None:
            raise ValueError("created_at must be an RFC 3339 timestamp")
        return ts

    @property
    def speaker(self) -> str:
        return self.name or self.role


class RememberRequest(_Common):
    text: str | None = Field(default=None, min_length=1)
    messages: list[Message] | None = Field(default=None, min_length=1, max_length=MAX_MESSAGES)
    # False: store the text or messages as passages only (no LLM call).
    extract: StrictBool = True
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
    def _text(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("text must be a non-empty string")
        return v

    @model_validator(mode="after")
    def _text_or_messages(self) -> RememberRequest:
        if (self.text is None) == (self.messages is None):
            raise ValueError("exactly one of text or messages is required")
        if self.messages is not None and self.speaker is not None:
            raise ValueError("speaker goes with text; a message's speaker is its name or role")
        return self

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


def check_query_params(params: dict[str, str], allowed: set[str]) -> None:
    for name in params:
        if name not in allowed:
            raise BadRequest(f"{name}: unknown query parameter")


def param_user(params: dict[str, str]) -> str:
    if "user_id" not in params:
        raise BadRequest("user_id: required")
    try:
        return check_user_id(params["user_id"])
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc


def param_path_user(value: str) -> str:
    """A user_id in a path (percent-encoded: it may hold "/" or spaces)."""
    try:
        decoded = unquote(value, errors="strict")
    except UnicodeDecodeError as exc:
        raise BadRequest("user_id must be UTF-8") from exc
    try:
        return check_user_id(decoded)
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc


def param_dataset(value: str) -> str:
    try:
        return check_dataset(value)
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc


class SplitRequest(BaseModel):
    """POST /v1/gb/entities/{id}/split: the facts and texts of an entity
    that go to a new one (``name``: the new entity's, default the old's)."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    user_id: UserId
    dataset: DatasetName = "main"
    name: str | None = Field(default=None, min_length=1, max_length=200)
    edges: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list, max_length=100)
    mentions: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list, max_length=100)


def param_id(value: str, what: str) -> int:
    """A row ID in a path: a positive integer."""
    if not value.isascii() or not value.isdigit() or int(value) < 1 or len(value) > 18:
        raise BadRequest(f"{what}: a positive integer ID")
    return int(value)


SEARCH_STAGES = ("detect_geo",)


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


class ForgetRequest(BaseModel):
    """The arguments of forgetting one text (the MCP ``forget`` tool)."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    user_id: UserId
    dataset: DatasetName = "main"
    artifact_id: StrictInt = Field(gt=0, description="the artifact_id that evidence gives")
