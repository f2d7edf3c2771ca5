"""The scores of the query's candidates, one scale for entities, facts and
passages (the weights are set by running bench/eval; see the README)."""

from __future__ import annotations

import math
from collections import Counter

from ..models import Edge
from ..text import index_terms

W_KEYWORD = 0.1  # per keyword point (+5 whole name, +3 a name term, +1 description)
W_ENTITY_SIM = 1.0  # times the entity's cosine to the question
HOP1 = 0.5  # a fact touching a seed: times the seed's strength
HOP2 = 0.6  # a fact two hops away: times the score of the fact that leads there
W_EDGE_SIM = 1.5  # times the fact's cosine to the question
W_LEXICAL = 2.0  # times the share of the question's terms the fact holds
W_RECENCY = 0.2  # newest fact of the pool; oldest 0
W_PROVENANCE = 0.5  # a fact stated in a matched passage
W_PASSAGE = 1.5  # best passage; decays with its rank
PASSAGE_DECAY = 0.25
W_SOURCE = 0.5  # the source text of a fact: times the fact's score
W_SEED_LINE = 0.5  # a seed's own line: times its strength
HUB_DEGREE = 5  # a seed with more facts than this passes less to each


def stem(term: str) -> str:
    """A light English suffix strip, so that "works" meets "work" and
    "living" meets "live" (the index terms themselves are not stemmed)."""
    for suffix, keep in (("ing", 4), ("ed", 3), ("es", 4), ("s", 3)):
        if term.endswith(suffix) and len(term) - len(suffix) >= keep and not term.endswith("ss"):
            return term[: -len(suffix)]
    return term


def stems(text: str) -> set[str]:
    return {stem(t) for t in index_terms(text)}


def lexical_share(question_stems: set[str], text: str) -> float:
    """The share of the question's terms the text holds (0..1)."""
    if not question_stems:
        return 0.0
    return len(stems(text) & question_stems) / len(question_stems)


def fact_score(
    e: Edge, graph_score: float, similarity: float, question_stems: set[str], line: str
) -> float:
    """Graph distance, vector similarity and shared words (recency and
    provenance are added by the caller, who knows the pool)."""
    return graph_score + W_EDGE_SIM * similarity + W_LEXICAL * lexical_share(question_stems, line)


def reach(e: Edge, strength: dict[int, float], degree: Counter[int]) -> float:
    """What a fact gets from its ends: the stronger end's strength, damped
    for a hub (a seed with many facts passes less to each, as in a random
    walk from the seeds)."""
    best = 0.0
    for end in (e.source_id, e.target_id):
        d = degree.get(end, 0)
        damp = min(1.0, math.sqrt(HUB_DEGREE / d)) if d else 1.0
        best = max(best, strength.get(end, 0.0) * damp)
    return best
