"""The rows of the graph, as the use cases see them (no storage types here)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class DatasetKey:
    user_id: str
    dataset: str

    @property
    def pk(self) -> str:
        # user_id has no control characters and dataset is [A-Za-z0-9._-], so
        # the unit separator cannot occur in either: the key is unambiguous.
        return f"{self.user_id}\x1f{self.dataset}"


@dataclass
class Dataset:
    name: str
    created_at: str
    entities: int = 0
    edges: int = 0
    artifacts: int = 0
    # Which life of the name this is: new at every creation (a deleted or
    # erased dataset's name used again is another generation). Not shown.
    generation: str = ""


@dataclass
class Entity:
    id: int
    name: str
    type: str = ""
    description: str = ""
    created_at: str = ""
    updated_at: str = ""
    lat: float | None = None
    lon: float | None = None
    # Its declared type's attribute values (issue 47), newest value wins;
    # the values each replaced, newest first (``ATTRIBUTE_HISTORY`` each).
    attributes: dict[str, Any] = field(default_factory=dict)
    attribute_history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "type": self.type}
        if self.description:
            out["description"] = self.description
        if self.attributes:
            out["attributes"] = dict(self.attributes)
        if self.lat is not None and self.lon is not None:
            out["lat"] = self.lat
            out["lon"] = self.lon
        return out


@dataclass
class Edge:
    id: int
    source_id: int
    target_id: int
    relation: str
    description: str = ""
    artifact_id: int | None = None
    valid_at: str | None = None
    invalid_at: str | None = None
    created_at: str = ""
    expired_at: str | None = None
    # A declared edge type's attribute values (issue 47), validated against
    # the dataset's schema when stated; a free relation has none.
    attributes: dict[str, Any] = field(default_factory=dict)

    @property
    def live(self) -> bool:
        return self.expired_at is None

    def public(self, names: dict[int, str]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "source_id": self.source_id,
            "target_id": self.target_id,
            "source": names.get(self.source_id, ""),
            "target": names.get(self.target_id, ""),
            "relation": self.relation,
        }
        if self.description:
            out["description"] = self.description
        if self.artifact_id is not None:
            out["artifact_id"] = self.artifact_id
        out["valid_at"] = self.valid_at
        out["invalid_at"] = self.invalid_at
        if self.created_at:
            out["created_at"] = self.created_at
        if self.expired_at:
            out["expired_at"] = self.expired_at
        if self.attributes:
            out["attributes"] = dict(self.attributes)
        return out


@dataclass
class Artifact:
    id: int
    text: str
    created_at: str
    reference_time: str
    session_id: str | None = None
    parent_id: int | None = None
    index: int | None = None
    call_id: str | None = None
    summary: str | None = None  # chunks only: the summarize stage's text
    speaker: str | None = None  # who said it (a message's name or role, a text's speaker)


# A session's summary (memory/sessions.py) is remembered as a text said by
# this speaker; search and query give its passage the kind SESSION_KIND.
SESSION_SPEAKER = "session summary"
SESSION_KIND = "session_summary"


@dataclass
class KeywordHit:
    """One entity's entry in the keyword index for one term."""

    entity_id: int
    term: str
    in_name: bool
    in_description: bool
    norm_name: str
    updated_at: str


MAX_DESCRIPTION = 600


def merge_description(old: str, new: str) -> str:
    """Enrich, never lose: the old text stays, a new phrase is appended."""
    new = new.strip()
    if not new or new.casefold() in old.casefold():
        return old
    if not old:
        return new[:MAX_DESCRIPTION]
    return f"{old}; {new}"[:MAX_DESCRIPTION]


