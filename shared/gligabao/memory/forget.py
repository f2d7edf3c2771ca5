"""Forget one remembered text: it, its chunks and summaries, their vectors,
the facts and entities nothing else supports, their provenance; the facts it
ended or superseded set back to what they were before it.

The plan is read first (what stays, what goes, what is restored), then the
vectors are removed, then the graph store applies the plan at once (the
commit protocol: a crash leaves the graph before or after). Vectors go first
because they are derived data: a crash between the two leaves the text in
the graph without some of its vectors, and calling forget again finishes.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

from ..errors import GbError, NotFound
from ..events.model import fact_forgotten, forgotten
from ..graph.port import GraphStore
from ..models import DatasetKey, ForgetPlan, Forgotten
from ..notes.port import NotesStore
from ..vectors.port import VectorIndex
from .sessions import after_forget

log = logging.getLogger(__name__)


def plan_forget(graph: GraphStore, key: DatasetKey, artifact_id: int) -> ForgetPlan:
    found = graph.get_artifacts(key, [artifact_id]).get(artifact_id)
    if found is None or found.parent_id is not None:
        raise NotFound(f"artifact {artifact_id} does not exist")
    plan = ForgetPlan(artifact_id, txn=uuid.uuid4().hex)
    plan.chunks = [c.id for c in graph.chunks_of(key, artifact_id)]
    texts = {artifact_id, *plan.chunks}
    entity_ids: set[int] = set()
    edge_ids: set[int] = set()
    for t in sorted(texts):
        ents, edges = graph.artifact_links(key, t)
        plan.entity_links += [(e, t) for e in ents]
        plan.edge_links += [(d, t) for d in edges]
        entity_ids.update(ents)
        edge_ids.update(edges)
    # An edge stays when another text states it too (then with that text only).
    for edge in graph.get_edges(key, sorted(edge_ids)).values():
        others = sorted(set(graph.edge_artifacts(key, edge.id)) - texts)
        if not others:
            plan.edges.append(edge)
        elif edge.artifact_id in texts:
            plan.kept_edges[edge.id] = _text_of(graph, key, others[0])
    removed = {e.id for e in plan.edges}
    # An entity stays when another text mentions it, or an edge that stays
    # holds it (it must not dangle).
    for entity in graph.get_entities(key, sorted(entity_ids)).values():
        if set(graph.entity_artifacts(key, entity.id)) - texts:
            continue
        limit = len(removed) + 1
        around = graph.live_edges_around(key, [entity.id], limit)
        around += graph.expired_edges_around(key, [entity.id], limit)
        if all(e.id in removed for e in around):
            plan.entities.append(entity)
    # What the text ended or superseded: set back (the earliest change of
    # each edge holds its state before the text).
    changes = graph.changes_by_artifact(key, sorted(texts))
    plan.changes = changes
    seen: set[int] = set()
    firsts = [c for c in changes if c.edge_id not in removed and not _seen(seen, c.edge_id)]
    current = graph.get_edges(key, [c.edge_id for c in firsts])
    plan.restored = [(c, current[c.edge_id]) for c in firsts if c.edge_id in current]
    return plan


def _seen(seen: set[int], edge_id: int) -> bool:
    if edge_id in seen:
        return True
    seen.add(edge_id)
    return False


def _text_of(graph: GraphStore, key: DatasetKey, artifact_id: int) -> int:
    """The text an artifact belongs to (itself, or a chunk's parent)."""
    found = graph.get_artifacts(key, [artifact_id]).get(artifact_id)
    if found is None or found.parent_id is None:
        return artifact_id
    return found.parent_id


class Forget:
    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorIndex,
        notes: NotesStore | None = None,
        schedule: Callable[[DatasetKey], None] | None = None,
    ) -> None:
        self.graph = graph
        self.vectors = vectors
        # A session's summary goes with its last text, and is rewritten (the
        # summary job queued with ``schedule``) when one of several goes.
        self.notes = notes
        self.schedule = schedule

    def run(self, key: DatasetKey, artifact_id: int) -> dict[str, Any]:
        if self.graph.get_dataset(key) is None:
            raise NotFound(f"dataset {key.dataset!r} does not exist")
        found = self.graph.get_artifacts(key, [artifact_id]).get(artifact_id)
        plan = plan_forget(self.graph, key, artifact_id)
        texts = [artifact_id, *plan.chunks]
        vectors = self.vectors.delete(key, "chunks", texts)
        vectors += self.vectors.delete(key, "summaries", texts)
        vectors += self.vectors.delete(key, "edges", [e.id for e in plan.edges])
        vectors += self.vectors.delete(key, "entities", [e.id for e in plan.entities])
        # The event is made from what the store's transaction applied, and
        # written in it (the store's outbox): no forget landed, no event.
        plan.events = lambda done: [
            forgotten(key.user_id, key.dataset, _answer(plan, done)).public()
        ]
        done = self.graph.forget(key, plan)
        answer = _answer(plan, done)
        answer["removed"]["vectors"] = vectors
        if self.notes is not None and found is not None:
            try:  # the text is forgotten; its session's notes follow
                summary = Forget(self.graph, self.vectors).run
                after_forget(self.notes, self.graph, key, found, summary, self.schedule)
            except GbError as exc:
                log.warning("session notes not updated after a forget: %s", exc.message)
        return answer


