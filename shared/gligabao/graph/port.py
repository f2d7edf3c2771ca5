"""The graph store port: what the use cases need from the source of truth.

Every method is scoped by a DatasetKey (user and dataset); no method can read
another user's rows. Costs are part of the contract: each method documents the
number of round trips it may make, and none of them grows with the dataset.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from ..models import Artifact, Dataset, DatasetKey, Edge, Entity, GraphWrite, KeywordHit


def fact_triple(source_id: int, relation: str, target_id: int) -> str:
    """The key of a fact claim: one open (live, not ended) edge per triple."""
    return f"{source_id}#{relation}#{target_id}"


class GraphStore(Protocol):
    # --- datasets -------------------------------------------------------------
    def get_dataset(self, key: DatasetKey) -> Dataset | None:
        """One GetItem."""

    def ensure_dataset(self, key: DatasetKey) -> Dataset:
        """Create the dataset if it does not exist (conditional put: two
        concurrent first calls create it once). Returns it."""

    def list_datasets(self, user_id: str) -> list[Dataset]:
        """The user's datasets with their counts, by name."""

    def delete_dataset(self, key: DatasetKey) -> bool:
        """Delete every row, link, term, name and fact claim and counter of the dataset.
        False when it did not exist."""

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

    def claim_names(self, key: DatasetKey, claims: dict[str, int]) -> dict[str, int]:
        """Try to claim each normalized name for the proposed new entity ID
        (conditional put). Returns, per name, the ID that owns it: the
        proposed one when this call won, the existing one otherwise."""

    def release_names(self, key: DatasetKey, claims: dict[str, int]) -> None:
        """Undo claims this call made (only where the name still maps to the
        given ID)."""

    def claim_facts(self, key: DatasetKey, claims: dict[str, int]) -> dict[str, int]:
        """Try to claim each fact triple (``fact_triple``) for the proposed
        new edge ID (conditional put, one per triple, in parallel). Returns,
        per triple, the edge ID that owns it: the proposed one when this call
        won, the owner's otherwise. A claim is held by a live edge that has
        not ended; ``apply`` deletes it when it supersedes or ends that edge.
        A claim left by a call that died before its write (older than any call
        can run, and its edge never written) is taken over."""

    def release_facts(self, key: DatasetKey, claims: dict[str, int]) -> None:
        """Undo claims this call made (only where the triple still maps to
        the given edge ID)."""

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

    # --- writes ---------------------------------------------------------------
    def apply(self, key: DatasetKey, write: GraphWrite) -> None:
        """Write everything a remember produced: new rows (artifacts, entities
        and their keyword terms, edges), updated rows (a conditional update
        that fails if the row changed since it was read), provenance links and
        the dataset's counts. An updated edge that stops being open (gets
        ``expired_at`` or ``invalid_at``) gives up its fact claim, so that a
        later fact with the same triple (a new period) can claim it. On
        failure, undo what was written (the released claims too) and raise
        UpstreamError: nothing half-written stays visible."""
