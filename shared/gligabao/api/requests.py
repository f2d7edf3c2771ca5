"""Request models: the common fields of every endpoint, then each body.

Strict types (a number is not a string), unknown fields rejected; every
violation becomes a 400 with a readable reason. The rules are the field
types' (api/fields.py, api/stages.py): the validation and the JSON Schema
come from them. ``None`` is accepted where the schema says ``null``.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
    ValidationError,
    create_model,
    model_validator,
)
from pydantic.config import JsonDict

from ..errors import BadRequest
from ..retrieval_profile import RetrievalProfile
from .fields import (
    ContextTokens,
    DatasetName,
    IdempotencyKey,
    MessageRole,
    Question,
    RadiusKm,
    RowId,
    SessionId,
    Speaker,
    Text,
    Timestamp,
    UserId,
    _integral,
)
from .stages import (
    FORM_TAGS,
    QUERY_STAGES,
    REMEMBER_STAGES,
    SEARCH_STAGES,
    QueryModels,
    QueryReasoning,
    RememberModels,
    RememberReasoning,
    SearchModels,
    SearchReasoning,
)

MAX_MESSAGES = 100
_STRICT = ConfigDict(extra="forbid", strict=True, defer_build=True)


# A type filter: 1 to 20 type names (an entity type, a relation or edge type).
TypeNames = Annotated[
    list[Annotated[str, StringConstraints(min_length=1, max_length=64)]],
    Field(min_length=1, max_length=20),
]


class _Common(BaseModel):
    model_config = _STRICT
    STAGES: ClassVar[tuple[str, ...]] = ()  # those its reasoning and models may name

    user_id: UserId
    dataset: DatasetName = "main"
    session_id: SessionId | None = None


class Message(BaseModel):
    """One chat message of ``remember``'s ``messages``."""

    model_config = _STRICT

    role: MessageRole
    content: Text
    name: Speaker | None = Field(None, description="who wrote it (its speaker; else the role is)")
    created_at: Timestamp | None = Field(
        None, description="when it was said (else the request's reference_time, else now)"
    )

    @property
    def speaker(self) -> str:
        return self.name or self.role


# Exactly one of text and messages; speaker goes with text.
_TEXT_OR_MESSAGES: JsonDict = {
    "oneOf": [
        {
            "required": ["text"],
            "properties": {"text": {"type": "string"}, "messages": {"type": "null"}},
        },
        {
            "required": ["messages"],
            "properties": {
                "messages": {"type": "array"},
                "text": {"type": "null"},
                "speaker": {"type": "null"},
            },
        },
    ]
}


class RememberRequest(_Common):
    model_config = ConfigDict(**_STRICT, json_schema_extra=_TEXT_OR_MESSAGES)
    STAGES: ClassVar[tuple[str, ...]] = REMEMBER_STAGES

    text: Text | None = None
    messages: Annotated[list[Message], Field(min_length=1, max_length=MAX_MESSAGES)] | None = None
    # False: store the text or messages as passages only (no LLM call).
    extract: StrictBool = True
    reasoning: RememberReasoning | None = None
    models: RememberModels | None = None
    reference_time: Timestamp | None = None
    expires_at: Timestamp | None = Field(
        None,
        description="forget the text then (its facts and entities with it, what it "
        "superseded set back): the retention sweep runs the forget",
    )
    speaker: Speaker | None = Field(
        None,
        description='who is talking (e.g. the user\'s name): "I" and "my" in the text are '
        "this person",
    )
    close_session: StrictBool = Field(
        False,
        description="this text is its session's last: the session ends now and the model "
        "writes its summary, off the request path (needs session_id)",
    )
    idempotency_key: IdempotencyKey | None = None

    @model_validator(mode="after")
    def _text_or_messages(self) -> RememberRequest:
        if self.close_session and self.session_id is None:
            raise ValueError("close_session needs a session_id")
        if (self.text is None) == (self.messages is None):
            raise ValueError("exactly one of text or messages is required")
        if self.messages is not None and self.speaker is not None:
            raise ValueError("speaker goes with text; a message's speaker is its name or role")
        return self


def _overrides() -> type[BaseModel]:
    """The retrieval profile's fields, each optional, with the profile's
    types and bounds: a request's ``profile`` (so the schema names them)."""
    fields: dict[str, Any] = {}
    for name, f in RetrievalProfile.model_fields.items():
        # JSON's integers: 2.0 is one (JSON Schema's "integer"), as for the other fields.
        extra = [BeforeValidator(_integral)] if f.annotation is int else []
        fields[name] = (Annotated[f.annotation, *f.metadata, *extra] | None, None)  # type: ignore[name-defined]
    return create_model("ProfileOverrides", __config__=_STRICT, **fields)


ProfileOverrides = _overrides()


