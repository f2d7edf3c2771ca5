"""The DynamoDB tables, defined once: the adapters, the local server, the tests
and template.yaml all derive from these pynamodb models.

Every graph table is partitioned by ``pk`` = ``DatasetKey.pk`` (user and
dataset joined with a unit separator), so a dataset is read, listed and deleted
with Queries on its own partition, never with a Scan, and no key of one user
can ever address a row of another.

Table names are ``<prefix><short name>`` (``admin.configure_tables``).
Short names: datasets, entities, names, terms, edges, artifacts, links, calls,
inferences, idempotency. Every model shares one client per endpoint
(``client.py``).
"""

from __future__ import annotations

from typing import Any

from pynamodb.attributes import (
    Attribute,
    BinaryAttribute,
    BooleanAttribute,
    NumberAttribute,
    NumberSetAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UnicodeSetAttribute,
)
from pynamodb.constants import LIST, PAY_PER_REQUEST_BILLING_MODE
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex, KeysOnlyProjection
from pynamodb.models import Model

from .client import SharedClientModel

DEFAULT_PREFIX = "gb_"
DEFAULT_REGION = "us-east-1"


def _meta(short: str) -> Any:
    class Meta:
        table_name = DEFAULT_PREFIX + short
        region = DEFAULT_REGION
        host: str | None = None
        billing_mode = PAY_PER_REQUEST_BILLING_MODE
        # The store sends up to 48 requests at once (graph.dynamodb.store.WORKERS); the
        # default pool of 10 connections would queue them.
        max_pool_connections = 64

    return Meta


def _gsi_meta(name: str) -> Any:
    class Meta:
        index_name = name
        projection = AllProjection()

    return Meta


class VectorAttribute(Attribute[list[float]]):
    """A vector as DynamoDB's vector indexes read it: a list of numbers (9
    significant digits: an f32, which is what the index keeps, round-trips).
    VectorStore=dynamodb only (dynamodb/vectors.py)."""

    attr_type = LIST

    def serialize(self, value: list[float]) -> list[dict[str, str]]:
        return [{"N": f"{float(x):.9g}"} for x in value]

    def deserialize(self, value: list[dict[str, str]]) -> list[float]:
        return [float(e["N"]) for e in value]


# --- graph tables -------------------------------------------------------------


class DatasetRow(SharedClientModel):
    Meta = _meta("datasets")
    short_name = "datasets"

    user_id = UnicodeAttribute(hash_key=True)
    name = UnicodeAttribute(range_key=True)
    created_at = UnicodeAttribute()
    # Set when the dataset is deleted: the row stays, so that its ID counters
    # go on when the name is used again (IDs are never reused).
    deleted_at = UnicodeAttribute(null=True)
    # New at every creation of the name (``Dataset.generation``): a commit is
    # conditional on it (an erase is a fence).
    generation = UnicodeAttribute(null=True)
    # ID counters: the last ID handed out (IDs start at 1).
    next_entity = NumberAttribute(default=0)
    next_edge = NumberAttribute(default=0)
    next_artifact = NumberAttribute(default=0)
    # Row counts, incremented by apply.
    entities = NumberAttribute(default=0)
    edges = NumberAttribute(default=0)
    artifacts = NumberAttribute(default=0)
    # The mark of an erase begun (user_id ``oneway.ERASING``, name: the
    # user's ID): the erase's call, and its event (the packed bodies) once its
    # last step began: the mark is the erase's outbox (docs/events.md).
    call_id = UnicodeAttribute(null=True)
    events = BinaryAttribute(null=True, legacy_encoding=False)


class EntityByUpdated(GlobalSecondaryIndex["EntityRow"]):
    """recent_entities: one Query, newest first."""

    Meta = _gsi_meta("by_updated")
    pk = UnicodeAttribute(hash_key=True)
    updated_key = UnicodeAttribute(range_key=True)