@dataclass
class EntityUpdate:
    """Enrich a stored entity: merged into the row as it is when the write
    lands (a concurrent enrichment is kept, not overwritten)."""

    id: int
    descriptions: list[str]  # phrases merged into the description, in order
    type: str = ""  # set when the stored type is empty
    attributes: dict[str, Any] = field(default_factory=dict)  # validated: newest wins

    def apply(self, cur: Entity, now: str) -> Entity:
        desc = cur.description
        for phrase in self.descriptions:
            desc = merge_description(desc, phrase)
        type_ = cur.type or self.type
        values, history = merge_attributes(
            cur.attributes, cur.attribute_history, self.attributes, now
        )
        if (desc, type_, values) == (cur.description, cur.type, cur.attributes):
            return cur
        return replace(
            cur,
            description=desc,
            type=type_,
            updated_at=now,
            attributes=values,
            attribute_history=history,
        )


ATTRIBUTE_HISTORY = 5  # replaced values kept per attribute, newest first


def merge_attributes(
    values: dict[str, Any],
    history: dict[str, list[dict[str, Any]]],
    new: dict[str, Any],
    now: str,
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """``new`` over ``values`` (the newest value wins); a value replaced by
    another goes to the head of its attribute's history with when it was
    replaced (``until``). The same value again changes nothing."""
    out, hist = dict(values), {k: list(v) for k, v in history.items()}
    for name, value in new.items():
        if name in out and out[name] == value:
            continue
        if name in out:
            kept = [{"value": out[name], "until": now}, *hist.get(name, [])]
            hist[name] = kept[:ATTRIBUTE_HISTORY]
        out[name] = value
    return out, hist


@dataclass
class EdgeUpdate:
    """End (``invalid_at``, set by the interval rules: it replaces the stored
    one) or supersede (``expired_at``: a stored expiry is kept) an edge."""

    id: int
    invalid_at: str | None = None
    expired_at: str | None = None
    # Why (the history the browse routes show and a forget undoes): the text
    # because of which, and the new edge that superseded it.
    artifact_id: int | None = None
    by_edge: int | None = None

    def apply(self, cur: Edge) -> Edge:
        return replace(
            cur,
            invalid_at=self.invalid_at or cur.invalid_at,
            expired_at=cur.expired_at or self.expired_at,
        )

    def change(self, old: Edge, new: Edge, now: str) -> EdgeChange | None:
        """The history entry of this update (None when nothing changed)."""
        if (old.invalid_at, old.expired_at) == (new.invalid_at, new.expired_at):
            return None
        return EdgeChange(
            edge_id=self.id,
            artifact_id=self.artifact_id,
            by_edge=self.by_edge,
            at=new.expired_at or now,
            prev_invalid_at=old.invalid_at,
            prev_expired_at=old.expired_at,
        )


@dataclass(frozen=True)
class EdgeChange:
    """One edge ended or superseded: when, because of which text and by which
    edge, and what its fields were before (so that a forget can undo it)."""

    edge_id: int
    artifact_id: int | None
    by_edge: int | None
    at: str
    prev_invalid_at: str | None
    prev_expired_at: str | None


@dataclass
class ForgetPlan:
    """What forgetting one text removes and restores, decided from the rows
    as they were read; the store applies it at once (all or nothing)."""

    artifact_id: int
    txn: str = ""
    chunks: list[int] = field(default_factory=list)  # artifact IDs of its chunks
    edges: list[Edge] = field(default_factory=list)  # removed: no other text states them
    entities: list[Entity] = field(default_factory=list)  # removed: nothing else holds them
    entity_links: list[tuple[int, int]] = field(default_factory=list)  # (entity, artifact) to drop
    edge_links: list[tuple[int, int]] = field(default_factory=list)  # (edge, artifact) to drop
    kept_edges: dict[int, int | None] = field(default_factory=dict)  # edge -> its new artifact_id
    restored: list[tuple[EdgeChange, Edge]] = field(default_factory=list)  # undone, edge as read
    changes: list[EdgeChange] = field(default_factory=list)  # history rows to drop
    # Forgetting one fact (``DELETE /v1/gb/edges/{id}``) instead of a text:
    # its edge, with ``artifact_id`` 0; the texts that state it stay.
    edge_id: int | None = None
    # The events of the forget (their bodies, docs/events.md), from what it
    # removed and restored: the store writes them in the forget's own commit
    # (its outbox) and delivers them after it. None: no event.
    events: Callable[[Forgotten], list[dict[str, Any]]] | None = None


@dataclass(frozen=True)
class Correction:
    """Why a fact exists: a person corrected (or ended) fact ``replaces``
    with fact ``edge_id``, not a text (``PATCH /v1/gb/edges/{id}``)."""

    edge_id: int
    replaces: int
    who: str
    at: str
    reason: str | None = None

    def public(self) -> dict[str, Any]:
        return {
            "source": "correction",
            "replaces": self.replaces,
            "who": self.who,
            "at": self.at,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Merge:
    """Names a text gave that resolution filed under a stored entity, and
    why ("same name", "alias", "model": memory/names.py)."""

    entity_id: int
    artifact_id: int
    names: tuple[str, ...]
    reason: str
    at: str

    def public(self) -> dict[str, Any]:
        return {
            "names": list(self.names),
            "artifact_id": self.artifact_id,
            "at": self.at,
            "match": self.reason,
        }


@dataclass
class Forgotten:
    artifacts: list[int] = field(default_factory=list)
    edges: list[int] = field(default_factory=list)
    entities: list[int] = field(default_factory=list)
    restored: list[int] = field(default_factory=list)
    chunks: int = 0


@dataclass(frozen=True)
class VectorItem:
    """One row's vector (entity, edge, or the chunk's artifact ID)."""

    id: int
    vector: list[float]
    lat: float | None = None  # entities with coordinates only
    lon: float | None = None
    text: str | None = None  # chunks: the passage's text, for the lexical (BM25) search
    live: bool | None = None  # edges: False once superseded (stores that filter on it)


@dataclass
class GraphWrite:
    """The typed plan of one `remember`: everything it writes to the graph
    store, committed at once (all of it becomes visible, or none). ``txn``
    is the call's lease owner, the one its claims were made with.
    ``vectors``: the new rows' vectors by kind ("entities", "edges",
    "chunks", "summaries"), which a store that keeps vectors on its rows
    writes with them (the others get them from the vector index first)."""

    txn: str = ""  # empty: the write made no claims (the store picks one)
    now: str = ""  # updated_at of enriched entities
    artifacts: list[Artifact] = field(default_factory=list)
    new_entities: list[Entity] = field(default_factory=list)
    new_edges: list[Edge] = field(default_factory=list)
    entity_updates: list[EntityUpdate] = field(default_factory=list)
    edge_updates: list[EdgeUpdate] = field(default_factory=list)
    entity_links: list[tuple[int, int]] = field(default_factory=list)  # (entity, artifact)
    edge_links: list[tuple[int, int]] = field(default_factory=list)  # (edge, artifact)
    # Provenance links removed (a split moves a mention to another entity).
    entity_unlinks: list[tuple[int, int]] = field(default_factory=list)  # (entity, artifact)
    # A correction: the provenance of its new edge, and the fact claims
    # (old edge -> new edge of the same triple) handed over at the commit.
    corrections: list[Correction] = field(default_factory=list)
    moved_claims: list[tuple[int, int]] = field(default_factory=list)
    # The stored entities a text's names were filed under (GET .../merges).
    merges: list[Merge] = field(default_factory=list)
    # (text, when): the retention sweep forgets the text then
    expiries: list[tuple[int, str]] = field(default_factory=list)
    vectors: dict[str, list[VectorItem]] = field(default_factory=dict)
    # The events of the write (IDs only, docs/events.md): stored with it, in
    # the same commit, and delivered after it (the store's outbox).
    events: list[dict[str, Any]] = field(default_factory=list)
    # The dataset's generation the write was planned against (read when the
    # remember started): the commit lands only if the dataset is still that
    # one, not deleted or erased and created again meanwhile (an erase is a
    # fence). Empty: not checked (writes that read nothing first).
    generation: str = ""


@dataclass
class Committed:
    """What a commit wrote to the stored rows it updated, as they now read."""

    entities: dict[int, Entity] = field(default_factory=dict)
    edges: dict[int, Edge] = field(default_factory=dict)
