"""Browse a dataset: its entities, one entity with its facts and mentions,
one fact with its sources and history, the remembered texts.

Pages end at a cursor naming the position (the store's keyset position,
never an offset), so that rows written between two pages neither repeat nor
shift the next page. Clients pass back what ``next_cursor`` gave; its shape is
in the OpenAPI document (a pattern per listing), and every string of that shape
is a position the listing accepts (a page, possibly empty):

* entities: "e", the last entity's ``updated_at`` (empty on rows that have
  none), "_", its ID in 12 to 18 digits (``page_key`` with "_" for "#");
* texts, of the dataset or of a session: "a" and the last text's ID.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import BadRequest, NotFound
from ..graph.port import GraphStore, page_key
from ..models import Artifact, DatasetKey, Edge, EdgeChange, Entity
from ..notes.port import NotesStore, Summary
from ..text import index_terms
from .attributes import relation_filter
from .standing import KEPT

_STAMP = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"  # clock.fmt
# The cursors' shapes (JSON Schema patterns too: api/params.py), URL-safe.
ENTITY_CURSOR = rf"^e({_STAMP})?_[0-9]{{12,18}}$"
ARTIFACT_CURSOR = r"^a[1-9][0-9]{0,17}$"
ENTITY_CURSOR_CHARS = 40
ARTIFACT_CURSOR_CHARS = 19
_ENTITY = re.compile(ENTITY_CURSOR)
_ARTIFACT = re.compile(ARTIFACT_CURSOR)
MAX_LIMIT = 100
DEFAULT_LIMIT = 20
FACTS_PER_ENTITY = 100  # live facts shown with an entity
MATCHES_PER_TERM = 500  # keyword rows read per term of ``q``
# A listing by type reads the entities in their order, in batches, and keeps
# those of the type; it stops after TYPE_SCAN rows with a next cursor (the
# page may then hold fewer than asked: the next one goes on from there).
TYPE_BATCH = 100
TYPE_SCAN = 1000


def entity_cursor(entity: Entity) -> str:
    """The cursor of a page of entities that ends at this one."""
    updated_at, _, row_id = page_key(entity).rpartition("#")
    return f"e{updated_at}_{row_id}"


def artifact_cursor(artifact: Artifact) -> str:
    """The cursor of a page of texts that ends at this one."""
    return f"a{artifact.id}"


def entity_position(cursor: str | None) -> str | None:
    """The page key an entities cursor names; 400 for anything else."""
    if cursor is None:
        return None
    if not _ENTITY.fullmatch(cursor):
        raise BadRequest("cursor: not a cursor of this listing")
    updated_at, _, row_id = cursor[1:].rpartition("_")
    return f"{updated_at}#{row_id}"


def artifact_position(cursor: str | None) -> int | None:
    """The text ID an artifacts cursor names; 400 for anything else."""
    if cursor is None:
        return None
    if not _ARTIFACT.fullmatch(cursor):
        raise BadRequest("cursor: not a cursor of this listing")
    return int(cursor[1:])


def mention(a: Artifact) -> dict[str, Any]:
    """A text as a reference: where an entity or fact was stated."""
    return {
        "artifact_id": a.id,
        "said_at": a.reference_time or None,
        "created_at": a.created_at,
        "session_id": a.session_id,
        "speaker": a.speaker,
    }


def artifact_out(a: Artifact) -> dict[str, Any]:
    return {
        "id": a.id,
        "text": a.text,
        "session_id": a.session_id,
        "speaker": a.speaker,
        "said_at": a.reference_time or None,
        "created_at": a.created_at,
    }


def entity_notes(
    notes: NotesStore, key: DatasetKey, entity_id: int, edges: list[Edge]
) -> dict[str, Any]:
    """An entity's summary (with when, whether stale, and the IDs it rests
    on) and, for the user's own entity (their profile), the preferences and
    instructions among its facts. Two reads."""
    found = notes.get_summaries(key, [entity_id]).get(entity_id) or Summary(entity_id)
    own = {e.id for e in edges if e.source_id == entity_id}
    kept = [s for s in notes.standing(key, KEPT) if s.source == "edge" and s.id in own]
    prefs = [{"edge_id": s.id, "kind": s.kind, "topic": s.topic, "text": s.text} for s in kept]
    return {**found.public(), "preferences": prefs}


class Browse:
    def __init__(self, graph: GraphStore, notes: NotesStore | None = None) -> None:
        self.graph = graph
        self.notes = notes  # summaries and preferences (None: not shown)

    def _dataset(self, key: DatasetKey) -> None:
        if self.graph.get_dataset(key) is None:
            raise NotFound(f"dataset {key.dataset!r} does not exist")

    def _names(self, key: DatasetKey, edges: list[Edge]) -> dict[int, str]:
        ids = {e.source_id for e in edges} | {e.target_id for e in edges}
        return {i: e.name for i, e in self.graph.get_entities(key, sorted(ids)).items()}

    def _edges_out(self, key: DatasetKey, edges: list[Edge]) -> list[dict[str, Any]]:
        names = self._names(key, edges)
        return [e.public(names) for e in edges]

    def _mentions(self, key: DatasetKey, artifact_ids: list[int]) -> list[dict[str, Any]]:
        arts = self.graph.get_artifacts(key, artifact_ids)
        # a chunk stands for its text: one mention per text
        texts = {a.parent_id if a.parent_id is not None else a.id for a in arts.values()}
        missing = [i for i in texts if i not in arts]
        arts.update(self.graph.get_artifacts(key, missing))
        return [mention(arts[i]) for i in sorted(texts) if i in arts]

    # --- entities ------------------------------------------------------------------

    def entities(
        self,
        key: DatasetKey,
        q: str | None,
        limit: int,
        cursor: str | None,
        kind: str | None = None,
    ) -> dict[str, Any]:
        """A page of entities (``q``: whose name matches; ``kind``: of that
        type, without case)."""
        after = entity_position(cursor)
        self._dataset(key)
        reached = None  # a type's scan that stopped at its bound: where
        if q is not None:
            page = self._matching(key, q, limit + 1, after, kind)
        elif kind is not None:
            page, reached = self._of_type(key, kind, limit + 1, after)
        else:
            page = self.graph.entities_page(key, limit + 1, after)
        more, page = len(page) > limit, page[:limit]
        counts = self._fact_counts(key, page)
        out = []
        for e in page:
            item = e.public()
            item.update(created_at=e.created_at, updated_at=e.updated_at, facts=counts[e.id])
            out.append(item)
        last = page[-1] if more and page else reached
        return {"entities": out, "next_cursor": entity_cursor(last) if last else None}

    def _of_type(
        self, key: DatasetKey, kind: str, limit: int, after: str | None
    ) -> tuple[list[Entity], Entity | None]:
        """Up to ``limit`` entities of the type, in the listing's order, and
        the last entity read when the scan stopped at TYPE_SCAN first."""
        wanted = kind.casefold()
        found: list[Entity] = []
        scanned = 0
        while scanned < TYPE_SCAN:
            batch = self.graph.entities_page(key, TYPE_BATCH, after)
            scanned += len(batch)
            for e in batch:
                if e.type.casefold() == wanted:
                    found.append(e)
                    if len(found) == limit:
                        return found, None
            if len(batch) < TYPE_BATCH:
                return found, None
            after = page_key(batch[-1])
        return found, batch[-1]

    def _matching(
        self, key: DatasetKey, q: str, limit: int, after: str | None, kind: str | None
    ) -> list[Entity]:
        """Entities whose name holds every term of ``q`` (keyword-search
        normalisation), of the type ``kind`` when given, in the listing's
        order."""
        terms = sorted(index_terms(q))
        if not terms:
            return []
        hits = self.graph.keyword_hits(key, terms, MATCHES_PER_TERM)
        per_term: dict[str, set[int]] = {t: set() for t in terms}
        for h in hits:
            if h.in_name:
                per_term[h.term].add(h.entity_id)
        ids = set.intersection(*per_term.values())
        found = sorted(
            self.graph.get_entities(key, sorted(ids)).values(), key=page_key, reverse=True
        )
        if kind is not None:
            found = [e for e in found if e.type.casefold() == kind.casefold()]
        return [e for e in found if after is None or page_key(e) < after][:limit]

    def _fact_counts(self, key: DatasetKey, entities: list[Entity]) -> dict[int, int]:
        out = {}
        for e in entities:
            edges = self.graph.live_edges_around(key, [e.id], FACTS_PER_ENTITY)
            out[e.id] = len(edges)
        return out

    def entity(
        self, key: DatasetKey, entity_id: int, edge_type: str | None = None
    ) -> dict[str, Any]:
        """An entity, its live facts (``edge_type``: those of that relation
        or edge type only, as search's ``edge_types``), its mentions."""
        self._dataset(key)
        found = self.graph.get_entities(key, [entity_id]).get(entity_id)
        if found is None:
            raise NotFound(f"entity {entity_id} does not exist")
        edges = self.graph.live_edges_around(key, [entity_id], FACTS_PER_ENTITY)
        item = found.public()
        item.update(created_at=found.created_at, updated_at=found.updated_at)
        if found.attribute_history:
            item["attribute_history"] = found.attribute_history
        out: dict[str, Any] = {"entity": item}
        if self.notes is not None:
            out.update(entity_notes(self.notes, key, entity_id, edges))
        if edge_type is not None:
            keep = relation_filter(frozenset({edge_type.casefold()}), self.graph.get_schema(key))
            edges = [e for e in edges if keep(e)]
        out["facts"] = self._edges_out(key, edges)
        out["mentions"] = self._mentions(key, self.graph.entity_artifacts(key, entity_id))
        return out

    # --- edges ---------------------------------------------------------------------

    def edge(self, key: DatasetKey, edge_id: int) -> dict[str, Any]:
        self._dataset(key)
        found = self.graph.get_edges(key, [edge_id]).get(edge_id)
        if found is None:
            raise NotFound(f"edge {edge_id} does not exist")
        made, suffered = self.graph.edge_changes(key, edge_id)
        by = [c.by_edge for c in suffered if c.by_edge is not None]
        others = self.graph.get_edges(key, [c.edge_id for c in made] + by)
        names = self._names(key, [found, *others.values()])
        fixes = self.graph.corrections(key, [edge_id, *others])

        def out(edge: Edge) -> dict[str, Any]:
            item = edge.public(names)
            if edge.id in fixes:  # written by a person: the correction's provenance
                item["correction"] = fixes[edge.id].public()
            return item

        def step(c: EdgeChange, edge: Edge | None) -> dict[str, Any] | None:
            if edge is None:
                return None
            item = {"edge": out(edge), "at": c.at, "artifact_id": c.artifact_id}
            if c.by_edge in fixes:
                item["correction"] = fixes[c.by_edge].public()
            return item

        replaced = [s for c in made if (s := step(c, others.get(c.edge_id))) is not None]
        last = next((c for c in reversed(suffered) if c.by_edge is not None), None)
        replaced_by = step(last, others.get(last.by_edge)) if last and last.by_edge else None
        return {
            "edge": out(found),
            "sources": self._mentions(key, self.graph.edge_artifacts(key, edge_id)),
            "replaced": replaced,
            "replaced_by": replaced_by,
        }

    # --- artifacts -----------------------------------------------------------------

    def artifact(self, key: DatasetKey, artifact_id: int) -> dict[str, Any]:
        self._dataset(key)
        found = self.graph.get_artifacts(key, [artifact_id]).get(artifact_id)
        if found is None or found.parent_id is not None:
            raise NotFound(f"artifact {artifact_id} does not exist")
        chunks = self.graph.chunks_of(key, artifact_id)
        entity_ids: set[int] = set()
        edge_ids: set[int] = set()
        for a in [found, *chunks]:
            ents, edges = self.graph.artifact_links(key, a.id)
            entity_ids.update(ents)
            edge_ids.update(edges)
        entities = self.graph.get_entities(key, sorted(entity_ids))
        edges_found = self.graph.get_edges(key, sorted(edge_ids))
        return {
            "artifact": artifact_out(found),
            "entities": [entities[i].public() for i in sorted(entities)],
            "edges": self._edges_out(key, [edges_found[i] for i in sorted(edges_found)]),
            "chunks": [
                {
                    "artifact_id": c.id,
                    "parent_id": c.parent_id,
                    "index": c.index,
                    "summary": c.summary,
                    "text": c.text,
                }
                for c in chunks
            ],
        }

    def artifacts(
        self, key: DatasetKey, session_id: str | None, limit: int, cursor: str | None
    ) -> dict[str, Any]:
        pos = artifact_position(cursor)
        self._dataset(key)
        if session_id is not None:
            page = self.graph.session_page(key, session_id, limit + 1, pos)
        else:
            page = self.graph.texts_page(key, limit + 1, pos)
        more, page = len(page) > limit, page[:limit]
        nxt = artifact_cursor(page[-1]) if more and page else None
        return {"artifacts": [artifact_out(a) for a in page], "next_cursor": nxt}
