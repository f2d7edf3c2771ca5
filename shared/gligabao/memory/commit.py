"""remember, stage 5: the writes. IDs, name and fact claims (leases), the
vectors, then the typed plan committed by the graph store at once (all
visible or none: docs/commit-protocol.md)."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from typing import Any

from .. import deadline
from ..errors import Busy
from ..events.model import remembered
from ..graph.port import GraphStore, fact_triple
from ..models import Artifact, DatasetKey, Edge, GraphWrite
from ..text import normalize_name
from ..vectors.port import VectorIndex, VectorItem, write_first
from . import plan
from .facts import FactsPlan
from .names import SAME_NAME
from .resolve import Resolved
from .window import Said

log = logging.getLogger(__name__)

RECREATED = "the dataset was erased or deleted while this call ran; try again"


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
    messages: list[Said] | None = None  # a window: one artifact each, instead of ``text``
    speaker: str | None = None  # of ``text``
    # What each passage's vector embeds and its words (the lexical search)
    # hold; None: the pieces themselves.
    passage_words: list[str] | None = None
    windows: bool = False  # ``chunks`` are a session-sized text's windows (no summaries)
    expires_at: str | None = None  # the retention sweep forgets the texts then

    def artifact_count(self) -> int:
        return len(self.messages) if self.messages is not None else 1 + len(self.chunks)


def remembered_event(key: DatasetKey, call_id: str | None, write: GraphWrite) -> dict[str, Any]:
    """The event of a remember's commit (IDs only), stored with it."""
    return remembered(
        key.user_id,
        key.dataset,
        call_id,
        [a.id for a in write.artifacts if a.parent_id is None],
        [e.id for e in write.new_entities],
        [u.id for u in write.entity_updates],
        [e.id for e in write.new_edges],
        [u.id for u in write.edge_updates],
    ).public()


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
        generation: str | None = None,
    ) -> dict[str, Any]:
        """Claims, vectors, then one commit. A failure after the first claim
        aborts the call's write (its leases would expire anyway).
        ``generation``: the dataset's when the call started and read it
        (None: there was none yet); the commit lands only in that one."""
        # The last stage boundary: a call whose time ran out, or whose
        # client has gone (the local server), ends here with nothing written.
        deadline.check("the write")
        unique = list({id(r): r for r in resolved.values()}.values())
        creating = [r for r in unique if r.created]
        dataset = self.graph.ensure_dataset(key)
        if generation is not None and dataset.generation != generation:
            # Erased or deleted since the call read it, and made again: what
            # it read (entities, their IDs) belongs to the earlier life.
            raise Busy(RECREATED, 1)
        first = self.graph.allocate_ids(key, len(creating), len(facts.new), texts.artifact_count())
        txn = uuid.uuid4().hex  # the lease owner: one per attempt, never reused
        try:
            return self._write(
                key,
                txn,
                now,
                texts,
                unique,
                creating,
                first,
                facts,
                dataset.generation,
            )
        except BaseException:
            try:
                self.graph.abort(key, txn)
            except Exception:  # its leases expire anyway; the first error is the story
                log.warning("could not abort write %s", txn, exc_info=True)
            raise

    def _write(
        self,
        key: DatasetKey,
        txn: str,
        now: str,
        texts: Texts,
        unique: list[Resolved],
        creating: list[Resolved],
        first: tuple[int, int, int],  # the first ID of each block: entities, edges, texts
        facts: FactsPlan,
        generation: str,
    ) -> dict[str, Any]:
        first_entity, first_edge, first_artifact = first
        artifacts, chunk_ids = _artifacts(texts, first_artifact, now)
        # Claim the names of the new entities; a concurrent call that
        # committed one first wins, and this call reuses its entity.
        # A namesake (a name held by an entity of another kind) claims none.
        proposals = {
            normalize_name(r.entity.name): first_entity + i
            for i, r in enumerate(creating)
            if r.claim_name
        }
        owners = self.graph.claim_names(key, txn, proposals) if proposals else {}
        lost = {n: o for n, o in owners.items() if o != proposals[n]}
        winners = self.graph.get_entities(key, sorted(set(lost.values()))) if lost else {}
        for i, r in enumerate(creating):
            norm = normalize_name(r.entity.name)
            if not r.claim_name:
                r.entity.id = first_entity + i
            elif norm in lost:
                if lost[norm] not in winners:  # (the owner committed: its row is there)
                    raise Busy("a name is being written by a concurrent call; try again", 1)
                r.created = False
                r.match = SAME_NAME
                r.entity = replace(winners[lost[norm]])
            else:
                r.entity.id = proposals[norm]
        entity_vectors = _entity_vectors(unique, texts.name_vectors)
        # Claim the new open facts; a concurrent call that committed one
        # first wins, and this call states its edge again instead of a twin.
        ids_by_norm = {ex.norm: r.entity.id for r in unique for ex in r.extracted}
        raced = self._claim_facts(key, txn, facts, first_edge, ids_by_norm)
        edge_vectors = [
            VectorItem(first_edge + i, nf.vector)
            for i, nf in enumerate(facts.new)
            if i not in raced
        ]

        # Every text is a passage: a chunk of a long text, or a short text
        # whole (its vector is the one embed_text computed), with its words
        # for the lexical search.
        if texts.messages is not None:
            pieces, passage_ids = [m.text for m in texts.messages], [a.id for a in artifacts]
        else:
            pieces = texts.chunks or [texts.text]
            passage_ids = chunk_ids if texts.chunks else [artifacts[0].id]
        if texts.passage_words is not None:
            pieces = texts.passage_words
        vectors = {
            "entities": entity_vectors,
            "edges": edge_vectors,
            "chunks": [
                VectorItem(pid, v, text=t)
                for pid, v, t in zip(passage_ids, texts.text_vectors, pieces, strict=True)
            ],
            # (none when the texts were stored without extraction)
            "summaries": [
                VectorItem(cid, v) for cid, v in zip(chunk_ids, texts.summary_vectors, strict=True)
            ]
            if texts.summary_vectors
            else [],
        }

        planned = plan.build(
            txn, now, artifacts, unique, first_edge, facts, raced, texts.messages is not None
        )
        planned.write.vectors = vectors
        planned.write.generation = generation
        planned.write.events = [remembered_event(key, texts.call_id, planned.write)]
        if texts.expires_at is not None:
            tops = [a.id for a in artifacts if a.parent_id is None]
            planned.write.expiries = [(a, texts.expires_at) for a in tops]
        # The vectors go with the rows: upserted first into a separate index
        # (one whose row never commits is invisible), or written by the
        # commit itself onto the rows.
        write_first(self.vectors, key, planned.write)
        plan.landed(planned, self.graph.commit(key, planned.write))

        names = {e.id: e.name for e in planned.entities}
        for e in planned.edges:
            for side in (e.source_id, e.target_id):
                names.setdefault(side, "")
        missing = [i for i, n in names.items() if not n]
        if missing:
            for eid, ent in self.graph.get_entities(key, missing).items():
                names[eid] = ent.name
        matched = {r.entity.id: r.match for r in unique if not r.created}
        tops = [a.id for a in artifacts if a.parent_id is None]
        chunks = 0 if texts.windows else len(texts.chunks)
        return plan.response(planned, matched, names, tops, chunks, texts.session_id)

    def _claim_facts(
        self,
        key: DatasetKey,
        txn: str,
        facts: FactsPlan,
        first_edge: int,
        ids_by_norm: dict[str, int],
    ) -> dict[int, Edge]:
        """Claim the triple of each new open fact (no ``invalid_at``) for its
        edge ID (``first_edge`` + its index). Returns, by index in
        ``facts.new``, the committed open edge of a concurrent call that owns
        the triple."""
        pending: dict[str, int] = {}  # triple -> index
        for i, nf in enumerate(facts.new):
            f = nf.fact
            if f.invalid_at is None:
                triple = fact_triple(ids_by_norm[f.source], f.relation, ids_by_norm[f.target])
                pending.setdefault(triple, i)
        if not pending:
            return {}
        owners = self.graph.claim_facts(key, txn, {t: first_edge + i for t, i in pending.items()})
        lost = {t: o for t, o in owners.items() if o != first_edge + pending[t]}
        winners = self.graph.get_edges(key, sorted(set(lost.values()))) if lost else {}
        raced: dict[int, Edge] = {}
        for triple, owner in lost.items():
            if owner not in winners:
                raise Busy("a fact is being written by a concurrent call; try again", 1)
            raced[pending[triple]] = winners[owner]
        return raced


def _artifacts(texts: Texts, first_artifact: int, now: str) -> tuple[list[Artifact], list[int]]:
    """The rows of the texts (a text, its chunks; or one per message) and
    the IDs of the chunks among them."""
    if texts.messages is not None:
        artifacts = plan.message_artifacts(
            texts.messages, first_artifact, now, texts.session_id, texts.call_id
        )
        return artifacts, []
    artifacts = plan.artifacts_of(
        texts.text,
        texts.chunks,
        texts.summaries,
        first_artifact,
        now,
        texts.reference_time,
        texts.session_id,
        texts.call_id,
        texts.speaker,
    )
    return artifacts, [a.id for a in artifacts[1:]]


def _entity_vectors(
    unique: list[Resolved], name_vectors: dict[str, list[float]]
) -> list[VectorItem]:
    """A new entity's vector: the first of its extracted names that has one."""
    out: list[VectorItem] = []
    for r in unique:
        if not r.created:
            continue
        vec = next((name_vectors[ex.norm] for ex in r.extracted if ex.norm in name_vectors), None)
        if vec is not None:
            out.append(VectorItem(r.entity.id, vec, r.entity.lat, r.entity.lon))
    return out
