"""The passage rules of a query: the turns next to a matched one, and the
names a matched passage leads to (a second search round). Pure functions over
rows already read; the reads and searches are :mod:`.gather`'s.

A conversation remembered turn by turn is a row per turn, numbered in the
order they were said; a session remembered as one text is searched by its
windows (children numbered in order). Either way the line before or after a
matched one often holds the answer ("What did you paint?" / "A sunset"), so
a matched passage brings its neighbours: the rows whose ID is one off, of the
same text (windows) or of the same session (turns).
"""

from __future__ import annotations

import re

from ..models import Artifact
from ..retrieval_profile import DEFAULT, RetrievalProfile
from ..text import passage_text, query_terms
from ..vectors.port import Hit
from .scoring import Score, beside_score

# Capitalized word runs ("Young, New South Wales", "Philadelphia Eagles"),
# with the small words that join names ("Bank of England").
_NAME = re.compile(r"[A-Z][\w'’\-]*(?:\s+(?:(?:of|the|de|da|del|van|von|and)\s+)?[A-Z][\w'’\-]*)*")


def neighbour_ids(matched: list[int], limit: int = DEFAULT.neighbours_of) -> list[int]:
    """The IDs one off the best ``limit`` matched passages (not matched
    themselves): read with the matches, in the same batch."""
    best = matched[:limit]
    seen = set(matched)
    out: list[int] = []
    for i in best:
        for j in (i - 1, i + 1):
            if j > 0 and j not in seen:
                seen.add(j)
                out.append(j)
    return out


def adjacent(a: Artifact, b: Artifact) -> bool:
    """``b`` is next to ``a``: one ID off, and part of the same text (two
    windows of one session) or of the same session (two turns). The chunks
    of a long text (summarized: 800 tokens that overlap) are not."""
    if abs(a.id - b.id) != 1:
        return False
    if a.parent_id is not None or b.parent_id is not None:
        return a.parent_id == b.parent_id and a.summary is None and b.summary is None
    return a.session_id is not None and a.session_id == b.session_id


def second_round_terms(
    question: str, seeds: list[str], limit: int = DEFAULT.second_round_terms
) -> list[str]:
    """The terms of the names the seed passages hold that the question does
    not: what a bridge question's second passage is found by ("born in
    Young, New South Wales" for "the city where she was born"). Empty when
    the seeds name nothing new."""
    asked = set(query_terms(question, 1000))
    out: list[str] = []
    for text in seeds:
        for m in _NAME.finditer(text):
            for t in query_terms(m.group(0), 1000):
                if t not in asked and t not in out:
                    out.append(t)
                    if len(out) == limit:
                        return out
    return out


def second_round_text(
    question: str,
    ranked: list[int],
    rows: dict[int, Artifact],
    p: RetrievalProfile = DEFAULT,
) -> str | None:
    """What the second search looks for: the question, and the names the
    best matched passages hold that it does not (``ranked``: the matched
    passages, best first). None when they name nothing new: no second round."""
    seeds = [
        passage_text(rows[i].text, rows[i].speaker)
        for i in ranked[: p.second_round_from]
        if i in rows
    ]
    terms = second_round_terms(question, seeds, p.second_round_terms)
    return f"{question} {' '.join(terms)}" if terms else None


def second_round_ranks(
    hits: list[Hit],
    ranks: dict[int, tuple[int, bool]],
    first: int = DEFAULT.second_round_rank,
    liftable: frozenset[int] = frozenset(),
) -> dict[int, tuple[int, bool]]:
    """The passages the second search found that the first had not, each
    with its rank (found by its text): after the first round's best, in the
    second's order. The first round's own are left as they were, but for
    ``liftable`` ones the first ranked below where the second puts them."""
    out: dict[int, tuple[int, bool]] = {}
    for h in hits:
        at = first + len(out)
        if h.id not in ranks or (h.id in liftable and ranks[h.id][0] > at):
            out[h.id] = (at, True)
    return out


def beside_scores(
    matched: dict[int, float],
    rows: dict[int, Artifact],
    beside: dict[int, Artifact],
    p: RetrievalProfile = DEFAULT,
) -> dict[int, Score]:
    """The rows next to a matched passage (a turn of the same session, a
    window of the same text, one ID off), each with ``p.w_beside`` of the best
    score of a match it is next to; a match next to a better one gets it too
    when it is more than its own. ``matched``: score by passage ID."""
    every = {**beside, **rows}
    out: dict[int, Score] = {}
    for i, s in matched.items():
        a = rows.get(i)
        if a is None:
            continue
        for j in (i - 1, i + 1):
            b = every.get(j)
            if b is None or not adjacent(a, b):
                continue
            got = beside_score(s, i, p)
            if got.total > (out[j].total if j in out else 0.0):
                out[j] = got
    return {j: s for j, s in out.items() if s.total > matched.get(j, 0.0)}


def passage_rank(chunk_hits: list[Hit], summary_hits: list[Hit]) -> dict[int, tuple[int, bool]]:
    """Chunk ID -> (best rank in either list, found by its text)."""
    out: dict[int, tuple[int, bool]] = {}
    for rank, h in enumerate(chunk_hits):
        out.setdefault(h.id, (rank, True))
    for rank, h in enumerate(summary_hits):
        best, by_text = out.get(h.id, (rank, False))
        out[h.id] = (min(best, rank), by_text)
    return out
