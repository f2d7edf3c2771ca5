"""Live facts that cannot all hold (``GET /v1/gb/conflicts``): one source
with two or more live, open targets on a relation that holds one target at
a time. Such a relation is one this memory has seen superseding itself (a
new ``lives_in`` of Alice replaced an older one: ``self_superseding_relations``),
or one the extraction marked exclusive (``"exclusive": true`` on an edge,
kept in the notes store); when the invalidation call missed a pair, both stay live, and this lists
them. No LLM call. Resolving one is a correction (``PATCH
/v1/gb/edges/{id}``: end it, or correct it) or a forget (``DELETE``).

Cost: one read of the relations, then one pass over the dataset's edges
(a listing route's read, never on a query's path).
"""

from __future__ import annotations

from typing import Any

from ..errors import NotFound
from ..graph.port import GraphStore
from ..models import DatasetKey, Edge
from ..notes.port import NotesStore
from .browse import mention


def conflicting(edges: list[Edge], relations: set[str]) -> list[list[Edge]]:
    """Groups of live open edges of one source and relation with more than
    one target, each newest first; the groups newest first."""
    groups: dict[tuple[int, str], list[Edge]] = {}
    for e in edges:
        if e.live and e.invalid_at is None and e.relation in relations:
            groups.setdefault((e.source_id, e.relation), []).append(e)
    out = [
        sorted(g, key=lambda e: e.id, reverse=True)
        for g in groups.values()
        if len({e.target_id for e in g}) > 1
    ]
    return sorted(out, key=lambda g: g[0].id, reverse=True)


class Conflicts:
    def __init__(self, graph: GraphStore, notes: NotesStore | None = None) -> None:
        self.graph = graph
        self.notes = notes  # the relations the model marked exclusive

    def run(self, key: DatasetKey, limit: int) -> dict[str, Any]:
        if self.graph.get_dataset(key) is None:
            raise NotFound(f"dataset {key.dataset!r} does not exist")
        relations = self.graph.self_superseding_relations(key)
        if self.notes is not None:
            relations = relations | self.notes.exclusive_relations(key)
        if not relations:
            return {"conflicts": []}
        groups = conflicting(list(self.graph.iter_edges(key)), relations)[:limit]
        ids = {i for g in groups for e in g for i in (e.source_id, e.target_id)}
        names = {i: e.name for i, e in self.graph.get_entities(key, sorted(ids)).items()}
        out = []
        for group in groups:
            facts = []
            for e in group:
                item = e.public(names)
                item["texts"] = self._texts(key, e.id)
                facts.append(item)
            first = group[0]
            out.append(
                {
                    "source": {"id": first.source_id, "name": names.get(first.source_id, "")},
                    "relation": first.relation,
                    "facts": facts,
                }
            )
        return {"conflicts": out}

    def _texts(self, key: DatasetKey, edge_id: int) -> list[dict[str, Any]]:
        """The texts that state a fact (a chunk stands for its text)."""
        arts = self.graph.get_artifacts(key, self.graph.edge_artifacts(key, edge_id))
        parents = [a.parent_id for a in arts.values() if a.parent_id is not None]
        arts.update(self.graph.get_artifacts(key, [p for p in parents if p not in arts]))
        tops = sorted({a.parent_id or a.id for a in arts.values()})
        return [{**mention(arts[i]), "text": arts[i].text} for i in tops if i in arts]
