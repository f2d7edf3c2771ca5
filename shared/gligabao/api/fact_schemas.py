"""The responses of the routes that correct, forget and audit facts (issue
44): PATCH and DELETE /v1/gb/edges/{id}, GET /v1/gb/conflicts, GET
/v1/gb/entities/{id}/merges (docs/api.md#correct-a-fact)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .schemas import EdgeOut, EntityOut, MentionOut, RestoredOut, _Out


class CorrectedOut(_Out):
    edge: EdgeOut = Field(description="the new fact, with its correction's provenance")
    replaced: EdgeOut = Field(description="the old fact, now superseded")


class FactRemovedOut(_Out):
    edges: list[int]
    vectors: int


class FactForgottenOut(_Out):
    edge_id: int
    removed: FactRemovedOut
    restored: RestoredOut = Field(description="facts this one had superseded, set back")


class StatedOut(MentionOut):
    text: str


class ConflictingEdgeOut(EdgeOut):
    texts: list[StatedOut] = Field(description="the texts that state it")


class ConflictSourceOut(_Out):
    id: int
    name: str


class ConflictOut(_Out):
    source: ConflictSourceOut
    relation: str
    facts: list[ConflictingEdgeOut] = Field(description="newest first")


class ConflictsOut(_Out):
    conflicts: list[ConflictOut] = Field(description="newest first")


class MergeOut(_Out):
    names: list[str] = Field(description="the names the text gave")
    artifact_id: int = Field(description="the text (a mention the split route takes)")
    at: str
    match: Literal["same name", "alias", "model"]
    text: str | None


class MergesOut(_Out):
    entity: EntityOut
    merges: list[MergeOut] = Field(description="oldest first")
