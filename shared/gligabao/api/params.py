"""Query, path and header parameters: each read through a field type of
api/fields.py, whose JSON Schema is the parameter's in the OpenAPI document
(``schema``), so that the document and the server hold the same rules."""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import unquote

from pydantic import ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError

from ..errors import BadRequest
from ..memory.browse import (
    ARTIFACT_CURSOR,
    ARTIFACT_CURSOR_CHARS,
    ENTITY_CURSOR,
    ENTITY_CURSOR_CHARS,
)
from ..records.codec import INFERENCE_CURSOR, INFERENCE_CURSOR_CHARS
from .fields import (
    NAME,
    NO_CONTROL,
    NOT_BLANK,
    DatasetName,
    Doc,
    RowId,
    SessionId,
    Text,
    UserId,
    says,
)


def _cursor(pattern: str, most: int) -> Any:
    """A listing's page cursor: what its ``next`` gave. Its pattern says which
    strings are positions of that listing (each one is: a page, possibly
    empty); anything else is 400."""
    return Annotated[
        str,
        StringConstraints(min_length=1, max_length=most, pattern=pattern),
        Doc(description="a position in this listing: pass back what the last page's next gave"),
        says("not a cursor of this listing"),
    ]


EntityCursor = _cursor(ENTITY_CURSOR, ENTITY_CURSOR_CHARS)
ArtifactCursor = _cursor(ARTIFACT_CURSOR, ARTIFACT_CURSOR_CHARS)
InferenceCursor = _cursor(INFERENCE_CURSOR, INFERENCE_CURSOR_CHARS)
_CURSORS = {"entities": EntityCursor, "artifacts": ArtifactCursor, "inferences": InferenceCursor}
# A call's ID (one too long for a store's key is simply not found).
CallId = Annotated[
    str,
    StringConstraints(min_length=1, pattern=NO_CONTROL),
    says("must be a non-empty string without control characters"),
]


_LIMITS: dict[int, Any] = {}


def page_limit(most: int) -> Any:
    """A page's size: 1 to ``most``."""
    if most not in _LIMITS:
        _LIMITS[most] = Annotated[int, Field(ge=1, le=most)]
    return _LIMITS[most]


_STRICT = ConfigDict(strict=True)
_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}
_DIGITS = re.compile(r"^[0-9]{1,18}$")  # str.isdigit() also takes "²", which int() refuses


def _adapter(kind: Any) -> TypeAdapter[Any]:
    if kind not in _ADAPTERS:
        _ADAPTERS[kind] = TypeAdapter(kind, config=_STRICT)
    return _ADAPTERS[kind]


def schema(kind: Any) -> dict[str, Any]:
    """The JSON Schema of a parameter of this type."""
    return _adapter(kind).json_schema()


def read(kind: Any, name: str, value: Any) -> Any:
    """The value as its type reads it; BadRequest naming the parameter."""
    try:
        return _adapter(kind).validate_python(value)
    except ValidationError as exc:
        msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise BadRequest(f"{name}: {msg}") from exc


def check_query_params(params: dict[str, str], allowed: set[str]) -> None:
    for name in params:
        if name not in allowed:
            raise BadRequest(f"{name}: unknown query parameter")


def param_user(params: dict[str, str]) -> str:
    if "user_id" not in params:
        raise BadRequest("user_id: required")
    return str(read(UserId, "user_id", params["user_id"]))


def param_path_user(value: str) -> str:
    """A user_id in a path (percent-encoded: it may hold "/" or spaces)."""
    try:
        decoded = unquote(value, errors="strict")
    except UnicodeDecodeError as exc:
        raise BadRequest("user_id must be UTF-8") from exc
    return str(read(UserId, "user_id", decoded))


def param_dataset(value: str) -> str:
    return str(read(DatasetName, "dataset", value))


def param_session(params: dict[str, str]) -> str | None:
    value = params.get("session_id")
    return None if value is None else str(read(SessionId, "session_id", value))


def param_cursor(params: dict[str, str], listing: str) -> str | None:
    """The ``cursor`` of a listing: "entities", "artifacts" or "inferences"."""
    value = params.get("cursor")
    return None if value is None else str(read(_CURSORS[listing], "cursor", value))


def param_call_id(value: str | None) -> str | None:
    return None if value is None else str(read(CallId, "call_id", value))


def param_q(params: dict[str, str]) -> str | None:
    value = params.get("q")
    return None if value is None else str(read(Text, "q", value))


# A type to list by (an entity type, a relation or edge type): as search's
# ``entity_types`` and ``edge_types`` items, matched without case.
TypeName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=64, pattern=NAME),
    says("must be 1 to 64 characters, not blank, without control characters"),
]


def param_type(params: dict[str, str], name: str) -> str | None:
    """A listing's type filter (``type``, ``edge_type``)."""
    value = params.get(name)
    return None if value is None else str(read(TypeName, name, value))


def param_limit(params: dict[str, str], default: int, most: int) -> int:
    raw = params.get("limit")
    if raw is None:
        return default
    if not _DIGITS.match(raw):
        raise BadRequest(f"limit must be an integer from 1 to {most}")
    try:
        return int(read(page_limit(most), "limit", int(raw)))
    except BadRequest as exc:
        raise BadRequest(f"limit must be an integer from 1 to {most}") from exc


def param_id(value: str, what: str = "id") -> int:
    """A row ID in a path: a positive integer, in digits."""
    try:
        return int(read(RowId, what, int(value) if _DIGITS.match(value) else value))
    except BadRequest as exc:
        raise BadRequest(f"{what} must be a positive integer") from exc


# The Idempotency-Key header: as the body's ``idempotency_key``, not blank.
HeaderKey = Annotated[
    str,
    StringConstraints(min_length=1, max_length=256, pattern=NOT_BLANK),
    says("must be 1 to 256 characters, not blank"),
]


def header_idempotency_key(headers: dict[str, str]) -> str | None:
    value = headers.get("idempotency-key")
    return None if value is None else str(read(HeaderKey, "Idempotency-Key", value))
