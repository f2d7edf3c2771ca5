"""Keyword retrieval over the term index: the scoring rules of the query spec,
shared by query (seeds) and remember (known entities shown to extract)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..graph.port import GraphStore
from ..models import DatasetKey, Entity, KeywordHit
from ..retrieval_profile import DEFAULT, RetrievalProfile
from ..text import contains_phrase, index_terms, normalize_name

# Index entries read per term (remember's known entities; a query reads its profile's).
PER_TERM = DEFAULT.keyword_per_term
MAX_NAME_WORDS = 8  # the longest name looked up whole in the names table
MAX_NAME_LOOKUPS = 100  # whole names looked up per call (one BatchGetItem)


@dataclass
class _Candidate:
    norm_name: str
    updated_at: str
    in_description: set[str] = field(default_factory=set)


def keyword_seeds(
    graph: GraphStore, key: DatasetKey, text: str, terms: list[str], limit: int
) -> list[int]:
    """The IDs of :func:`keyword_scores`, best first."""
    return list(keyword_scores(graph, key, text, terms, limit))


def keyword_scores(
    graph: GraphStore, key: DatasetKey, text: str, terms: list[str], limit: int
) -> dict[int, int]:
    """Entity IDs and their scores, best first: +5 when the whole normalized name is in the text,
    +3 per term in the name, +1 per term in the description; ties go to the
    most recently updated.

    The term index is read ``PER_TERM`` entries a term, newest entities
    first, so a common word can leave out the very entity the text names
    (``Acme`` when fifty people "work at Acme"): the names the text holds
    whole are also looked up in the names table, and those entities read
    from their rows. A term in the name is scored from the name itself, so a
    cut index list costs at most the +1 of a description.

    The reads one after the other; the query sends the first two at once
    (:func:`name_lookups`, :func:`missing_named`, :func:`rank_keywords`)."""
    if not terms:
        return {}
    hits = graph.keyword_hits(key, terms, PER_TERM)
    named = graph.entity_ids_by_names(key, name_lookups(text, terms))
    missing = missing_named(hits, named)
    rows = graph.get_entities(key, missing) if missing else {}
    return rank_keywords(text, terms, hits, rows, limit)


def name_lookups(text: str, terms: list[str]) -> list[str]:
    """The names to look up whole in the names table."""
    return whole_name_candidates(normalize_name(text), set(terms))


def missing_named(hits: list[KeywordHit], named: dict[str, int]) -> list[int]:
    """The entities the text names whole that the term lists left out (their
    rows are read)."""
    return sorted(set(named.values()) - {h.entity_id for h in hits})


def rank_keywords(
    text: str,
    terms: list[str],
    hits: list[KeywordHit],
    rows: dict[int, Entity],
    limit: int,
    p: RetrievalProfile = DEFAULT,
) -> dict[int, int]:
    """Score the term index's hits and the rows of the named entities it
    left out (the rules of :func:`keyword_scores`, the points ``p``'s), best
    ``limit`` first."""
    if not terms:
        return {}
    wanted = set(terms)
    norm_text = normalize_name(text)
    candidates: dict[int, _Candidate] = {}
    for h in hits:
        c = candidates.setdefault(h.entity_id, _Candidate(h.norm_name, h.updated_at))
        c.updated_at = max(c.updated_at, h.updated_at)
        if h.in_description:
            c.in_description.add(h.term)
    for e in rows.values():
        candidates.setdefault(e.id, _from_row(e, wanted))

    whole_name, name_term, described = (
        p.keyword_whole_name,
        p.keyword_name_term,
        p.keyword_description,
    )

    def score(c: _Candidate) -> int:
        whole = whole_name if contains_phrase(norm_text, c.norm_name) else 0
        named = name_term * len(index_terms(c.norm_name) & wanted)
        return whole + named + described * len(c.in_description)

    scores = {eid: score(c) for eid, c in candidates.items()}
    # Best score first, then newest, then highest ID: three stable sorts, the
    # last key first (a key tuple per candidate with the timestamp turned
    # into a tuple of negated code points was a tenth of keyword_seeds at
    # 100k facts; reverse=True keeps equal keys in their order).
    ranked = sorted(scores, reverse=True)
    ranked.sort(key=lambda eid: candidates[eid].updated_at, reverse=True)
    ranked.sort(key=scores.__getitem__, reverse=True)
    return {eid: scores[eid] for eid in ranked[:limit]}


def whole_name_candidates(norm_text: str, terms: set[str]) -> list[str]:
    """The word sequences of the text (at most ``MAX_NAME_WORDS`` words) that
    hold one of the terms: the names that could appear whole in it. Shortest
    first, then in text order; at most ``MAX_NAME_LOOKUPS``."""
    words = norm_text.split()
    # held[i]: the terms among the first i words. A gram holds a term when
    # the count grows across it: each word is looked up once, not once per
    # gram it is in (eight lengths; this loop was a tenth of keyword_seeds).
    held = [0]
    for w in words:
        held.append(held[-1] + (w in terms))
    out: dict[str, None] = {}
    for n in range(1, MAX_NAME_WORDS + 1):
        for i in range(len(words) - n + 1):
            if held[i + n] > held[i]:
                out.setdefault(" ".join(words[i : i + n]))
                if len(out) == MAX_NAME_LOOKUPS:
                    return list(out)
    return list(out)


def _from_row(e: Entity, terms: set[str]) -> _Candidate:
    return _Candidate(normalize_name(e.name), e.updated_at, index_terms(e.description) & terms)
