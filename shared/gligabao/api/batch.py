"""The body of POST /v1/gb/remember/batch: many texts, each a text (with its
speaker and reference_time) or a chat message (role, content, name,
created_at, as in remember's ``messages``), each with its session and
``extract``. The request's ``session_id`` and ``reference_time`` are the
defaults of its items."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Discriminator, Field, StrictBool, Tag

from .fields import IdempotencyKey, SessionId, Speaker, Text, Timestamp
from .requests import Message, _Common
from .stages import REMEMBER_STAGES, RememberModels, RememberReasoning

MAX_BATCH_ITEMS = 1000


class TextItem(BaseModel):
    """A text of a batch, as remember's ``text``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: Text
    speaker: Speaker | None = None
    reference_time: Timestamp | None = None
    session_id: SessionId | None = None
    extract: StrictBool = True

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

    session_id: SessionId | None = None
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
    STAGES: ClassVar[tuple[str, ...]] = REMEMBER_STAGES
    items: list[BatchItem] = Field(min_length=1, max_length=MAX_BATCH_ITEMS)
    reference_time: Timestamp | None = None
    reasoning: RememberReasoning | None = None
    models: RememberModels | None = None
    # The batch's key (else the Idempotency-Key header): a rerun skips what it committed.
    idempotency_key: IdempotencyKey | None = None