class QueryRequest(_Common):
    STAGES: ClassVar[tuple[str, ...]] = QUERY_STAGES
    query: Question
    reasoning: QueryReasoning | None = None
    models: QueryModels | None = None
    geo_nearby: StrictBool | None = None
    geo_radius_km: RadiusKm | None = None
    as_of: Timestamp | None = Field(
        None,
        description="RFC 3339: answer from the world as it stood at that instant (the facts "
        "valid then, superseded since or not)",
    )
    # The token budget of this question's context (else the server's GB_CONTEXT_TOKENS).
    max_context_tokens: ContextTokens | None = None
    explain: StrictBool = Field(
        False,
        description="every entity, edge and passage of the context carries `explain` (its "
        "score and the parts that made it), and `left_out` lists the best candidates that "
        "did not make it, with the reason",
    )
    profile: ProfileOverrides | None = Field(  # type: ignore[valid-type]
        None,
        description="local server only (`gligabao serve`): retrieval profile fields to change "
        'for this request, e.g. `{"relevance_floor": 0.2}` (docs/retrieval.md); a deployed '
        "API answers 400 (its pools are the query's cost bounds: GB_RETRIEVAL_PROFILE sets them)",
    )
    entity_types: TypeNames | None = Field(
        None,
        description="only entities of these types (case-insensitive), and only facts between "
        "two of them (docs/api.md#type-filters)",
    )
    edge_types: TypeNames | None = Field(
        None,
        description="only facts of these relations or edge types (case-insensitive: "
        "OWNS_ACCOUNT is owns_account)",
    )


class SearchRequest(QueryRequest):
    """The query's retrieval without the answer: every field of a query (so
    that a field the query gains, search gains too); ``reasoning`` and
    ``models`` only name the stage retrieval may run (the nearby search's
    place detection)."""

    STAGES: ClassVar[tuple[str, ...]] = SEARCH_STAGES
    reasoning: SearchReasoning | None = None  # type: ignore[assignment]
    models: SearchModels | None = None  # type: ignore[assignment]


class SplitRequest(BaseModel):
    """POST /v1/gb/entities/{id}/split: the facts and texts of an entity
    that go to a new one (``name``: the new entity's, default the old's)."""

    model_config = _STRICT

    user_id: UserId
    dataset: DatasetName = "main"
    name: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    edges: list[RowId] = Field(default_factory=list, max_length=100)
    mentions: list[RowId] = Field(default_factory=list, max_length=100)


class CorrectRequest(BaseModel):
    """PATCH /v1/gb/edges/{id}: the fact ended (``invalid_at``), or it was
    wrong (a corrected ``description``, or target: a stored entity's name or
    ID). ``reason`` is kept with the correction's provenance."""

    model_config = _STRICT

    user_id: UserId
    dataset: DatasetName = "main"
    invalid_at: Timestamp | None = None
    description: Annotated[str, Field(min_length=1, max_length=600)] | None = None
    target: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    target_id: RowId | None = None
    reason: Annotated[str, Field(min_length=1, max_length=1000)] | None = None


class CorrectFactRequest(CorrectRequest):
    """The arguments of correcting one fact (the MCP ``correct_fact`` tool)."""

    edge_id: RowId = Field(description="the fact's id (query and search evidence give it)")


class ConflictsRequest(BaseModel):
    """The arguments of listing conflicts (the MCP ``list_conflicts`` tool)."""

    model_config = _STRICT

    user_id: UserId
    dataset: DatasetName = "main"
    limit: Annotated[int, Field(ge=1, le=100)] = 20


class ForgetFactRequest(BaseModel):
    """The arguments of forgetting one fact (the MCP ``forget_fact`` tool)."""

    model_config = _STRICT

    user_id: UserId
    dataset: DatasetName = "main"
    edge_id: RowId = Field(description="the fact's id")


class DatasetsRequest(BaseModel):
    """The arguments of listing datasets (query parameters over HTTP)."""

    model_config = _STRICT

    user_id: UserId


class ForgetRequest(BaseModel):
    """The arguments of forgetting one text (the MCP ``forget`` tool)."""

    model_config = _STRICT

    user_id: UserId
    dataset: DatasetName = "main"
    artifact_id: RowId = Field(description="the artifact_id that evidence gives")


class SchemaRequest(BaseModel):
    """The arguments of reading a dataset's schema (the MCP ``get_schema`` tool)."""

    model_config = _STRICT

    user_id: UserId
    dataset: DatasetName = "main"


class PutSchemaRequest(SchemaRequest):
    """The arguments of declaring a dataset's types (the MCP ``put_schema``
    tool): the body of PUT /v1/gb/datasets/{name}/schema, checked by the same
    code (memory/schema.py; docs/api.md#dataset-schemas)."""

    entity_types: dict[str, Any] = Field(
        default_factory=dict,
        description="at most 10, PascalCase name -> {description, attributes: {snake_case "
        "name -> {type: string|number|integer|boolean, format?: date-time, enum?, "
        "description?}}}",
    )
    edge_types: dict[str, Any] = Field(
        default_factory=dict,
        description="at most 10, UPPER_SNAKE_CASE name -> {description, attributes, "
        "source_types, target_types (declared entity types; none: any)}",
    )


def _where(loc: tuple[int | str, ...]) -> str:
    # A reasoning's form ("level" or "stages") is no field of the request.
    parts = [str(p) for i, p in enumerate(loc) if not (i == 1 and p in FORM_TAGS)]
    return ".".join(parts) or "body"


def _describe(exc: ValidationError, stages: tuple[str, ...] = ()) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = err["loc"]
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            stage = len(loc) > 1 and loc[0] in ("reasoning", "models")
            msg = f"unknown stage {loc[-1]!r}" if stage else "unknown field"
            if stage and stages:
                msg += f" (expected one of {', '.join(stages)})"
            loc = loc[:1] if stage else loc
        elif err["type"] == "missing":
            msg = "required"
        msg = msg.removeprefix("Value error, ")
        parts.append(f"{_where(loc)}: {msg}")
    return "; ".join(parts)


M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], body: Any) -> M:
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise BadRequest(_describe(exc, getattr(model, "STAGES", ()))) from exc
