"""The order of the keyword seeds: best score first, then the most recently
updated, then the highest ID (memory/keywords.rank_keywords)."""

from __future__ import annotations

from gligabao.memory.keywords import rank_keywords
from gligabao.models import KeywordHit


def hit(entity_id: int, name: str, updated_at: str, *, term: str = "acme") -> KeywordHit:
    return KeywordHit(entity_id, term, term in name, term not in name, name, updated_at)


def test_best_score_then_newest_then_highest_id() -> None:
    hits = [
        hit(1, "acme", "2024-01-01T00:00:00Z"),  # the whole name: 5 + 3
        hit(2, "acme labs", "2024-03-01T00:00:00Z"),  # a name term: 3
        hit(3, "acme works", "2024-03-01T00:00:00Z"),  # 3, as new as 2: the higher ID
        hit(4, "acme shop", "2024-05-01T00:00:00Z"),  # 3, the newest
        hit(5, "zeta", "2024-09-01T00:00:00Z"),  # the description: 1
    ]
    got = rank_keywords("Where is Acme?", ["acme"], hits, {}, 10)
    assert got == {1: 8, 4: 3, 3: 3, 2: 3, 5: 1}
    assert list(got) == [1, 4, 3, 2, 5]
    assert list(rank_keywords("Where is Acme?", ["acme"], hits, {}, 2)) == [1, 4]