def _answer(plan: ForgetPlan, done: Forgotten) -> dict[str, Any]:
    """What a text's forget removed and restored (the API's answer, the event's data)."""
    return {
        "artifact_id": plan.artifact_id,
        "removed": {
            "artifacts": done.artifacts,
            "edges": done.edges,
            "entities": done.entities,
            "chunks": done.chunks,
            "vectors": 0,
        },
        "restored": {"edges": done.restored},
    }


def plan_forget_edge(graph: GraphStore, key: DatasetKey, edge_id: int) -> ForgetPlan:
    """Forget one fact, not a text: the edge, its provenance links and its
    history go; the texts that state it stay; what it superseded (a
    correction's old fact, a newer fact's predecessor) is set back."""
    edge = graph.get_edges(key, [edge_id]).get(edge_id)
    if edge is None:
        raise NotFound(f"edge {edge_id} does not exist")
    plan = ForgetPlan(0, txn=uuid.uuid4().hex, edge_id=edge_id, edges=[edge])
    plan.edge_links = [(edge_id, a) for a in graph.edge_artifacts(key, edge_id)]
    made, suffered = graph.edge_changes(key, edge_id)
    plan.changes = made + suffered
    seen: set[int] = set()
    firsts = [c for c in made if not _seen(seen, c.edge_id)]
    current = graph.get_edges(key, [c.edge_id for c in firsts])
    plan.restored = [(c, current[c.edge_id]) for c in firsts if c.edge_id in current]
    return plan


class ForgetFact:
    def __init__(self, graph: GraphStore, vectors: VectorIndex) -> None:
        self.graph = graph
        self.vectors = vectors

    def run(self, key: DatasetKey, edge_id: int) -> dict[str, Any]:
        if self.graph.get_dataset(key) is None:
            raise NotFound(f"dataset {key.dataset!r} does not exist")
        plan = plan_forget_edge(self.graph, key, edge_id)
        # The vector first (derived data): a crash before the graph's write
        # leaves the fact without its vector, and forgetting it again finishes.
        vectors = self.vectors.delete(key, "edges", [edge_id])
        # its event in the forget's own commit (the store's outbox), as a text's
        plan.events = lambda done: [
            fact_forgotten(key.user_id, key.dataset, edge_id, done.restored).public()
        ]
        done = self.graph.forget(key, plan)
        return {
            "edge_id": edge_id,
            "removed": {"edges": done.edges, "vectors": vectors},
            "restored": {"edges": done.restored},
        }