class EntityRow(SharedClientModel):
    Meta = _meta("entities")
    short_name = "entities"

    pk = UnicodeAttribute(hash_key=True)
    id = NumberAttribute(range_key=True)
    name = UnicodeAttribute()
    norm_name = UnicodeAttribute()
    type = UnicodeAttribute(default="")
    description = UnicodeAttribute(default="")
    created_at = UnicodeAttribute(default="")
    updated_at = UnicodeAttribute(default="")
    updated_key = UnicodeAttribute()  # f"{updated_at}#{id:012d}"
    lat = NumberAttribute(null=True)
    lon = NumberAttribute(null=True)
    # Declared attributes and their history, as JSON (a float is no
    # DynamoDB number without Decimal; nothing queries them by value).
    attributes = UnicodeAttribute(null=True)
    attribute_history = UnicodeAttribute(null=True)
    txn = UnicodeAttribute(null=True)  # the writing call's, until its commit lands
    vec = VectorAttribute(null=True)  # VectorStore=dynamodb: the name's vector
    vt = NumberAttribute(null=True)  # when the vector was written (epoch seconds)

    by_updated = EntityByUpdated()


class NameRow(SharedClientModel):
    """Name claims: one normalized name maps to one entity of the dataset.
    While the claiming call has not committed, the claim is a lease: ``txn``
    names the call and ``lease_until`` (epoch seconds) when it may be taken
    over (see graph/dynamodb/leases.py)."""

    Meta = _meta("names")
    short_name = "names"

    pk = UnicodeAttribute(hash_key=True)
    norm_name = UnicodeAttribute(range_key=True)
    entity_id = NumberAttribute()
    txn = UnicodeAttribute(null=True)
    lease_until = NumberAttribute(null=True)


class TermRow(SharedClientModel):
    """The keyword index: sk = f"{term}#{10**12 - entity_id:012d}", so a
    begins_with(term#) Query in ascending order yields the newest entities
    first.

    The same partition holds the fact claims: sk = f"F#{source_id}#{relation}#
    {target_id}", ``entity_id`` = the edge that owns the triple, ``updated_at``
    = when it was claimed; ``txn`` / ``lease_until``: a lease, as for names.

    And the commit records of the calls writing to the dataset: sk =
    f"C#{txn}", ``state`` pending / committed / aborted, ``lease_until``,
    ``keys`` (zlib JSON: every row the call writes) and ``finish`` (zlib
    JSON: the work left once committed). Terms are casefolded words, so no
    term query ever begins with "F#" or "C#"."""

    Meta = _meta("terms")
    short_name = "terms"

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    entity_id = NumberAttribute()
    in_name = BooleanAttribute(default=False)
    in_description = BooleanAttribute(default=False)
    norm_name = UnicodeAttribute(default="")
    updated_at = UnicodeAttribute(default="")
    txn = UnicodeAttribute(null=True)
    lease_until = NumberAttribute(null=True)
    state = UnicodeAttribute(null=True)
    keys = BinaryAttribute(null=True, legacy_encoding=False)
    finish = BinaryAttribute(null=True, legacy_encoding=False)
    # The passages' word index (VectorStore=dynamodb, vectors/dynamodb/words.py):
    # a posting's term count and passage length; a count row's number.
    tf = NumberAttribute(null=True)
    dl = NumberAttribute(null=True)
    n = NumberAttribute(null=True)


class EdgeLiveBySource(GlobalSecondaryIndex["EdgeRow"]):
    """Sparse: only live edges carry live_src."""

    Meta = _gsi_meta("live_by_source")
    live_src = UnicodeAttribute(hash_key=True)
    id = NumberAttribute(range_key=True)


class EdgeLiveByTarget(GlobalSecondaryIndex["EdgeRow"]):
    """Sparse: only live edges carry live_dst."""

    Meta = _gsi_meta("live_by_target")
    live_dst = UnicodeAttribute(hash_key=True)
    id = NumberAttribute(range_key=True)


class EdgeExpiredBySource(GlobalSecondaryIndex["EdgeRow"]):
    """Sparse: only superseded edges carry gone_src (questions about the past)."""

    Meta = _gsi_meta("expired_by_source")
    gone_src = UnicodeAttribute(hash_key=True)
    id = NumberAttribute(range_key=True)


