"""The body of POST /v1/gb/remember/batch: many texts, each a text (with its
speaker and reference_time) or a chat message (role, content, name,
created_at, as in remember's ``messages``), each with its session and
``extract``. The request's ``session_id`` and ``reference_time`` are the
defaults of its items."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    Tag,
    WithJsonSchema,
    field_validator,
)

from .. import clock
from .requests import (
    MAX_SPEAKER_CHARS,
    REMEMBER_STAGES,
    Message,
    SessionId,
    _Common,
    _models_schema,
    _reasoning_schema,
    check_speaker,
)

MAX_BATCH_ITEMS = 1000


def check_reference_time(v: str | None) -> str | None:
    if v is None:
        return None
    ts = clock.normalize(v)
    if ts is None:
        raise ValueError("reference_time must be an RFC 3339 timestamp")
    return ts


class TextItem(BaseModel):
    """A text of a batch, as remember's ``text``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str = Field(min_length=1)
    speaker: Annotated[
        str | None,
        BeforeValidator(check_speaker),
        WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_SPEAKER_CHARS}),
    ] = None
    reference_time: str | None = None
    session_id: SessionId = None
    extract: StrictBool = True

    @field_validator("text")
    @classmethod
    def _text(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("text must be a non-empty string")
        return v

    @field_validator("reference_time")
    @classmethod
    def _time(cls, v: str | None) -> str | None:
        return check_reference_time(v)

    @property
    def said_by(self) -> str | None:
        return self.speaker

    @property
    def said(self) -> str:
        return self.text

    @property
    def said_at(self) -> str | None:
        return self.reference_time


class MessageItem(Message):
    """A chat message of a batch, as one of remember's ``messages``."""

    session_id: SessionId = None
    extract: StrictBool = True

    @property
    def said_by(self) -> str | None:
        return self.speaker

    @property
    def said(self) -> str:
        return self.content

    @property
    def said_at(self) -> str | None:
        return self.created_at


def _kind(item: Any) -> str:
    return "message" if isinstance(item, dict) and "content" in item else "text"


BatchItem = Annotated[
    Annotated[TextItem, Tag("text")] | Annotated[MessageItem, Tag("message")],
    Discriminator(_kind),
]


class BatchRequest(_Common):
    items: list[BatchItem] = Field(min_length=1, max_length=MAX_BATCH_ITEMS)
    reference_time: str | None = None
    reasoning: Annotated[Any, WithJsonSchema(_reasoning_schema(REMEMBER_STAGES))] = None
    models: Annotated[Any, WithJsonSchema(_models_schema(REMEMBER_STAGES))] = None
    # The batch's key (else the Idempotency-Key header): a rerun skips what it committed.
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=256)

    @field_validator("reference_time")
    @classmethod
    def _time(cls, v: str | None) -> str | None:
        return check_reference_time(v)
