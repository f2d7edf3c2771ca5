"""hops: the graph side of a query's reads, scored before the names of the
facts' ends are read: which one-hop facts look best on their own words,
what they lend the entity they lead to, and so which entities have their
edges read for two hops (:mod:`.gather` reads them)."""

from __future__ import annotations

from collections import Counter

from ..models import Edge
from ..retrieval_profile import RetrievalProfile
from .scoring import damped, fact_score, lent, reach


def degree_of(around: list[Edge]) -> Counter[int]:
    """Facts per entity among the one-hop facts (a fact from an entity to
    itself counts once). Counted in C from two lists, not from a set per
    fact (only looked up: the order of the keys is not used)."""
    ends = [e.source_id for e in around]
    ends += [e.target_id for e in around if e.target_id != e.source_id]
    return Counter(ends)


def on_own_words(
    facts: list[Edge],
    strength: dict[int, float],
    degree: Counter[int],
    edge_sim: dict[int, float],
    question: set[str],
    p: RetrievalProfile,
) -> dict[int, float]:
    """The facts scored before the names of their ends are read: on their
    relation and sentence (they choose the two-hop neighbours and the texts
    read as the best facts' sources)."""
    passed = damped(strength, degree, p)
    return {
        e.id: fact_score(
            reach(e, passed), edge_sim.get(e.id, 0.0), question, f"{e.relation} {e.description}", p
        ).total
        for e in facts
    }


def lent_to(
    around: list[Edge], scores: dict[int, float], strength: dict[int, float], p: RetrievalProfile
) -> dict[int, float]:
    """What the one-hop facts lend the entity they lead to (away from the
    stronger end): a share of the fact's score."""
    out: dict[int, float] = {}
    for e in around:
        a, b = e.source_id, e.target_id
        far = b if strength.get(a, 0.0) >= strength.get(b, 0.0) else a
        out[far] = max(out.get(far, 0.0), lent(scores[e.id], p))
    return out


def two_hop_from(
    around: list[Edge],
    strength: dict[int, float],
    edge_sim: dict[int, float],
    question: set[str],
    p: RetrievalProfile,
) -> list[int]:
    """The entities the best one-hop facts lead to that are not seeds (at
    most ``p.hop2_from``): whose edges are read for two hops."""
    scores = on_own_words(around, strength, degree_of(around), edge_sim, question, p)
    given = lent_to(around, scores, strength, p)
    ahead = sorted((n for n in given if n not in strength), key=lambda n: (-given[n], -n))
    return ahead[: p.hop2_from]
