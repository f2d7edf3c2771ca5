"""The graph store on DynamoDB (pynamodb models in ``gligabao.dynamodb.tables``).

Layout (see ``tables`` for the keys): every graph table is partitioned by the
dataset key, so each method is a bounded number of GetItem / Query /
BatchGetItem / BatchWriteItem calls on the caller's own partition. Writes
follow the commit protocol of ``commit`` (docs/commit-protocol.md): every
read here shows only committed rows (``Leases.visible``).

Every botocore / pynamodb failure leaves this module as ``UpstreamError``
(``upstream``); "not found" is None or empty, never an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ...dynamodb.batch import batch_write, upstream, upstream_iter
from ...dynamodb.client import REQUESTS
from ...dynamodb.tables import (
    ArtifactRow,
    EdgeRow,
    EntityRow,
    LinkRow,
    NameRow,
    TermRow,
)
from ...models import (
    Artifact,
    Committed,
    DatasetKey,
    Edge,
    Entity,
    GraphWrite,
    KeywordHit,
)
from ..rules import is_open, unique
from .browse import DynamoBrowse
from .commit import Commits, crash_point
from .datasets import DynamoDatasets
from .erase import DynamoErase
from .leases import Leases
from .recovery import Outbox
from .rows import (
    MAX_KEY_BYTES,
    artifact_from_row,
    edge_from_row,
    entity_from_row,
    fact_claim_sk,
)

__all__ = ["DynamoGraphStore", "batch_write", "upstream"]

R = TypeVar("R")

LEASE_S = 60.0  # a claim's lease: longer than the write stage of any remember
LEASE_WAIT_S = 5.0  # how long a call waits for a live lease before Busy (409)
PAGE = 100  # rows filtered for visibility at once while iterating
BATCH_GET = 100  # keys per BatchGetItem (DynamoDB's limit)
# Parallel requests of one call: the edges around 20 seeds are 40 queries,
# sent in one wave rather than five (botocore's connection pool is sized to
# match in tables.py).
WORKERS = 48


class DynamoGraphStore(DynamoDatasets, DynamoBrowse, DynamoErase):
    """GraphStore on DynamoDB. Point the tables at the right place first
    (``dynamodb.admin.configure_tables``); ``max_workers`` bounds the per-call
    parallel queries (keyword terms, edges around entities, name claims)."""

    overlap_reads = True  # each read is a round trip: send them at once

    def __init__(
        self,
        max_workers: int = WORKERS,
        lease_s: float = LEASE_S,
        lease_wait_s: float = LEASE_WAIT_S,
        vectors: bool = False,
        outbox: Outbox | None = None,
    ) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="gb-dynamo")
        self._leases = Leases(lease_s, lease_wait_s)
        # vectors: the rows carry them (VectorStore=dynamodb, graph/vector_rows.py);
        # outbox: where a commit's events go once it landed (its record keeps them)
        self._commits = Commits(self._map, self._leases, vectors, outbox)

    @property
    def requests(self) -> int:
        """DynamoDB requests sent so far by this process (all stores)."""
        return REQUESTS.total

    def close(self) -> None:
        self._pool.shutdown(wait=False)

    def _map(self, fn: Callable[[Any], R], items: Sequence[Any]) -> list[R]:
        if len(items) <= 1:
            return [fn(i) for i in items]
        return list(self._pool.map(fn, items))

    # --- reads -------------------------------------------------------------------

    def _get(
        self, model: Any, convert: Callable[[Any], R], key: DatasetKey, ids: list[int]
    ) -> dict[int, R]:
        """Committed rows of one dataset by ID (BatchGetItem, 100 keys a request)."""
        wanted = unique(int(i) for i in ids)
        if not wanted:
            return {}
        # More than one batch: the batches go at once (one wave, not several).
        batches = [wanted[i : i + BATCH_GET] for i in range(0, len(wanted), BATCH_GET)]

        def one(ids: list[int]) -> list[Any]:
            return list(model.batch_get([(key.pk, i) for i in ids]))

        rows = [r for part in self._map(one, batches) for r in part]
        return {int(r.id): convert(r) for r in self._leases.visible(key.pk, rows)}

    def _iter(self, model: Any, convert: Callable[[Any], R], key: DatasetKey) -> Iterator[R]:
        page: list[Any] = []
        for r in model.query(key.pk):
            page.append(r)
            if len(page) == PAGE:
                yield from (convert(v) for v in self._leases.visible(key.pk, page))
                page = []
        yield from (convert(v) for v in self._leases.visible(key.pk, page))

    @upstream("graph store get_entities")
    def get_entities(self, key: DatasetKey, ids: list[int]) -> dict[int, Entity]:
        return self._get(EntityRow, entity_from_row, key, ids)

    @upstream("graph store get_edges")
    def get_edges(self, key: DatasetKey, ids: list[int]) -> dict[int, Edge]:
        return self._get(EdgeRow, edge_from_row, key, ids)

    @upstream("graph store get_artifacts")
    def get_artifacts(self, key: DatasetKey, ids: list[int]) -> dict[int, Artifact]:
        return self._get(ArtifactRow, artifact_from_row, key, ids)

    @upstream("graph store keyword_hits")
    def keyword_hits(self, key: DatasetKey, terms: list[str], per_term: int) -> list[KeywordHit]:
        wanted = [t for t in unique(terms) if t and "#" not in t]
        if not wanted or per_term <= 0:
            return []

        def one(term: str) -> list[KeywordHit]:
            rows = TermRow.query(key.pk, TermRow.sk.startswith(f"{term}#"), limit=per_term)
            return [
                KeywordHit(
                    entity_id=int(r.entity_id),
                    term=term,
                    in_name=bool(r.in_name),
                    in_description=bool(r.in_description),
                    norm_name=r.norm_name or "",
                    updated_at=r.updated_at or "",
                )
                for r in rows
            ]

        return [hit for hits in self._map(one, wanted) for hit in hits]

    @upstream("graph store recent_entities")
    def recent_entities(self, key: DatasetKey, limit: int) -> list[Entity]:
        if limit <= 0:
            return []
        rows = list(EntityRow.by_updated.query(key.pk, scan_index_forward=False, limit=limit))
        return [entity_from_row(r) for r in self._leases.visible(key.pk, rows)]

    @upstream("graph store recent_artifacts")
    def recent_artifacts(self, key: DatasetKey, limit: int) -> list[Artifact]:
        if limit <= 0:
            return []
        rows = ArtifactRow.query(key.pk, scan_index_forward=False, limit=limit)
        return [artifact_from_row(r) for r in rows]

    @upstream("graph store live_edges_around")
    def live_edges_around(self, key: DatasetKey, entity_ids: list[int], limit: int) -> list[Edge]:
        return self._edges_around(
            key, entity_ids, limit, EdgeRow.live_by_source, EdgeRow.live_by_target, live=True
        )

    @upstream("graph store expired_edges_around")
    def expired_edges_around(
        self, key: DatasetKey, entity_ids: list[int], limit: int
    ) -> list[Edge]:
        return self._edges_around(
            key, entity_ids, limit, EdgeRow.expired_by_source, EdgeRow.expired_by_target, live=False
        )

    def _edges_around(
        self,
        key: DatasetKey,
        entity_ids: list[int],
        limit: int,
        by_source: Any,
        by_target: Any,
        *,
        live: bool,
    ) -> list[Edge]:
        ids = unique(int(i) for i in entity_ids)
        if not ids or limit <= 0:
            return []
        jobs: list[tuple[Any, int]] = [(by_source, i) for i in ids]
        jobs += [(by_target, i) for i in ids]

        def one(job: tuple[Any, int]) -> list[EdgeRow]:
            index, entity_id = job
            return list(index.query(f"{key.pk}#{entity_id}", scan_index_forward=False, limit=limit))

        found: dict[int, Edge] = {}
        for rows in self._map(one, jobs):
            for r in self._leases.visible(key.pk, rows):
                edge = edge_from_row(r)
                if edge.live == live:  # the GSIs are sparse, but eventually consistent
                    found[edge.id] = edge
        return sorted(found.values(), key=lambda e: e.id, reverse=True)[:limit]

    @upstream("graph store session_texts")
    def session_texts(
        self, key: DatasetKey, session_id: str, limit: int, before: int | None = None
    ) -> list[Artifact]:
        if limit <= 0:
            return []
        cond = ArtifactRow.id < before if before is not None else None
        rows = list(
            ArtifactRow.by_session.query(
                f"{key.pk}#{session_id}", cond, scan_index_forward=False, limit=limit
            )
        )
        return [artifact_from_row(r) for r in self._leases.visible(key.pk, rows)]

    @upstream("graph store entity_ids_by_names")
    def entity_ids_by_names(self, key: DatasetKey, norm_names: list[str]) -> dict[str, int]:
        names = [n for n in unique(norm_names) if n and len(n.encode()) <= MAX_KEY_BYTES]
        if not names:
            return {}
        rows = list(NameRow.batch_get([(key.pk, n) for n in names]))
        return {r.norm_name: int(r.entity_id) for r in self._leases.visible(key.pk, rows)}

    def _links(self, key: DatasetKey, prefix: str) -> list[int]:
        rows = LinkRow.query(key.pk, LinkRow.sk.startswith(prefix))
        return [int(r.sk.rsplit("#", 1)[1]) for r in rows]

    @upstream("graph store entity_artifacts")
    def entity_artifacts(self, key: DatasetKey, entity_id: int) -> list[int]:
        return self._links(key, f"E#{int(entity_id):012d}#")

    @upstream("graph store edge_artifacts")
    def edge_artifacts(self, key: DatasetKey, edge_id: int) -> list[int]:
        return self._links(key, f"D#{int(edge_id):012d}#")

    @upstream_iter("graph store iter_entities")
    def iter_entities(self, key: DatasetKey) -> Iterator[Entity]:
        yield from self._iter(EntityRow, entity_from_row, key)

    @upstream_iter("graph store iter_edges")
    def iter_edges(self, key: DatasetKey) -> Iterator[Edge]:
        yield from self._iter(EdgeRow, edge_from_row, key)

    @upstream_iter("graph store iter_artifacts")
    def iter_artifacts(self, key: DatasetKey) -> Iterator[Artifact]:
        yield from self._iter(ArtifactRow, artifact_from_row, key)

    # --- writes ------------------------------------------------------------------

    @upstream("graph store claim_names")
    def claim_names(self, key: DatasetKey, txn: str, claims: dict[str, int]) -> dict[str, int]:
        out = self._leases.claim_all(NameRow, "names", key.pk, txn, claims, lambda _: True)
        crash_point("claimed")
        return out

    @upstream("graph store claim_facts")
    def claim_facts(self, key: DatasetKey, txn: str, claims: dict[str, int]) -> dict[str, int]:
        def holds(edge_id: int) -> bool:  # a committed claim holds while its edge is open
            edge = self.get_edges(key, [edge_id]).get(edge_id)
            return edge is not None and is_open(edge)

        sks = {fact_claim_sk(t): i for t, i in claims.items()}
        owners = self._leases.claim_all(TermRow, "facts", key.pk, txn, sks, holds)
        crash_point("claimed")
        return {t: owners[fact_claim_sk(t)] for t in claims}

    @upstream("graph store write")
    def commit(self, key: DatasetKey, write: GraphWrite) -> Committed:
        return self._commits.commit(key, write)

    @upstream("graph store abort")
    def abort(self, key: DatasetKey, txn: str) -> None:
        self._commits.abort(key, txn)
