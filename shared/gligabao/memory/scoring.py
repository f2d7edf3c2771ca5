"""The scores of the query's candidates, one scale for entities, facts and
passages: the one place their arithmetic is written. Each score is a
:class:`Score`, the sum of named parts in the order they are added, so that
the explanation a query gives (``"explain": true``) is the arithmetic itself,
not a retelling of it. The weights are the :class:`~.profile.RetrievalProfile`'s
(the rules and the figures: docs/retrieval.md)."""

from __future__ import annotations

import calendar
import functools
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..models import Edge
from ..retrieval_profile import RetrievalProfile
from ..text import index_terms, stem


@functools.lru_cache(maxsize=2**16)
def stems(text: str) -> frozenset[str]:
    """A line's stems, kept: a query scores a hundred fact lines, each twice,
    and the next question about the same people the same lines again (the
    stemming was 7 ms of a profiled query at 1k facts)."""
    return frozenset(stem(t) for t in index_terms(text))


def above(similarity: float, threshold: float) -> float:
    """A cosine as its share of the way from the search threshold to 1: the
    embedding models put most texts at 0.75 to 0.9 of any question, so the
    raw cosine hardly tells one similar fact from another."""
    if threshold >= 1.0:
        return 0.0
    return max(0.0, (similarity - threshold) / (1.0 - threshold))


def lexical_share(question_stems: set[str], text: str) -> float:
    """The share of the question's terms the text holds (0..1)."""
    if not question_stems:
        return 0.0
    return len(stems(text) & question_stems) / len(question_stems)


@dataclass(slots=True)
class Score:
    """A score as the sum of its parts, added in their order (so that the
    parts recombine to it exactly), and the figures they came from."""

    parts: list[tuple[str, float]]
    inputs: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> float:
        s = 0.0
        for _, v in self.parts:
            s += v
        return s

    def public(self) -> dict[str, Any]:
        """The explanation of a candidate: its score, the parts that made it
        and what they were computed from."""
        return {"score": self.total, "parts": dict(self.parts), **self.inputs}


def seed_strength(points: int | None, similarity: float | None, p: RetrievalProfile) -> float:
    """A seed's strength: its keyword points and its cosine to the question
    (either may be missing: found one way only)."""
    s = p.w_keyword * points if points is not None else 0.0
    if similarity is not None:
        s += p.w_entity_sim * similarity
    return s


def seed_line_score(strength: float, p: RetrievalProfile, **inputs: Any) -> Score:
    """A seed's own line (its name and description)."""
    return Score([("seed_line", p.w_seed_line * strength)], {"strength": strength, **inputs})


def fact_score(
    reach_: float,
    similarity: float,
    question_stems: set[str],
    line: str,
    p: RetrievalProfile,
    *,
    age: tuple[int, int] | None = None,
    provenance: bool = False,
    when: bool = False,
) -> Score:
    """A fact's score: what its ends pass on (graph distance from the seeds),
    its vector similarity and its shared words; with ``age`` (the fact is
    the n-th oldest of a pool of m: (n, m)) recency (the newest gets all of it), provenance (stated in a matched
    passage) and dates (``when``: in a period the question names) as well.
    Without ``age``: the fact on its own words, before its ends are read."""
    lex = lexical_share(question_stems, line)
    parts = [
        ("reach", p.hop1 * reach_),
        ("similarity", p.w_edge_sim * similarity),
        ("lexical", p.w_lexical * lex),
    ]
    inputs: dict[str, Any] = {"reach": reach_, "similarity": similarity, "lexical_share": lex}
    if age is not None:
        n, of = age
        parts.append(("recency", p.w_recency * n / of))
        inputs["age"] = n / of
        parts.append(("provenance", p.w_provenance if provenance else 0.0))
        parts.append(("when", p.w_when if when else 0.0))
    return Score(parts, inputs)


