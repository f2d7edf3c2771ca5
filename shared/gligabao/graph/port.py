"""The graph store port: what the use cases need from the source of truth.

Every method is scoped by a DatasetKey (user and dataset); no method can read
another user's rows. Costs are part of the contract: each method documents the
number of round trips it may make, and none of them grows with the dataset.

Writing (a remember) is three calls with one ``txn`` (a fresh ID per attempt,
the lease owner): ``claim_names`` and ``claim_facts`` (leases on what must
stay unique), then ``commit`` (the whole typed plan, visible at once), or
``abort`` when the call gives up. What a reader sees is always the memory
before a commit or after it, never between: rows of a call that did not
commit are invisible, whether it is still running or died (see
docs/commit-protocol.md). A store has no optimistic-concurrency detail for the
caller to handle: a conflict either resolves inside the store or is ``Busy``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from ..models import (
    Artifact,
    Committed,
    Correction,
    Dataset,
    DatasetKey,
    Edge,
    EdgeChange,
    Entity,
    ForgetPlan,
    Forgotten,
    GraphWrite,
    KeywordHit,
    Merge,
)


def fact_triple(source_id: int, relation: str, target_id: int) -> str:
    """The key of a fact claim: one open (live, not ended) edge per triple."""
    return f"{source_id}#{relation}#{target_id}"


def page_key(entity: Entity) -> str:
    """An entity's place in the newest-updated-first order (the position a
    page of ``entities_page`` ends at)."""
    return f"{entity.updated_at}#{entity.id:012d}"


class GraphStore(Protocol):
    # Whether a query's independent reads gain from running at once on
    # workers (memory/parallel.py): on DynamoDB each is a network round trip;
    # on SQLite in this process a read takes less than waking a worker.
    overlap_reads: bool

    # --- datasets -------------------------------------------------------------
    def get_dataset(self, key: DatasetKey) -> Dataset | None:
        """One GetItem."""

    def ensure_dataset(self, key: DatasetKey) -> Dataset:
        """Create the dataset if it does not exist (conditional put: two
        concurrent first calls create it once). Returns it. A new one's ID
        counters start from those an erase kept (``end_erase``)."""

    def list_datasets(self, user_id: str) -> list[Dataset]:
        """The user's datasets with their counts, by name."""

    def delete_dataset(self, key: DatasetKey, events: list[dict[str, Any]] | None = None) -> bool:
        """Delete every row, link, term, name and fact claim of the dataset.
        False when it did not exist. Its ID counters are kept: when the name
        is used again, IDs go on from where they were (never reused).
        ``events`` (their bodies) are written with the delete, outside the
        dataset (the store's outbox), and delivered after it; only when this
        call deleted a live dataset."""

    def get_schema(self, key: DatasetKey) -> dict[str, Any] | None:
        """The dataset's schema (memory/schema.py), None when it has none. One read."""

    def put_schema(self, key: DatasetKey, schema: dict[str, Any]) -> None:
        """Store the schema of an existing dataset (replacing it); it goes with
        the dataset's other rows when the dataset is deleted. One write."""

    def allocate_ids(
        self, key: DatasetKey, entities: int, edges: int, artifacts: int
    ) -> tuple[int, int, int]:
        """Reserve blocks of IDs in one atomic counter update; returns the
        first ID of each block (entity, edge, artifact). IDs are positive,
        increasing, never reused; a block that goes unused leaves a gap."""

    # --- reads ----------------------------------------------------------------
    def get_entities(self, key: DatasetKey, ids: list[int]) -> dict[int, Entity]:
        """Batch get (one BatchGetItem per 100 IDs, retrying unprocessed keys)."""

    def get_edges(self, key: DatasetKey, ids: list[int]) -> dict[int, Edge]:
        """Batch get, superseded edges included (callers filter)."""

    def get_artifacts(self, key: DatasetKey, ids: list[int]) -> dict[int, Artifact]:
        """Batch get."""

    def keyword_hits(self, key: DatasetKey, terms: list[str], per_term: int) -> list[KeywordHit]:
        """For each term, up to ``per_term`` entities whose name or description
        holds it (whole word), most recently created first. One query per term."""

    def recent_entities(self, key: DatasetKey, limit: int) -> list[Entity]:
        """The ``limit`` most recently updated entities (one query)."""

    def recent_artifacts(self, key: DatasetKey, limit: int) -> list[Artifact]:
        """The ``limit`` newest artifacts (highest ID first; texts and
        chunks), one query."""

    def live_edges_around(self, key: DatasetKey, entity_ids: list[int], limit: int) -> list[Edge]:
        """Live (not superseded) edges with any of the entities as source or
        target, newest (highest ID) first, at most ``limit``. Bounded by a
        constant number of queries per entity."""

    def session_texts(
        self, key: DatasetKey, session_id: str, limit: int, before: int | None = None
    ) -> list[Artifact]:
        """The last ``limit`` texts remembered with ``session_id`` (not their
        chunks), newest first, with an ID below ``before`` when given. One
        query (an eventually consistent index)."""

    def expired_edges_around(
        self, key: DatasetKey, entity_ids: list[int], limit: int
    ) -> list[Edge]:
        """Superseded edges with any of the entities as source or target,
        newest first, at most ``limit`` (questions about the past). Same cost
        as ``live_edges_around``."""

    def entity_ids_by_names(self, key: DatasetKey, norm_names: list[str]) -> dict[str, int]:
        """Normalized name -> entity ID, for the names that exist (batch get)."""

    def entity_artifacts(self, key: DatasetKey, entity_id: int) -> list[int]:
        """Artifacts an entity was stated in (provenance)."""

    def edge_artifacts(self, key: DatasetKey, edge_id: int) -> list[int]:
        """Artifacts an edge was stated in (provenance)."""

    def iter_entities(self, key: DatasetKey) -> Iterator[Entity]:
        """Every entity of the dataset (reindex, evaluation; never a query)."""

    def iter_edges(self, key: DatasetKey) -> Iterator[Edge]:
        """Every edge of the dataset (reindex, evaluation; never a query)."""

    def iter_artifacts(self, key: DatasetKey) -> Iterator[Artifact]:
        """Every artifact of the dataset (reindex, evaluation)."""

    # --- browsing -------------------------------------------------------------
    def entities_page(self, key: DatasetKey, limit: int, after: str | None) -> list[Entity]:
        """Up to ``limit`` entities, newest updated first, those after the
        position ``after`` (``page_key`` of the last one of the previous
        page) when given. One query."""

    def texts_page(self, key: DatasetKey, limit: int, before: int | None) -> list[Artifact]:
        """Up to ``limit`` remembered texts (not their chunks), highest ID
        first, with an ID below ``before`` when given. A bounded query."""

    def session_page(
        self, key: DatasetKey, session_id: str, limit: int, after: int | None
    ) -> list[Artifact]:
        """One session's texts in the order they were remembered (ID
        ascending), with an ID above ``after`` when given. One query."""

    def chunks_of(self, key: DatasetKey, artifact_id: int) -> list[Artifact]:
        """The chunks of a text, in order (one query)."""

    def artifact_links(self, key: DatasetKey, artifact_id: int) -> tuple[list[int], list[int]]:
        """The entity IDs and edge IDs an artifact is a source of (one query)."""

    def edge_changes(
        self, key: DatasetKey, edge_id: int
    ) -> tuple[list[EdgeChange], list[EdgeChange]]:
        """The history of an edge: the changes it made to other edges (it
        superseded them), and the changes made to it (ended, superseded),
        oldest first. Two queries."""

    def changes_by_artifact(self, key: DatasetKey, artifact_ids: list[int]) -> list[EdgeChange]:
        """The changes made because of these artifacts, oldest first."""

    # --- corrections and conflicts (issue 44) ----------------------------------
    def corrections(self, key: DatasetKey, edge_ids: list[int]) -> dict[int, Correction]:
        """The provenance of the edges that are corrections (the others are
        absent). One query (SQLite) or one BatchGetItem per 100 IDs."""

    def merges(self, key: DatasetKey, entity_id: int) -> list[Merge]:
        """The texts whose names were filed under the entity, oldest first
        (one query)."""

    def due_expiries(self, now: str, limit: int) -> list[tuple[DatasetKey, int, str]]:
        """Texts whose ``expires_at`` has come, of every user, oldest first:
        (dataset, text ID, expires_at). One query (the retention sweep's)."""

    def drop_expiry(self, key: DatasetKey, artifact_id: int, expires_at: str) -> None:
        """The sweep is done with a text (forgotten, or gone already)."""

    def self_superseding_relations(self, key: DatasetKey) -> set[str]:
        """The relations whose edges were superseded by an edge of the same
        relation (a change with a successor): in this memory they hold one
        target at a time. Grows with the dataset's history (a listing route's
        read, never a query's)."""

    # --- writes ---------------------------------------------------------------
    def claim_names(self, key: DatasetKey, txn: str, claims: dict[str, int]) -> dict[str, int]:
        """Claim each normalized name for the proposed new entity ID, as a
        lease held by ``txn``. Returns, per name, the ID that owns it: the
        proposed one when ``txn`` won, the committed owner's otherwise. A
        lease of a call that has not committed is waited for (briefly) and
        taken over once it expires; still live after the wait: ``Busy``."""

    def claim_facts(self, key: DatasetKey, txn: str, claims: dict[str, int]) -> dict[str, int]:
        """Claim each fact triple (``fact_triple``: one open edge per triple)
        for the proposed new edge ID, as ``claim_names`` does. The owner
        returned is an open, committed edge; a claim whose edge has ended or
        was never committed is taken over."""

    def commit(self, key: DatasetKey, write: GraphWrite) -> Committed:
        """Write the plan: all of it becomes visible at once, or none of it.
        Entity and edge updates merge into the rows as they are when the
        commit lands (concurrent updates are retried inside). An edge that
        stops being open gives up its fact claim; the claims of ``write.txn``
        become permanent. ``Busy`` when its leases were lost (it ran past
        them), ``NotFound`` when the dataset was deleted, ``UpstreamError``
        when the store failed: in each case nothing of it is visible."""

    def forget(self, key: DatasetKey, plan: ForgetPlan) -> Forgotten:
        """Apply a forget: every row, link, keyword row, claim and history
        row of the plan removed, the kept edges re-pointed, the restored
        edges set back, the counts lowered; visible at once (a crash leaves
        before or after). ``NotFound`` when the text is already gone; a
        restored edge that changed since the plan was read stays as it is."""

    # --- erasing a user --------------------------------------------------------
    def dataset_names(self, user_id: str) -> list[str]:
        """The name of every dataset row of the user, deleted ones too (an
        erase purges what a crashed delete left), by name. One query."""

    def begin_erase(self, user_id: str, call_id: str) -> str:
        """Mark the user's erase as begun, so that a rerun or the next start
        finishes it; the call ID of the erase begun earlier and not finished,
        else ``call_id``. The mark holds the user ID until ``end_erase``."""

    def pending_erasures(self) -> list[tuple[str, str]]:
        """(user ID, call ID) of every erase begun and not ended. One query."""

    def end_erase(self, user_id: str, events: list[dict[str, Any]] | None = None) -> int:
        """The last step of an erase, after every dataset was deleted: the
        user's dataset rows removed, their ID counters kept under
        ``oneway.erased_dataset`` (a dataset of the same name, later, goes
        on from them: IDs are never reused), then the mark removed. How many
        dataset rows there were. A rerun after a crash finishes it.
        ``events`` (their bodies) go to the store's outbox with this step and
        are delivered after it (docs/events.md: a place the erase keeps)."""

    def deliver_waiting(self) -> None:
        """Deliver the events a dead process left in the outbox, where the
        store can find them without a commit (at the start of a server)."""

    def keep_events(self, events: list[dict[str, Any]]) -> None:
        """Write events of a change that is no write of this store (a
        batch's end) in its outbox, not yet delivered: one killed before
        ``send_events`` has them delivered as ``deliver_waiting`` says. An
        event already there (its ID) is kept once."""

    def send_events(self, events: list[dict[str, Any]]) -> None:
        """Deliver events ``keep_events`` wrote, and remove them from the
        outbox once delivered (kept when not: they go again later)."""

    def abort(self, key: DatasetKey, txn: str) -> None:
        """Give up a call that will not commit: release its claims and
        remove what it wrote (best effort: leases expire anyway)."""
