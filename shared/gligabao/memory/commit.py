"""remember, stage 5: the writes. IDs, name and fact claims, the vectors,
then the plan handed to the graph store at once."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, replace
from typing import Any

from ..errors import UpstreamError
from ..graph.port import GraphStore, fact_triple
from ..models import DatasetKey, Edge, GraphWrite
from ..text import normalize_name
from ..vectors.port import VectorIndex, VectorItem
from . import plan
from .facts import FactsPlan
from .resolve import Resolved

WRITE_ATTEMPTS = 8  # the graph write, again after a concurrent update of an entity
WRITE_BACKOFF_S = 0.05  # the first pause; doubled after each attempt, with jitter
WRITE_BACKOFF_MAX_S = 1.0


@dataclass
class Texts:
    """What the remember stores besides the graph rows' contents."""

    text: str
    chunks: list[str]
    summaries: list[str]
    text_vectors: list[list[float]]
    summary_vectors: list[list[float]]
    name_vectors: dict[str, list[float]]
    reference_time: str
    session_id: str | None
    call_id: str | None


class Writer:
    def __init__(self, graph: GraphStore, vectors: VectorIndex) -> None:
        self.graph = graph
        self.vectors = vectors

    def write(
        self,
        key: DatasetKey,
        now: str,
        texts: Texts,
        resolved: dict[str, Resolved],
        facts: FactsPlan,
    ) -> dict[str, Any]:
        unique = list({id(r): r for r in resolved.values()}.values())
        creating = [r for r in unique if r.created]
        self.graph.ensure_dataset(key)
        first_entity, first_edge, first_artifact = self.graph.allocate_ids(
            key, len(creating), len(facts.new), 1 + len(texts.chunks)
        )
        # Claim the names of the new entities; a concurrent call that claimed
        # one first wins, and this call reuses its entity.
        proposals = {
            normalize_name(r.entity.name): first_entity + i for i, r in enumerate(creating)
        }
        owners = self.graph.claim_names(key, proposals) if proposals else {}
        claimed = {n: i for n, i in proposals.items() if owners.get(n) == i}
        fact_claimed: dict[str, int] = {}  # filled by _write_claimed
        try:
            return self._write_claimed(
                key,
                now,
                texts,
                unique,
                creating,
                owners,
                claimed,
                first_edge,
                first_artifact,
                facts,
                fact_claimed,
            )
        except Exception:
            try:
                if fact_claimed:
                    self.graph.release_facts(key, fact_claimed)
            finally:
                self.graph.release_names(key, claimed)
            raise

    def _write_claimed(
        self,
        key: DatasetKey,
        now: str,
        texts: Texts,
        unique: list[Resolved],
        creating: list[Resolved],
        owners: dict[str, int],
        claimed: dict[str, int],
        first_edge: int,
        first_artifact: int,
        facts: FactsPlan,
        fact_claimed: dict[str, int],
    ) -> dict[str, Any]:
        artifacts = plan.artifacts_of(
            texts.text,
            texts.chunks,
            texts.summaries,
            first_artifact,
            now,
            texts.reference_time,
            texts.session_id,
            texts.call_id,
        )
        chunk_ids = [a.id for a in artifacts[1:]]

        lost = [
            r for r in creating if owners.get(normalize_name(r.entity.name)) not in claimed.values()
        ]
        if lost:  # lost a name race: reuse the winner's entity
            winners = self.graph.get_entities(
                key, [owners[normalize_name(r.entity.name)] for r in lost]
            )
            for r in lost:
                wid = owners[normalize_name(r.entity.name)]
                r.created = False
                # The winner's row may not have landed yet: a placeholder
                # that the first write attempt finds stale (see _refresh).
                r.entity = replace(winners[wid]) if wid in winners else replace(r.entity, id=wid)
        entity_vectors: list[VectorItem] = []
        for r in unique:
            if r.created:
                r.entity.id = claimed[normalize_name(r.entity.name)]
                vec = next(
                    (
                        texts.name_vectors[ex.norm]
                        for ex in r.extracted
                        if ex.norm in texts.name_vectors
                    ),
                    None,
                )
                if vec is not None:
                    entity_vectors.append(VectorItem(r.entity.id, vec, r.entity.lat, r.entity.lon))
        # Claim the new open facts; a concurrent call that claimed one first
        # wins, and this call states its edge again instead of a twin.
        ids_by_norm = {ex.norm: r.entity.id for r in unique for ex in r.extracted}
        raced = self._claim_facts(key, facts, first_edge, ids_by_norm, fact_claimed)
        edge_vectors = [
            VectorItem(first_edge + i, nf.vector)
            for i, nf in enumerate(facts.new)
            if i not in raced
        ]

        # Vectors first: a vector whose row never lands is invisible, because
        # every hit is resolved through the graph store and IDs are not reused.
        self.vectors.upsert(key, "entities", entity_vectors)
        self.vectors.upsert(key, "edges", edge_vectors)
        # Every text is a passage: a chunk of a long text, or a short text
        # whole (its vector is the one embed_text computed), with its words
        # for the lexical search.
        pieces = texts.chunks or [texts.text]
        passage_ids = chunk_ids if texts.chunks else [artifacts[0].id]
        self.vectors.upsert(
            key,
            "chunks",
            [
                VectorItem(pid, v, text=t)
                for pid, v, t in zip(passage_ids, texts.text_vectors, pieces, strict=True)
            ],
        )
        if texts.chunks:
            self.vectors.upsert(
                key,
                "summaries",
                [
                    VectorItem(cid, v)
                    for cid, v in zip(chunk_ids, texts.summary_vectors, strict=True)
                ],
            )

        # The rows. An entity update is conditional on the row being the one
        # read: when a concurrent call changed it first, the write is undone,
        # the entity read again, and its description merged again.
        for attempt in range(WRITE_ATTEMPTS):
            planned = plan.build(now, artifacts, unique, first_edge, facts, raced)
            try:
                self.graph.apply(key, planned.write)
                break
            except UpstreamError:
                # (both refreshes run: each updates what it read)
                stale = self._refresh(key, unique, planned.write) | self._refresh_raced(key, raced)
                if attempt + 1 == WRITE_ATTEMPTS or not stale:
                    raise
                cap = min(WRITE_BACKOFF_MAX_S, WRITE_BACKOFF_S * 2**attempt)
                time.sleep(random.uniform(cap / 2, cap))

        names = {e.id: e.name for e in planned.entities}
        for e in planned.edges:
            for side in (e.source_id, e.target_id):
                names.setdefault(side, "")
        missing = [i for i, n in names.items() if not n]
        if missing:
            for eid, ent in self.graph.get_entities(key, missing).items():
                names[eid] = ent.name
        created = {r.entity.id for r in unique if r.created}
        return plan.response(
            planned, created, names, artifacts[0].id, len(texts.chunks), texts.session_id
        )

    def _claim_facts(
        self,
        key: DatasetKey,
        facts: FactsPlan,
        first_edge: int,
        ids_by_norm: dict[str, int],
        claimed: dict[str, int],
    ) -> dict[int, Edge]:
        """Claim the triple of each new open fact (no ``invalid_at``) for its
        edge ID (``first_edge`` + its index). Adds the claims won to
        ``claimed``; returns, by index in ``facts.new``, the edge of a
        concurrent call that owns the triple. That edge may not have landed
        yet: it is waited for (bounded); when its call failed, its claim is
        gone and the next attempt takes it."""
        pending: dict[str, int] = {}  # triple -> index
        for i, nf in enumerate(facts.new):
            f = nf.fact
            if f.invalid_at is None:
                triple = fact_triple(ids_by_norm[f.source], f.relation, ids_by_norm[f.target])
                pending.setdefault(triple, i)
        raced: dict[int, Edge] = {}
        for attempt in range(WRITE_ATTEMPTS):
            if not pending:
                return raced
            if attempt:
                cap = min(WRITE_BACKOFF_MAX_S, WRITE_BACKOFF_S * 2 ** (attempt - 1))
                time.sleep(random.uniform(cap / 2, cap))
            owners = self.graph.claim_facts(key, {t: first_edge + i for t, i in pending.items()})
            lost: dict[str, int] = {}
            for triple, i in pending.items():
                owner = owners.get(triple, first_edge + i)
                if owner == first_edge + i:
                    claimed[triple] = owner
                else:
                    lost[triple] = owner
            winners = self.graph.get_edges(key, sorted(set(lost.values()))) if lost else {}
            for triple, owner in lost.items():
                if owner in winners:
                    raced[pending[triple]] = winners[owner]
            pending = {t: pending[t] for t, owner in lost.items() if owner not in winners}
        if pending:
            raise UpstreamError("a fact is claimed by a concurrent write that has not landed")
        return raced

    def _refresh_raced(self, key: DatasetKey, raced: dict[int, Edge]) -> bool:
        """After a failed write: read again the edges of the fact races lost.
        True when one changed or is missing (its call's write was undone and
        may be retried), so that a new attempt can succeed."""
        if not raced:
            return False
        fresh = self.graph.get_edges(key, sorted({e.id for e in raced.values()}))
        stale = False
        for i, edge in raced.items():
            cur = fresh.get(edge.id)
            if cur != edge:
                stale = True
                if cur is not None:
                    raced[i] = cur
        return stale

    def _refresh(self, key: DatasetKey, unique: list[Resolved], write: GraphWrite) -> bool:
        """After a failed write: read again the entities it updated. True when
        one of them changed since it was read (a concurrent call enriched it,
        or it had not landed yet), so that a new attempt can succeed."""
        read = {old.id: old for old, _ in write.updated_entities}
        if not read:
            return False
        fresh = self.graph.get_entities(key, list(read))
        stale = False
        for r in unique:
            old = read.get(r.entity.id)
            if old is None or r.created:
                continue
            cur = fresh.get(old.id)
            if cur is None or (cur.description, cur.type, cur.updated_at) != (
                old.description,
                old.type,
                old.updated_at,
            ):
                stale = True
                if cur is not None:
                    r.entity = replace(cur)
        return stale
