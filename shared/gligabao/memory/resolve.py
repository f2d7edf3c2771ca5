"""remember, stage 2: which stored entity each extracted name is (by the
model's ID, by the names table, by the name rules over the candidates that
keywords and vectors find), or a new one. Reads only."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ..graph.port import GraphStore
from ..models import DatasetKey, Entity
from ..text import index_terms
from ..vectors.port import SearchRequest, VectorIndex
from .extract import Extracted
from .keywords import keyword_seeds
from .names import MODEL, Reason, best_match, nickname_forms, parts

KNOWN_BY_KEYWORD = 15
KNOWN_BY_SIMILARITY = 10
KNOWN_MAX = 30
MAX_TEXT_TERMS = 40
RESOLVE_CANDIDATES = 3  # similar names read per new name, best first
MAX_NAME_FORMS = 12  # nickname forms of the text's names added to its terms
_CAPITALIZED = re.compile(r"\b[A-Z][a-z]+\b")


@dataclass
class Resolved:
    entity: Entity
    created: bool
    extracted: list[Extracted] = field(default_factory=list)
    match: Reason | None = None  # why it is a stored entity (None: created)
    # A new entity claims its normalized name, unless a stored entity of
    # another kind already holds it (a namesake: Jordan the person, Jordan
    # the country); it is then found by its terms and vector, not its name.
    claim_name: bool = True


@dataclass
class Pending:
    """The names ``resolve_exact`` could not settle (one normalized name)."""

    extracted: list[Extracted]
    name_taken: bool  # a stored entity holds this normalized name


def known_entities(
    graph: GraphStore,
    vectors: VectorIndex,
    threshold: float,
    key: DatasetKey,
    text: str,
    text_vectors: list[list[float]],
) -> list[Entity]:
    """The stored entities the text probably names (shown to the extraction):
    by the text's words and the known short and long forms of the given
    names in it ("Bob" finds Robert Smith), and by the text's vector."""
    terms = sorted(index_terms(text), key=lambda t: text.casefold().find(t))[:MAX_TEXT_TERMS]
    ids = keyword_seeds(graph, key, text, terms + name_forms(text, terms), KNOWN_BY_KEYWORD)
    if text_vectors:
        reqs = [SearchRequest("entities", v, KNOWN_BY_SIMILARITY, threshold) for v in text_vectors]
        for hits in vectors.search(key, reqs):
            ids.extend(h.id for h in hits if h.id not in ids)
    ids = ids[:KNOWN_MAX]
    found = graph.get_entities(key, ids)
    return [found[i] for i in ids if i in found]


def name_forms(text: str, terms: list[str]) -> list[str]:
    """The short and long forms of the capitalized words of the text (the
    given names it may hold) that are not terms already, at most
    ``MAX_NAME_FORMS``: a word with many forms ("Rick": Richard, Eric,
    Derek...) keeps the first ones, in the list's order."""
    have = set(terms)
    out: list[str] = []
    for word in _CAPITALIZED.findall(text):
        for form in sorted(nickname_forms(word)):
            if form not in have and len(out) < MAX_NAME_FORMS:
                have.add(form)
                out.append(form)
    return out


def _lookup_keys(ex: Extracted) -> list[str]:
    """The normalized names under which a stored entity could hold ``ex``'s
    name: as written, and without possessive, title or legal form."""
    core = " ".join(parts(ex.name).tokens)
    return [ex.norm] if core == ex.norm else [ex.norm, core]


def other_declared(type_: str, candidates: list[Entity], declared: frozenset[str]) -> list[Entity]:
    """The candidates an entity of ``type_`` may be: none of another declared
    type when its own is declared (a dataset's schema: a Customer is never
    an Account, whatever the names say)."""
    mine = type_.casefold()
    if mine not in declared:
        return candidates
    return [c for c in candidates if c.type.casefold() not in declared or c.type.casefold() == mine]


