"""remember, stage 2: which stored entity each extracted name is (by the
model's ID, by normalized name, by name similarity), or a new one. Reads only."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..graph.port import GraphStore
from ..models import DatasetKey, Entity
from ..text import index_terms
from ..vectors.port import SearchRequest, VectorIndex
from .extract import Extracted
from .keywords import keyword_seeds

KNOWN_BY_KEYWORD = 15
KNOWN_BY_SIMILARITY = 10
KNOWN_MAX = 30
MAX_TEXT_TERMS = 40
RESOLVE_CANDIDATES = 3  # similar names read per new name, best first


@dataclass
class Resolved:
    entity: Entity
    created: bool
    extracted: list[Extracted] = field(default_factory=list)


def known_entities(
    graph: GraphStore,
    vectors: VectorIndex,
    threshold: float,
    key: DatasetKey,
    text: str,
    text_vectors: list[list[float]],
) -> list[Entity]:
    """The stored entities the text probably names (shown to the extraction)."""
    terms = sorted(index_terms(text), key=lambda t: text.casefold().find(t))[:MAX_TEXT_TERMS]
    ids = keyword_seeds(graph, key, text, terms, KNOWN_BY_KEYWORD)
    if text_vectors:
        reqs = [SearchRequest("entities", v, KNOWN_BY_SIMILARITY, threshold) for v in text_vectors]
        for hits in vectors.search(key, reqs):
            ids.extend(h.id for h in hits if h.id not in ids)
    ids = ids[:KNOWN_MAX]
    found = graph.get_entities(key, ids)
    return [found[i] for i in ids if i in found]


def resolve_exact(
    graph: GraphStore, key: DatasetKey, extracted: list[Extracted], known: dict[int, Entity]
) -> tuple[dict[str, Resolved], dict[str, list[Extracted]]]:
    """Resolution by the model's ID (only IDs it was shown) and by
    normalized name. Returns (resolved, pending), both by normalized name."""
    resolved: dict[str, Resolved] = {}
    by_id: dict[int, Resolved] = {}
    names = graph.entity_ids_by_names(key, sorted({e.norm for e in extracted}))
    need = [names[e.norm] for e in extracted if e.norm in names and names[e.norm] not in known]
    fetched = dict(known)
    if need:
        fetched.update(graph.get_entities(key, need))
    pending: dict[str, list[Extracted]] = {}
    for ex in extracted:
        target: Entity | None = None
        if ex.model_id is not None and ex.model_id in known:
            target = known[ex.model_id]
        elif ex.norm in names and names[ex.norm] in fetched:
            target = fetched[names[ex.norm]]
        if target is None:
            pending.setdefault(ex.norm, []).append(ex)
            continue
        r = by_id.get(target.id) or Resolved(replace(target), created=False)
        by_id[target.id] = r
        r.extracted.append(ex)
        resolved[ex.norm] = r
    return resolved, pending


def resolve_similar(
    graph: GraphStore,
    vectors: VectorIndex,
    threshold: float,
    key: DatasetKey,
    pending: dict[str, list[Extracted]],
    vecs: dict[str, list[float]],
    resolved: dict[str, Resolved],
) -> None:
    """The names ``resolve_exact`` left pending: the most similar stored
    name above ``threshold``, or a new entity. Fills ``resolved``."""
    names = list(pending)
    # A threshold above any cosine (an uncalibrated model): no search at all,
    # so that similarity alone never merges two entities.
    hits = (
        vectors.search(
            key,
            [SearchRequest("entities", vecs[n], RESOLVE_CANDIDATES, threshold) for n in names],
        )
        if names and threshold <= 1.0
        else [[] for _ in names]
    )
    by_id = {r.entity.id: r for r in resolved.values()}
    wanted = {h.id for found in hits for h in found} - set(by_id)
    fetched = graph.get_entities(key, sorted(wanted)) if wanted else {}
    # The best hit whose row exists: a vector left by a failed call (its
    # row never landed) must not hide a real entity ranked after it.
    match_ids = {
        n: next((h.id for h in found if h.id in by_id or h.id in fetched), None)
        for n, found in zip(names, hits, strict=True)
    }
    for n in names:
        exs = pending[n]
        mid = match_ids.get(n)
        r: Resolved | None = None
        if mid is not None:
            r = by_id.get(mid)
            if r is None and mid in fetched:
                r = by_id[mid] = Resolved(replace(fetched[mid]), created=False)
        if r is None:
            # New: the ID comes at write time. Two names of the same text
            # that normalize alike were already merged by the parser.
            r = Resolved(Entity(0, exs[0].name, exs[0].type, ""), created=True)
        for ex in exs:
            r.extracted.append(ex)
            resolved[ex.norm] = r
