"""Split a wrongly merged entity: the facts and mentions an operator names
move to a new entity, through the same commit as a remember (all of it
visible, or none: docs/commit-protocol.md).

History is kept: a moved fact is a new edge on the new entity with the
original's validity, time learned and sources, and the original is expired
(the memory no longer holds it about the old entity; nothing ended in the
world, so its ``invalid_at`` stays). A moved mention is a text that now
names the new entity instead of the old one.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from typing import Any

from .. import clock
from ..errors import BadRequest, Busy, NotFound
from ..graph.port import GraphStore, fact_triple
from ..models import DatasetKey, Edge, EdgeUpdate, Entity, GraphWrite
from ..records.meter import Meter
from ..text import fact_text, normalize_name
from ..vectors.port import VectorIndex, VectorItem

log = logging.getLogger(__name__)

# Edges and mentions one split moves: each expired original and each removed
# link is an item of the store's one transaction (DynamoDB: 100 at most).
MAX_MOVED = 90


@dataclass
class SplitInput:
    user_id: str
    dataset: str
    entity_id: int
    name: str | None
    edges: list[int]
    mentions: list[int]


class Split:
    def __init__(self, graph: GraphStore, vectors: VectorIndex) -> None:
        self.graph = graph
        self.vectors = vectors

    def run(self, inp: SplitInput, meter: Meter) -> dict[str, Any]:
        key = DatasetKey(inp.user_id, inp.dataset)
        old, moving, mentions = self._check(key, inp)
        name = (inp.name or "").strip() or old.name
        now = clock.now_str()
        first_entity, first_edge, _ = self.graph.allocate_ids(key, 1, len(moving), 0)
        new = Entity(first_entity, name, old.type, "", created_at=now, updated_at=now)

        def moved(e: Edge, i: int) -> Edge:
            ends = [new.id if end == old.id else end for end in (e.source_id, e.target_id)]
            return replace(e, id=first_edge + i, source_id=ends[0], target_id=ends[1])

        copies = [moved(e, i) for i, e in enumerate(moving)]
        texts = [name] + [fact_text(e.relation, e.description) for e in copies]
        vectors = meter.embed(texts, "document").vectors
        write = GraphWrite(txn=uuid.uuid4().hex, now=now, new_entities=[new], new_edges=copies)
        write.edge_updates = [EdgeUpdate(e.id, expired_at=now) for e in moving]
        sources = {e.id: self.graph.edge_artifacts(key, e.id) for e in moving}
        write.edge_links = [
            (c.id, a) for e, c in zip(moving, copies, strict=True) for a in sources[e.id]
        ]
        # The texts that stated a moved fact name the new entity too.
        said = sorted(set(mentions) | {a for arts in sources.values() for a in arts})
        write.entity_links = [(new.id, a) for a in said]
        write.entity_unlinks = [(old.id, a) for a in mentions]
        try:
            self._claim(key, write, new, old, copies)
            self.vectors.upsert(key, "entities", [VectorItem(new.id, vectors[0])])
            self.vectors.upsert(
                key,
                "edges",
                [VectorItem(c.id, v) for c, v in zip(copies, vectors[1:], strict=True)],
            )
            self.graph.commit(key, write)
        except BaseException:
            try:
                self.graph.abort(key, write.txn)
            except Exception:  # its leases expire anyway; the first error is the story
                log.warning("could not abort split %s", write.txn, exc_info=True)
            raise
        return {
            "entity": new.public(),
            "moved": {"edges": [c.id for c in copies], "mentions": mentions},
        }

    def _check(self, key: DatasetKey, inp: SplitInput) -> tuple[Entity, list[Edge], list[int]]:
        """The entity, the edges to move and the mentions, or the 404/400."""
        if self.graph.get_dataset(key) is None:
            raise NotFound(f"dataset {inp.dataset!r} does not exist")
        old = self.graph.get_entities(key, [inp.entity_id]).get(inp.entity_id)
        if old is None:
            raise NotFound(f"entity {inp.entity_id} does not exist")
        edge_ids, mentions = _unique(inp.edges), _unique(inp.mentions)
        if not edge_ids and not mentions:
            raise BadRequest("nothing to split: give the edges or the mentions to move")
        if len(edge_ids) + len(mentions) > MAX_MOVED:
            raise BadRequest(f"at most {MAX_MOVED} edges and mentions move in one split")
        found = self.graph.get_edges(key, edge_ids)
        for eid in edge_ids:
            e = found.get(eid)
            if e is None:
                raise NotFound(f"edge {eid} does not exist")
            if old.id not in (e.source_id, e.target_id):
                raise BadRequest(f"edge {eid} is not a fact of entity {old.id}")
            if not e.live:
                raise BadRequest(f"edge {eid} is superseded: only live facts move")
        linked = set(self.graph.entity_artifacts(key, old.id))
        for aid in mentions:
            if aid not in linked:
                if not self.graph.get_artifacts(key, [aid]):
                    raise NotFound(f"artifact {aid} does not exist")
                raise BadRequest(f"artifact {aid} does not mention entity {old.id}")
        return old, [found[i] for i in edge_ids], mentions

    def _claim(
        self, key: DatasetKey, write: GraphWrite, new: Entity, old: Entity, copies: list[Edge]
    ) -> None:
        """The new name (unless another entity holds it: a namesake) and the
        triples of the moved open facts. A concurrent call that owns one
        first makes the split a 409, to be tried again."""
        norm = normalize_name(new.name)
        if norm and norm != normalize_name(old.name):
            held = self.graph.entity_ids_by_names(key, [norm])
            if norm not in held:
                owner = self.graph.claim_names(key, write.txn, {norm: new.id}).get(norm)
                if owner is not None and owner != new.id:
                    raise Busy("the new name is being written by a concurrent call", 1)
        claims = {
            fact_triple(c.source_id, c.relation, c.target_id): c.id
            for c in copies
            if c.invalid_at is None
        }
        if claims:
            owners = self.graph.claim_facts(key, write.txn, claims)
            if any(owners.get(t, i) != i for t, i in claims.items()):
                raise Busy("a moved fact is being written by a concurrent call", 1)


def _unique(ids: list[int]) -> list[int]:
    return list(dict.fromkeys(ids))