class EdgeExpiredByTarget(GlobalSecondaryIndex["EdgeRow"]):
    """Sparse: only superseded edges carry gone_dst."""

    Meta = _gsi_meta("expired_by_target")
    gone_dst = UnicodeAttribute(hash_key=True)
    id = NumberAttribute(range_key=True)


class EdgeRow(SharedClientModel):
    Meta = _meta("edges")
    short_name = "edges"

    pk = UnicodeAttribute(hash_key=True)
    id = NumberAttribute(range_key=True)
    source_id = NumberAttribute()
    target_id = NumberAttribute()
    relation = UnicodeAttribute()
    description = UnicodeAttribute(default="")
    artifact_id = NumberAttribute(null=True)
    valid_at = UnicodeAttribute(null=True)
    invalid_at = UnicodeAttribute(null=True)
    created_at = UnicodeAttribute(default="")
    expired_at = UnicodeAttribute(null=True)
    live_src = UnicodeAttribute(null=True)  # f"{pk}#{source_id}" while live
    live_dst = UnicodeAttribute(null=True)  # f"{pk}#{target_id}" while live
    txn = UnicodeAttribute(null=True)  # the writing call's, until its commit lands
    gone_src = UnicodeAttribute(null=True)  # f"{pk}#{source_id}" once superseded
    gone_dst = UnicodeAttribute(null=True)  # f"{pk}#{target_id}" once superseded
    vstate = UnicodeAttribute(null=True)  # "live" / "gone": the vector index's filter
    attributes = UnicodeAttribute(null=True)  # a declared edge type's values, as JSON
    vec = VectorAttribute(null=True)  # VectorStore=dynamodb: "relation: description"
    vt = NumberAttribute(null=True)

    live_by_source = EdgeLiveBySource()
    live_by_target = EdgeLiveByTarget()
    expired_by_source = EdgeExpiredBySource()
    expired_by_target = EdgeExpiredByTarget()


class ArtifactBySession(GlobalSecondaryIndex["ArtifactRow"]):
    """Sparse: only the texts of a session (not their chunks) carry
    session_key, so a descending Query gives a session's last texts."""

    Meta = _gsi_meta("by_session")
    session_key = UnicodeAttribute(hash_key=True)
    id = NumberAttribute(range_key=True)


class ArtifactRow(SharedClientModel):
    Meta = _meta("artifacts")
    short_name = "artifacts"

    pk = UnicodeAttribute(hash_key=True)
    id = NumberAttribute(range_key=True)
    text = UnicodeAttribute(default="")
    created_at = UnicodeAttribute(default="")
    reference_time = UnicodeAttribute(default="")
    session_id = UnicodeAttribute(null=True)
    parent_id = NumberAttribute(null=True)
    index = NumberAttribute(null=True)
    call_id = UnicodeAttribute(null=True)
    summary = UnicodeAttribute(null=True)
    speaker = UnicodeAttribute(null=True)
    txn = UnicodeAttribute(null=True)  # the writing call's, until its commit lands
    session_key = UnicodeAttribute(null=True)  # f"{pk}#{session_id}" on a session's texts
    vec = VectorAttribute(null=True)  # VectorStore=dynamodb: a passage's vector
    svec = VectorAttribute(null=True)  # and a chunk's summary's
    vt = NumberAttribute(null=True)
    wc = NumberSetAttribute(null=True)  # the parts of its words counted (words.py)

    by_session = ArtifactBySession()


class LinkRow(SharedClientModel):
    """Provenance: sk = f"E#{entity_id:012d}#{artifact_id:012d}" or
    f"D#{edge_id:012d}#{artifact_id:012d}", and the same the other way
    (f"A#{artifact_id:012d}#E#{entity_id:012d}", ``#D#`` for an edge). The
    history of the edges too (``data``: the change as JSON, see
    graph/dynamodb/history.py): f"H#{edge}#{at}#{artifact}" (changes made to
    an edge), f"B#{by_edge}#{edge}" (made by an edge), f"X#{artifact}#{edge}"
    (made because of a text)."""

    Meta = _meta("links")
    short_name = "links"

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    data = UnicodeAttribute(null=True)
    # The notes share this table (notes/dynamodb.py): f"S#{entity:012d}" a
    # summary, f"Z#{entity:012d}" its stale mark (leased to the job writing
    # it until ``lease_until``, epoch seconds), f"P#{source}#{id:012d}" a
    # preference or instruction, "O#" the dataset's note settings.
    lease_until = NumberAttribute(null=True)


