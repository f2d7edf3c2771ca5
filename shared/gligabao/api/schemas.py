"""Response models of the API: the OpenAPI document is generated from these
and from the request models, and the tests check the served responses
against it (schemathesis) so the two cannot drift."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# An attribute's value: its declared type's (a date-time is a string).
AttributeValue = bool | int | float | str


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class ErrorOut(_Out):
    error: str


class ExplainOut(BaseModel):
    """Why an item is in a query's context (a request's ``explain``): its
    score, the parts it is the sum of (added in this order), and the figures
    they came from. A fact's parts: ``reach`` (what its ends pass on: seed
    strength, or what a one-hop fact lent a two-hop entity), ``similarity``,
    ``lexical``, ``recency``, ``provenance``, ``when``; a passage's ``match``
    (its rank times its words), ``source``, ``when``, or ``beside`` (a share of
    a neighbouring match's score); a seed's ``seed_line``. The figures: the
    pool that found it (``pool``: one_hop, two_hop, similar_facts, nearby,
    text_search, summary_search, beside, fact_source, keywords,
    similar_entities, fact_end), its ``rank`` there, ``reach``,
    ``similarity``, ``lexical_share``, ``age``, ``by_rank``, ``beside_of``,
    ``neighbour_share``, ``source_of``, ``end_of``, ``keyword_points``."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    score: float
    parts: dict[str, float]
    pool: str | None = None


class LeftOutOut(_Out):
    """A candidate that did not make it into the context."""

    kind: Literal["entity", "edge", "passage"]
    id: int
    reason: Literal["under_floor", "past_budget"] = Field(
        description="under the relevance floor (left out, room or not), or past the budget"
    )
    label: str = Field(description="its name, its fact's line or its text's start")
    explain: ExplainOut


class EntityOut(_Out):
    id: int
    name: str
    type: str
    description: str | None = None
    lat: float | None = None
    lon: float | None = None
    attributes: dict[str, AttributeValue] | None = Field(
        default=None,
        description="the values of its declared type's attributes (the dataset's schema), "
        "each validated against it; the newest value wins (absent: none)",
    )
    explain: ExplainOut | None = None


class RememberedEntityOut(EntityOut):
    created: bool
    match: Literal["same name", "alias", "model"] | None = Field(
        default=None,
        description="why the name is this stored entity: the same name after normalization, "
        "an alias (a part left out, a known short form, an initial), or the model said so; "
        "null when created",
    )


class CorrectionOut(_Out):
    """Why a fact exists when a person wrote it (PATCH /v1/gb/edges/{id})."""

    source: Literal["correction"]
    replaces: int = Field(description="the fact it superseded")
    who: str
    at: str
    reason: str | None


class EdgeOut(_Out):
    id: int
    source_id: int
    target_id: int
    source: str
    target: str
    relation: str
    description: str | None = None
    artifact_id: int | None = None
    valid_at: str | None
    invalid_at: str | None
    created_at: str | None = None
    expired_at: str | None = None
    attributes: dict[str, AttributeValue] | None = Field(
        default=None,
        description="its declared edge type's values (dataset schema); a free relation has none",
    )
    explain: ExplainOut | None = None
    correction: CorrectionOut | None = Field(
        default=None, description="a correction's provenance (browse routes)"
    )


class InvalidatedOut(_Out):
    id: int
    invalid_at: str | None
    expired_at: str | None = None


class RememberOut(_Out):
    session_id: str | None = None
    artifact_id: int  # the first of ``artifacts``
    artifacts: list[int]  # the texts stored (a text, or each message), in order
    entities: list[RememberedEntityOut]
    edges: list[EdgeOut]
    invalidated: list[InvalidatedOut]
    chunks: int


class PassageOut(_Out):
    artifact_id: int
    parent_id: int | None = None
    index: int | None = None
    summary: str | None = None
    text: str | None = None
    kind: str | None = Field(
        None, description='"session_summary": the summary of a session that ended'
    )
    explain: ExplainOut | None = None


class EvidenceOut(_Out):
    entities: list[EntityOut]
    edges: list[EdgeOut]
    passages: list[PassageOut]


class AnchorOut(_Out):
    name: str
    lat: float
    lon: float
    entity_id: int | None = None


class NearbyEntityOut(_Out):
    id: int
    name: str
    type: str
    distance_km: float
    anchor: str
    lat: float | None = None
    lon: float | None = None


class NearbyOut(_Out):
    radius_km: float
    anchors: list[AnchorOut]
    nearby: list[NearbyEntityOut]


class QueryOut(_Out):
    session_id: str | None = None
    answer: str
    evidence: EvidenceOut
    nearby: NearbyOut | None = None
    context: EvidenceOut | None = Field(
        None, description="with explain: the whole context the answer was given, explained"
    )
    left_out: list[LeftOutOut] | None = Field(
        None, description="with explain: the best candidates that did not make it"
    )


class NoteOut(_Out):
    kind: Literal["summary", "preference", "instruction"]
    text: str
    ref: str = Field(description='what it rests on: "entity 3 Alice", "edge 12", "passage 40"')
    artifact_id: int | None = None
    topic: str | None = None


class SearchOut(_Out):
    """The context a query's answer would be given from, best first."""

    session_id: str | None = None
    entities: list[EntityOut]
    edges: list[EdgeOut]
    passages: list[PassageOut]
    notes: list[NoteOut] | None = Field(
        None,
        description="the seed entities' summaries and the user's preferences and standing "
        "instructions, under their share of the budget (absent: none)",
    )
    nearby: NearbyOut | None = None
    context_tokens: int = Field(description="estimated tokens of the context as the LLM sees it")
    left_out: list[LeftOutOut] | None = Field(
        None, description="with explain: the best candidates that did not make it"
    )


class DatasetOut(_Out):
    name: str
    created_at: str
    entities: int
    edges: int
    artifacts: int


class DatasetsOut(_Out):
    datasets: list[DatasetOut]


class AttributeSpec(_Out):
    """One attribute of a type: a subset of JSON Schema."""

    type: Literal["string", "number", "integer", "boolean"] | None = Field(
        None, description="string when omitted with an enum"
    )
    format: Literal["date-time"] | None = Field(None, description="of a string only")
    enum: list[str] | None = Field(None, description="1 to 50 strings (type string)")
    description: str | None = Field(None, description="at most 500 characters")


class EntityTypeSpec(_Out):
    description: str = ""
    attributes: dict[str, AttributeSpec] = Field(
        default_factory=dict, description="at most 10, snake_case names"
    )


class EdgeTypeSpec(EntityTypeSpec):
    source_types: list[str] = Field(
        default_factory=list, description="entity types of the source (declared ones)"
    )
    target_types: list[str] = Field(
        default_factory=list, description="entity types of the target (declared ones)"
    )


class DatasetSchema(_Out):
    """A dataset's types (docs/api.md#dataset-schemas): at most 10 entity
    types (PascalCase) and 10 edge types (UPPER_SNAKE_CASE), 16 KiB."""

    entity_types: dict[str, EntityTypeSpec] = Field(default_factory=dict)
    edge_types: dict[str, EdgeTypeSpec] = Field(default_factory=dict)


class DatasetSchemaOut(DatasetSchema):
    dataset: str


class InferenceOut(_Out):
    id: str
    user_id: str
    dataset: str
    session_id: str | None
    call_id: str
    type: str
    stage: str
    provider: str
    model: str
    reasoning: str
    input_tokens: int
    output_tokens: int
    thinking_tokens: int | None
    cost_usd: float
    latency_ms: int
    status: str
    created_at: str


class InferencesOut(_Out):
    inferences: list[InferenceOut]
    next: str | None


class StepOut(BaseModel):
    model_config = ConfigDict(extra="allow")  # each step adds its own counts
    name: str
    ms: float


class ErasedCountsOut(_Out):
    datasets: int
    entities: int
    edges: int
    artifacts: int
    calls: int
    inferences: int
    idempotency: int


class ErasedResultOut(_Out):
    """What an erase of a user did: when it finished, how many of each went
    (no text, no names)."""

    finished_at: str
    removed: ErasedCountsOut


class BatchProgressOut(_Out):
    """A batch remember's progress (while it runs) and totals (once done)."""

    texts: int = Field(description="texts in the batch")
    done: int = Field(description="texts committed (with those skipped)")
    skipped: int = Field(description="committed by an earlier run with the same key")
    failed: int = Field(description="texts of pieces that failed for good (a rerun retries them)")
    pieces: int = Field(description="commits so far")
    llm_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    errors: list[str] = Field(default_factory=list, description="the first failures")


class ExplainedContextOut(_Out):
    """A call record's explanation: each item's, by kind and ID."""

    entities: dict[str, ExplainOut]
    edges: dict[str, ExplainOut]
    passages: dict[str, ExplainOut]
    left_out: list[LeftOutOut]


class ExplainedOut(_Out):
    explain: ExplainedContextOut


class CallOut(_Out):
    call_id: str
    type: str
    status: str
    dataset: str
    session_id: str | None = None
    started_at: str
    duration_ms: float
    steps: list[StepOut] = Field(default_factory=list)
    result: RememberOut | BatchProgressOut | ErasedResultOut | ExplainedOut | None = Field(
        default=None,
        description="a queued remember's response, once its status is ok; a batch's "
        "progress while it runs, then its totals; an erase's counts; a query or search "
        "asked with explain: why each item was in its context",
    )


class AcceptedOut(_Out):
    call_id: str
    status: str = Field(description='"accepted"; poll GET /v1/gb/calls/{call_id}')
    session_id: str | None = None


JSON = dict[str, Any]


class MovedOut(_Out):
    edges: list[int] = Field(description="the moved facts' new IDs (the originals are expired)")
    mentions: list[int] = Field(description="the texts (artifact IDs) that now name the new entity")


class SplitOut(_Out):
    entity: EntityOut
    moved: MovedOut


# --- browse and forget (docs/api.md#browse-and-forget) --------------------------------


class MentionOut(_Out):
    """A text an entity or fact was stated in."""

    artifact_id: int
    said_at: str | None = Field(description="the text's reference time (RFC 3339)")
    created_at: str = Field(description="when it was remembered")
    session_id: str | None
    speaker: str | None


class AttributeChangeOut(_Out):
    value: AttributeValue = Field(description="a value the attribute had")
    until: str = Field(description="when a newer value replaced it")


class BrowsedEntityOut(EntityOut):
    created_at: str
    updated_at: str
    attribute_history: dict[str, list[AttributeChangeOut]] | None = Field(
        default=None,
        description="an entity's page: the values each attribute had before, newest first "
        "(a few each; absent: none replaced)",
    )


class ListedEntityOut(BrowsedEntityOut):
    facts: int = Field(description="live facts of the entity (at most 100 counted)")


class EntitiesOut(_Out):
    entities: list[ListedEntityOut]
    next_cursor: str | None


class PreferenceOut(_Out):
    """A standing preference or instruction the user gave (a marked fact)."""

    edge_id: int
    kind: Literal["preference", "instruction"]
    topic: str = Field(description="what it governs")
    text: str


class EntityDetailOut(_Out):
    entity: BrowsedEntityOut
    summary: str | None = Field(
        description="a few sentences the model wrote from the entity's live facts and texts "
        "(null: none written yet, or summaries are off)"
    )
    summary_updated_at: str | None = Field(description="when the summary was written")
    summary_stale: bool = Field(
        description="the entity's facts changed since (a background job rewrites it), or "
        "there is no summary"
    )
    summary_edges: list[int] = Field(description="the facts (edge IDs) the summary rests on")
    summary_artifacts: list[int] = Field(description="the texts (artifact IDs) it rests on")
    preferences: list[PreferenceOut] = Field(
        description="the user's own entity (their profile): the preferences and standing "
        "instructions among its facts"
    )
    facts: list[EdgeOut] = Field(description="live facts, both directions")
    mentions: list[MentionOut]


class EdgeStepOut(_Out):
    edge: EdgeOut
    at: str | None
    artifact_id: int | None = Field(description="the text because of which")
    correction: CorrectionOut | None = Field(
        default=None, description="the change was a correction: who, when, why"
    )


class EdgeDetailOut(_Out):
    edge: EdgeOut
    sources: list[MentionOut]
    replaced: list[EdgeStepOut] = Field(description="the facts this one superseded or ended")
    replaced_by: EdgeStepOut | None = Field(description="the fact that superseded this one")


class ArtifactOut(_Out):
    id: int
    text: str
    session_id: str | None
    speaker: str | None
    said_at: str | None
    created_at: str


class ArtifactDetailOut(_Out):
    artifact: ArtifactOut
    entities: list[EntityOut]
    edges: list[EdgeOut]
    chunks: list[PassageOut]


class ArtifactsOut(_Out):
    artifacts: list[ArtifactOut]
    next_cursor: str | None


class RemovedOut(_Out):
    artifacts: list[int]
    edges: list[int]
    entities: list[int]
    chunks: int
    vectors: int


class RestoredOut(_Out):
    edges: list[int]


class ForgottenOut(_Out):
    artifact_id: int
    removed: RemovedOut
    restored: RestoredOut = Field(description="facts the text had ended or superseded, set back")


class ErasedOut(ErasedResultOut):
    call_id: str
    status: str = Field(description="`ok` once every store is erased")