def damped(
    strength: dict[int, float], degree: Counter[int], p: RetrievalProfile
) -> dict[int, float]:
    """What each entity passes to one of its facts: its strength, damped for
    a hub (a seed with many facts passes less to each, as in a random walk
    from the seeds). Computed once per pool, not per fact and end: a query
    asks :func:`reach` of a hundred or so facts (the one-hop and similar
    ones, then the whole pool), and the square roots were most of its time.
    An entity not in ``strength`` passes nothing (0.0)."""
    out: dict[int, float] = {}
    hub = p.hub_degree
    for end, s in strength.items():
        d = degree.get(end, 0)
        out[end] = s * (min(1.0, math.sqrt(hub / d)) if d else 1.0)
    return out


def reach(e: Edge, passed: dict[int, float]) -> float:
    """What a fact gets from its ends: the most either end passes on
    (``passed`` is :func:`damped`'s), never less than 0."""
    return max(0.0, passed.get(e.source_id, 0.0), passed.get(e.target_id, 0.0))


def lent(fact: float, p: RetrievalProfile) -> float:
    """What a one-hop fact scoring ``fact`` lends the entity it leads to."""
    return p.hop2 * fact


def passage_score(
    rank: int,
    question_stems: set[str],
    text: str,
    p: RetrievalProfile,
    *,
    source: float = 0.0,
    when: bool = False,
) -> Score:
    """A matched passage: its rank in the hybrid search, scaled by the words
    it shares with the question; plus ``source`` (it is the text a good fact
    was stated in: :func:`source_score`) and dates (said in a period the
    question names)."""
    by_rank = p.w_passage / (1 + p.passage_decay * rank)
    lex = lexical_share(question_stems, text)
    parts = [
        ("match", by_rank * (p.passage_base + lex)),
        ("source", source),
        ("when", p.w_when if when else 0.0),
    ]
    return Score(parts, {"rank": rank, "by_rank": by_rank, "lexical_share": lex})


def source_score(fact: float, p: RetrievalProfile) -> float:
    """What a fact scoring ``fact`` gives the text it was stated in."""
    return p.w_source * fact


def beside_score(match: float, of: int, p: RetrievalProfile) -> Score:
    """A passage next to a match (``of``) scoring ``match``: a share of it."""
    return Score([("beside", p.w_beside * match)], {"beside_of": of, "neighbour_share": p.w_beside})


def source_only(source: float, of: int) -> Score:
    """A fact's source text that no search matched: the fact's share alone."""
    return Score([("source", source)], {"source_of": of})


MONTHS = {name: f"{i:02d}" for i, name in enumerate(calendar.month_name) if name}
_MONTH = "|".join(MONTHS)
# "April 18, 2024", "March 2024", "in March"; the day first as well ("7 July,
# 2023", "the 7th of July"), as British English and LoCoMo's questions write it;
# or a bare year.
_DATE = re.compile(
    r"\b(?:(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?)?(" + _MONTH + r")\b"
    r"(?:\s+(\d{1,2})(?:st|nd|rd|th)?\b)?(?:,?\s+(\d{4})\b)?"
    r"|\b((?:19|20)\d\d)\b"
)

Period = tuple[str | None, str | None, str | None]  # year, month, day (as in RFC 3339)


def question_periods(question: str) -> list[Period]:
    """The periods a question names: "in March 2024", "on April 18, 2024",
    "on 7 July, 2023", "in March", "between 2015 and 2019" (each year). Month
    names count capitalized only, and "May" alone not at all ("May I ...")."""
    out: list[Period] = []
    for m in _DATE.finditer(question):
        day_first, month, day_after, year, bare_year = m.groups()
        day = day_first or day_after
        if bare_year is not None:
            out.append((bare_year, None, None))
        elif month == "May" and day is None and year is None:
            continue
        else:
            out.append((year, MONTHS[month], f"{int(day):02d}" if day else None))
    return out


def within(periods: list[Period], *instants: str | None) -> bool:
    """One of the instants (RFC 3339 UTC) falls in one of the periods."""
    for ts in instants:
        if ts is None:
            continue
        for year, month, day in periods:
            if (
                (year is None or ts[0:4] == year)
                and (month is None or ts[5:7] == month)
                and (day is None or ts[8:10] == day)
            ):
                return True
    return False