def resolve_exact(
    graph: GraphStore,
    key: DatasetKey,
    extracted: list[Extracted],
    known: dict[int, Entity],
    declared: frozenset[str] = frozenset(),
) -> tuple[dict[str, Resolved], dict[str, Pending]]:
    """Resolution by the model's ID (only IDs it was shown) and by the
    names table (the same name, of a kind that fits). Returns (resolved,
    pending), both by normalized name."""
    resolved: dict[str, Resolved] = {}
    by_id: dict[int, Resolved] = {}
    names = graph.entity_ids_by_names(key, sorted({k for e in extracted for k in _lookup_keys(e)}))
    need = sorted({i for i in names.values() if i not in known})
    fetched = dict(known)
    if need:
        fetched.update(graph.get_entities(key, need))
    pending: dict[str, Pending] = {}
    for ex in extracted:
        target: Entity | None = None
        reason: Reason | None = None
        if ex.model_id is not None and other_declared(
            ex.type, [known[ex.model_id]] if ex.model_id in known else [], declared
        ):
            target, reason = known[ex.model_id], MODEL
        else:
            owners = [fetched[names[k]] for k in _lookup_keys(ex) if names.get(k) in fetched]
            found = best_match(ex.name, ex.type, other_declared(ex.type, owners, declared))
            if found is not None:
                target, reason = found
        if target is None:
            # Taken only by a stored entity: a claim whose entity is not there
            # (a concurrent call's, or one an erase left) is claimed again
            # at the write, which waits for it or takes it over; treated as
            # a namesake's, its new entity would claim nothing (a twin).
            p = pending.setdefault(ex.norm, Pending([], names.get(ex.norm) in fetched))
            p.extracted.append(ex)
            continue
        r = by_id.get(target.id) or Resolved(replace(target), created=False, match=reason)
        by_id[target.id] = r
        r.extracted.append(ex)
        resolved[ex.norm] = r
    return resolved, pending


def resolve_similar(
    graph: GraphStore,
    vectors: VectorIndex,
    threshold: float,
    key: DatasetKey,
    pending: dict[str, Pending],
    vecs: dict[str, list[float]],
    resolved: dict[str, Resolved],
    known: list[Entity],
    declared: frozenset[str] = frozenset(),
) -> None:
    """The names ``resolve_exact`` left pending. Candidates: the known
    entities (found by the text's words and vector) and the stored names
    most similar to each name (from ``threshold`` up). A candidate is a
    reason to look, never one to merge: the name rules (memory/names.py)
    must find the names compatible, else the name is a new entity. Fills
    ``resolved``."""
    names = list(pending)
    # A threshold above any cosine (an uncalibrated model): no search at all.
    hits = (
        vectors.search(
            key,
            [SearchRequest("entities", vecs[n], RESOLVE_CANDIDATES, threshold) for n in names],
        )
        if names and threshold <= 1.0
        else [[] for _ in names]
    )
    by_id = {r.entity.id: r for r in resolved.values()}
    seen = {e.id: e for e in known}
    wanted = {h.id for found in hits for h in found} - set(by_id) - set(seen)
    fetched = graph.get_entities(key, sorted(wanted)) if wanted else {}
    rows = {**seen, **fetched, **{i: r.entity for i, r in by_id.items()}}
    for n, found in zip(names, hits, strict=True):
        p = pending[n]
        first = p.extracted[0]
        # A vector left by a failed call (its row never landed) is no candidate.
        similar = [rows[h.id] for h in found if h.id in rows]
        match = best_match(
            first.name, first.type, other_declared(first.type, [*similar, *known], declared)
        )
        r: Resolved | None = None
        if match is not None:
            entity, reason = match
            r = by_id.get(entity.id)
            if r is None:
                r = by_id[entity.id] = Resolved(replace(entity), created=False, match=reason)
        if r is None:
            # New: the ID comes at write time. Two names of the same text
            # that normalize alike were already merged by the parser.
            r = Resolved(
                Entity(0, first.name, first.type, ""), created=True, claim_name=not p.name_taken
            )
        for ex in p.extracted:
            r.extracted.append(ex)
            resolved[ex.norm] = r
