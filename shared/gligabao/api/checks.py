"""The rules of the request fields that are plain checks (no pydantic): the
query-parameter routes (datasets, records) use them without loading the
request models, and the models (:mod:`.requests`) are built from them."""

from __future__ import annotations

import re
from typing import Any

from .. import clock
from ..errors import BadRequest

LEVELS = ("none", "low", "medium", "high")
REMEMBER_STAGES = ("extract", "invalidate", "summarize")
QUERY_STAGES = ("query", "detect_geo")
ALL_STAGES = REMEMBER_STAGES + QUERY_STAGES + ("embed",)
_DATASET = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_MODEL = re.compile(r"^[A-Za-z0-9._:/@-]{1,128}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MAX_ID_BYTES = 128
MAX_RADIUS_KM = 20015.0
MIN_CONTEXT_TOKENS = 100
MAX_CONTEXT_TOKENS = 16000
SEARCH_STAGES = ("detect_geo",)


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


# defer_build: a model's validator is built on its first use, not at import,
# so that a function builds only the models its requests use (a query builds
# QueryRequest, never RememberRequest; the MCP function builds the tool
# schemas on the first tools/list).


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


def param_dataset(value: str) -> str:
    try:
        return check_dataset(value)
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc
