"""The scores of the query's candidates, one scale for entities, facts and
passages (the weights are set by running bench/eval; the rules and the figures are in
docs/retrieval.md)."""

from __future__ import annotations

import calendar
import functools
import math
import re
from collections import Counter

from ..models import Edge
from ..text import index_terms, stem

W_KEYWORD = 0.1  # per keyword point (+5 whole name, +3 a name term, +1 description)
W_ENTITY_SIM = 1.0  # times the entity's cosine to the question
HOP1 = 0.5  # a fact touching a seed: times the seed's strength
HOP2 = 0.6  # a fact two hops away: times the score of the fact that leads there
W_EDGE_SIM = 3.5  # times how far the fact's cosine is above the query threshold (0..1)
W_LEXICAL = 2.0  # times the share of the question's terms the fact holds
W_RECENCY = 0.2  # newest fact of the pool; oldest 0
W_PROVENANCE = 0.5  # a fact stated in a matched passage
W_PASSAGE = 1.5  # best passage; decays with its rank
# The decay of a passage's score down the hybrid search's ranks: slow, so
# that a pool of 40 is cut by the relevance floor rather than by its size
# (LoCoMo: 0.25 drops evidence ranked 10th to 40th; bench/locomo.py).
PASSAGE_DECAY = 0.1
# A passage's rank score is scaled by this plus the share of the question's
# terms it holds: the hybrid search ranks every text, so the best-ranked one
# is not relevant by rank alone ("What's my job title?" ranks "Any tips for a
# job interview?" first), and its words tell (bench/eval: 0.1 to 0.4 give the
# same recall; 0.25 the fewest tokens at it).
PASSAGE_BASE = 0.25
W_SOURCE = 0.5  # the source text of a fact: times the fact's score
W_SEED_LINE = 0.5  # a seed's own line: times its strength
HUB_DEGREE = 5  # a seed with more facts than this passes less to each
W_WHEN = 1.0  # a fact that began or ended, a passage said, in a period the question names
# The budget is a cap, not a target: a fact or passage scoring under this
# share of the best candidate's score is left out even when there is room (a
# seed's own line is not). bench/eval, long corpus: 0.25 keeps recall 0.99 in
# 8% of the history's tokens; 0.15 and 0.2 the same recall in more tokens, 0.3
# and up drop second hops and paraphrases.
RELEVANCE_FLOOR = 0.25
# The floor when no fact is a candidate (the dataset's texts were remembered
# without extraction, or the model found nothing in them): the passages are
# then the only evidence, and their scores (rank and shared words) fall off
# slowly, so a floor set for facts cuts evidence ranked 10th to 40th. Real
# conversations (bench/locomo.py, turns): 0.25 holds 0.80 of the evidence in
# 4.6% of the conversation, 0.1 holds 0.85 in 9.3%; HotpotQA's chains 0.88 and
# 0.92. bench/eval always has facts: the rule leaves it as it was.
PASSAGES_ONLY_FLOOR = 0.1
# A passage next to a matched one (its session's turn, its text's window):
# this share of the match's score.
W_BESIDE = 0.5


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


def fact_score(
    e: Edge, graph_score: float, similarity: float, question_stems: set[str], line: str
) -> float:
    """Graph distance, vector similarity and shared words (recency and
    provenance are added by the caller, who knows the pool)."""
    return graph_score + W_EDGE_SIM * similarity + W_LEXICAL * lexical_share(question_stems, line)


def damped(strength: dict[int, float], degree: Counter[int]) -> dict[int, float]:
    """What each entity passes to one of its facts: its strength, damped for
    a hub (a seed with many facts passes less to each, as in a random walk
    from the seeds). Computed once per pool, not per fact and end: a query
    asks :func:`reach` of some 150 facts, and the square roots were most of
    its time. An entity not in ``strength`` passes nothing (0.0)."""
    out: dict[int, float] = {}
    for end, s in strength.items():
        d = degree.get(end, 0)
        out[end] = s * (min(1.0, math.sqrt(HUB_DEGREE / d)) if d else 1.0)
    return out


def reach(e: Edge, passed: dict[int, float]) -> float:
    """What a fact gets from its ends: the most either end passes on
    (``passed`` is :func:`damped`'s), never less than 0."""
    return max(0.0, passed.get(e.source_id, 0.0), passed.get(e.target_id, 0.0))


def passage_score(rank: int, question_stems: set[str], text: str) -> float:
    """A matched passage: its rank in the hybrid search, scaled by the words
    it shares with the question."""
    by_rank = W_PASSAGE / (1 + PASSAGE_DECAY * rank)
    return by_rank * (PASSAGE_BASE + lexical_share(question_stems, text))


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
