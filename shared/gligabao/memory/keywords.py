"""Keyword retrieval over the term index: the scoring rules of the query spec,
shared by query (seeds) and remember (known entities shown to extract)."""

from __future__ import annotations

from ..graph.port import GraphStore
from ..models import DatasetKey
from ..text import contains_phrase, normalize_name

PER_TERM = 50  # index entries read per term: bounds the cost of a common word


def keyword_seeds(
    graph: GraphStore, key: DatasetKey, text: str, terms: list[str], limit: int
) -> list[int]:
    """Entity IDs by score: +5 when the whole normalized name is in the text,
    +3 per term in the name, +1 per term in the description; ties go to the
    most recently updated."""
    if not terms:
        return []
    hits = graph.keyword_hits(key, terms, PER_TERM)
    norm_text = normalize_name(text)
    scores: dict[int, int] = {}
    updated: dict[int, str] = {}
    for h in hits:
        if h.entity_id not in scores:
            scores[h.entity_id] = 5 if contains_phrase(norm_text, h.norm_name) else 0
            updated[h.entity_id] = h.updated_at
        scores[h.entity_id] += (3 if h.in_name else 0) + (1 if h.in_description else 0)
        updated[h.entity_id] = max(updated[h.entity_id], h.updated_at)
    ranked = sorted(scores, key=lambda eid: (-scores[eid], _desc(updated[eid]), -eid))
    return ranked[:limit]


def _desc(ts: str) -> tuple[int, ...]:
    # Sort key that orders timestamps newest first inside an ascending sort.
    return tuple(-ord(c) for c in ts)