# --- records tables -----------------------------------------------------------


class CallRow(SharedClientModel):
    Meta = _meta("calls")
    short_name = "calls"

    user_id = UnicodeAttribute(hash_key=True)
    call_id = UnicodeAttribute(range_key=True)
    type = UnicodeAttribute(default="")
    status = UnicodeAttribute(default="ok")
    dataset = UnicodeAttribute(default="")
    session_id = UnicodeAttribute(null=True)
    started_at = UnicodeAttribute(default="")
    duration_ms = NumberAttribute(default=0)
    steps = UnicodeAttribute(default="[]")  # JSON list of Step
    inference_sks = UnicodeSetAttribute(null=True)  # sort keys of its inference rows
    result = UnicodeAttribute(null=True)  # JSON: a queued remember's response, once done
    expires_at = TTLAttribute(null=True)


class InferenceRow(SharedClientModel):
    """sk = f"{created_at}#{id}": a descending Query is newest first."""

    Meta = _meta("inferences")
    short_name = "inferences"

    user_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    id = UnicodeAttribute()
    dataset = UnicodeAttribute(default="")
    session_id = UnicodeAttribute(null=True)
    call_id = UnicodeAttribute(default="")
    type = UnicodeAttribute(default="")
    stage = UnicodeAttribute(default="")
    provider = UnicodeAttribute(default="")
    model = UnicodeAttribute(default="")
    reasoning = UnicodeAttribute(default="")
    input_tokens = NumberAttribute(default=0)
    output_tokens = NumberAttribute(default=0)
    thinking_tokens = NumberAttribute(null=True)
    cost_usd = NumberAttribute(default=0)
    latency_ms = NumberAttribute(default=0)
    status = UnicodeAttribute(default="ok")
    created_at = UnicodeAttribute(default="")
    expires_at = TTLAttribute(null=True)


class IdempotencyByOwner(GlobalSecondaryIndex["IdempotencyRow"]):
    """Sparse: the records of one user (an erase removes them)."""

    class Meta:
        index_name = "by_owner"
        projection = KeysOnlyProjection()

    owner = UnicodeAttribute(hash_key=True)


class IdempotencyRow(SharedClientModel):
    """Powertools' idempotency records (remember with an Idempotency-Key).
    Powertools reads and writes it itself; this model only declares it.
    ``owner``: a one-way hash of the user (``oneway.idempotency_owner``),
    set on each record as it is taken (idempotency/dynamodb.py)."""

    short_name = "idempotency"
    Meta = _meta(short_name)
    id = UnicodeAttribute(hash_key=True)
    expiration = TTLAttribute(null=True)
    owner = UnicodeAttribute(null=True)

    by_owner = IdempotencyByOwner()


GRAPH_MODELS: list[type[SharedClientModel]] = [
    DatasetRow,
    EntityRow,
    NameRow,
    TermRow,
    EdgeRow,
    ArtifactRow,
    LinkRow,
]
# The graph tables partitioned by DatasetKey.pk (everything but `datasets`).
DATASET_PARTITIONED: list[type[SharedClientModel]] = [
    EntityRow,
    NameRow,
    TermRow,
    EdgeRow,
    ArtifactRow,
    LinkRow,
]
RECORD_MODELS: list[type[SharedClientModel]] = [CallRow, InferenceRow, IdempotencyRow]
ALL_MODELS: list[type[SharedClientModel]] = GRAPH_MODELS + RECORD_MODELS


def short_name(model: type[Model]) -> str:
    return str(model.short_name)  # type: ignore[attr-defined]
