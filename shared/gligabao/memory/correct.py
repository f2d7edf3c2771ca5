"""Correct one fact (``PATCH /v1/gb/edges/{id}``): it ended (``invalid_at``)
or it was wrong (a corrected ``description`` or target). Either way the
correction is a new fact that supersedes the old one, through the same
commit as a remember (all of it visible, or none: docs/commit-protocol.md),
with its provenance (who, when, why) kept beside it; the old fact stays in
the history, and forgetting the correction (``DELETE /v1/gb/edges/{new}``)
sets it back, as forgetting a text sets back what the text superseded.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from typing import Any

from .. import clock
from ..errors import BadRequest, Busy, Conflict, NotFound
from ..events.model import fact_corrected
from ..graph.port import GraphStore, fact_triple
from ..models import Correction, DatasetKey, Edge, EdgeUpdate, GraphWrite, VectorItem
from ..records.meter import Meter
from ..text import fact_text, normalize_name
from ..vectors.port import VectorIndex, write_first

log = logging.getLogger(__name__)


@dataclass
class CorrectInput:
    user_id: str
    dataset: str
    edge_id: int
    who: str
    invalid_at: str | None = None
    description: str | None = None
    target: str | None = None  # a stored entity's name
    target_id: int | None = None  # or its ID
    reason: str | None = None


class Correct:
    def __init__(self, graph: GraphStore, vectors: VectorIndex) -> None:
        self.graph = graph
        self.vectors = vectors

    def run(self, inp: CorrectInput, meter: Meter) -> dict[str, Any]:
        key = DatasetKey(inp.user_id, inp.dataset)
        old = self._check(key, inp)
        now = clock.now_str()
        _, first_edge, _ = self.graph.allocate_ids(key, 0, 1, 0)
        new = replace(
            old,
            id=first_edge,
            target_id=self._target(key, inp, old),
            description=old.description if inp.description is None else inp.description.strip(),
            invalid_at=inp.invalid_at or old.invalid_at,
            artifact_id=None,  # stated by a person, not a text
            created_at=now,
            expired_at=None,
        )
        if (new.target_id, new.description, new.invalid_at) == (
            old.target_id,
            old.description,
            old.invalid_at,
        ):
            raise BadRequest("nothing to correct: the fact already reads so")
        write = GraphWrite(txn=uuid.uuid4().hex, now=now, new_edges=[new])
        # Ended: the old fact ended then too (``as_of`` after it no longer
        # sees it); wrong: it is superseded, its own interval untouched.
        write.edge_updates = [
            EdgeUpdate(old.id, invalid_at=inp.invalid_at, expired_at=now, by_edge=new.id)
        ]
        write.corrections = [Correction(new.id, old.id, inp.who, now, inp.reason)]
        # its event is stored with the commit (the store's outbox), delivered after it
        write.events = [fact_corrected(key.user_id, key.dataset, new.id, old.id).public()]
        vector = meter.embed([fact_text(new.relation, new.description)], "document").vectors[0]
        write.vectors = {"edges": [VectorItem(new.id, vector)]}
        try:
            self._claim(key, write, old, new)
            write_first(self.vectors, key, write)
            done = self.graph.commit(key, write)
        except BaseException:
            try:
                self.graph.abort(key, write.txn)
            except Exception:  # its leases expire anyway; the first error is the story
                log.warning("could not abort correction %s", write.txn, exc_info=True)
            raise
        ended = done.edges.get(old.id, old)
        names = {
            i: e.name
            for i, e in self.graph.get_entities(
                key, sorted({old.source_id, old.target_id, new.target_id})
            ).items()
        }
        return {
            "edge": {**new.public(names), "correction": write.corrections[0].public()},
            "replaced": ended.public(names),
        }

    def _check(self, key: DatasetKey, inp: CorrectInput) -> Edge:
        asked = (inp.invalid_at, inp.description, inp.target, inp.target_id)
        if all(v is None for v in asked):
            raise BadRequest("nothing to correct: give invalid_at, description or target")
        if inp.target is not None and inp.target_id is not None:
            raise BadRequest("give target or target_id, not both")
        if self.graph.get_dataset(key) is None:
            raise NotFound(f"dataset {inp.dataset!r} does not exist")
        old = self.graph.get_edges(key, [inp.edge_id]).get(inp.edge_id)
        if old is None:
            raise NotFound(f"edge {inp.edge_id} does not exist")
        if not old.live:
            raise BadRequest(f"edge {old.id} is superseded: correct the fact that replaced it")
        if inp.invalid_at is not None and old.valid_at and inp.invalid_at < old.valid_at:
            raise BadRequest(f"invalid_at is before the fact's valid_at ({old.valid_at})")
        if inp.description is not None and not inp.description.strip():
            raise BadRequest("description must not be blank")
        return old

    def _target(self, key: DatasetKey, inp: CorrectInput, old: Edge) -> int:
        """The corrected target: a stored entity, by ID or by name."""
        if inp.target_id is not None:
            if not self.graph.get_entities(key, [inp.target_id]):
                raise BadRequest(f"target_id: entity {inp.target_id} does not exist")
            target = inp.target_id
        elif inp.target is not None:
            norm = normalize_name(inp.target)
            found = self.graph.entity_ids_by_names(key, [norm]).get(norm)
            if found is None:
                raise BadRequest(f"target: no entity is named {inp.target!r}")
            target = found
        else:
            return old.target_id
        if target == old.source_id:
            raise BadRequest("target: a fact cannot point at its own source")
        return target

    def _claim(self, key: DatasetKey, write: GraphWrite, old: Edge, new: Edge) -> None:
        """An open corrected fact holds its triple: the old edge's claim is
        handed over (same triple), or the new triple is claimed; a live fact
        that already states it makes the correction a 409."""
        if new.invalid_at is not None:
            return
        same = (new.source_id, new.relation, new.target_id) == (
            old.source_id,
            old.relation,
            old.target_id,
        )
        if same and old.invalid_at is None:
            write.moved_claims = [(old.id, new.id)]
            return
        triple = fact_triple(new.source_id, new.relation, new.target_id)
        owner = self.graph.claim_facts(key, write.txn, {triple: new.id}).get(triple, new.id)
        if owner == new.id:
            return
        if self.graph.get_edges(key, [owner]):
            raise Conflict(f"edge {owner} already states this fact: forget edge {old.id} instead")
        raise Busy("the fact is being written by a concurrent call; try again", 1)
