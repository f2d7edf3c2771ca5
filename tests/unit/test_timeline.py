"""The invalidate stage's reply after the interval rules, and the candidates
it is shown (pure functions of memory/timeline.py)."""

from __future__ import annotations

from gligabao.memory.temporal import Interval
from gligabao.memory.timeline import FactView, candidates, effects, restated_period
from gligabao.models import Edge

Y2015, Y2016, Y2020 = "2015-01-01T00:00:00Z", "2016-01-01T00:00:00Z", "2020-01-01T00:00:00Z"
Y2023, Y2024 = "2023-01-01T00:00:00Z", "2024-01-01T00:00:00Z"

ACME = Edge(1, 10, 20, "works_at", valid_at=Y2020)  # Alice -> Acme
PARIS = Edge(2, 10, 30, "lives_in", valid_at=Y2020)  # Alice -> Paris
BOB = Edge(3, 40, 20, "works_at", valid_at=Y2020)  # Bob -> Acme
KNOWS = Edge(4, 10, 40, "knows", valid_at=Y2020)  # Alice -> Bob


def view(src: int, dst: int, rel: str, start: str | None, end: str | None = None) -> FactView:
    return FactView(src, dst, rel, Interval(start, end))


def test_candidates_are_per_entity_and_kind() -> None:
    around = [KNOWS, BOB, PARIS, ACME]  # newest first
    globex = view(10, 50, "works_at", Y2024)  # Alice -> Globex (a new entity would be 0)
    assert candidates([globex], around, [set()], set()) == [ACME]  # same source and relation
    left = view(10, 20, "left", Y2024)  # same ends, another relation
    assert candidates([left], around, [set()], set()) == [ACME]
    employed = view(10, 50, "employed_by", Y2024)  # found only by its text
    assert candidates([employed], around, [{1, 3}], set()) == [ACME]  # Bob's edge: not Alice's
    assert candidates([globex], around, [set()], {1}) == []  # restated ones are not shown
    new_entities = view(0, 0, "works_at", Y2024)
    assert candidates([new_entities], around, [{1}], set()) == []


def test_effects_judge_each_nomination() -> None:
    facts = [
        view(10, 50, "works_at", Y2015, Y2016),  # 0: an old job, told late
        view(10, 60, "works_at", Y2024),  # 1: a later job
        view(10, 20, "employed_by", None, Y2024),  # 2: "no longer at Acme since 2024"
    ]
    shown = [ACME, PARIS]
    fx = effects({"invalidated": [{"edge_id": 1, "by": 0}]}, facts, shown)
    assert (fx.superseded, fx.ended, fx.absorbed, fx.new_ends) == ({}, {}, {}, {})
    fx = effects({"invalidated": [{"edge_id": 1, "by": 1}]}, facts, shown)
    assert fx.superseded == {1: Y2024}
    fx = effects({"invalidated": [{"edge_id": 1, "by": 2}]}, facts, shown)
    assert (fx.ended, fx.absorbed, fx.superseded) == ({1: Y2024}, {2: 1}, {})
    fx = effects({"duplicates": [{"edge_id": 1, "of": 2}]}, facts, shown)
    assert (fx.ended, fx.absorbed) == ({1: Y2024}, {2: 1})
    # a duplicate of another period is not absorbed
    fx = effects({"duplicates": [{"edge_id": 1, "of": 0}]}, facts, shown)
    assert fx.absorbed == {}
    # out of order: the live fact starts later, the new one is stored ended
    early = [view(10, 50, "works_at", Y2015)]
    fx = effects({"invalidated": [{"edge_id": 1, "by": 0}]}, early, shown)
    assert (fx.superseded, fx.new_ends) == ({}, {0: Y2020})
    # IDs not shown, numbers out of range, junk: ignored
    junk = {"invalidated": [{"edge_id": 9, "by": 1}, {"edge_id": 1, "by": 7}, "x", {"by": 1}]}
    fx = effects(junk, facts, shown)
    assert (fx.superseded, fx.ended, fx.absorbed) == ({}, {}, {})


def test_restated_period() -> None:
    first = Edge(1, 10, 20, "works_at", valid_at=Y2015, invalid_at=Y2020)
    second = Edge(2, 10, 20, "works_at", valid_at=Y2023)
    olds = [second, first]  # newest first
    assert restated_period(olds, Interval(Y2024, None)) is second
    assert restated_period(olds, Interval(Y2016, None)) is first
    assert restated_period(olds, Interval(None, Y2024)) is second  # ended, start unknown
    assert restated_period(olds, Interval(Y2020, Y2023)) is None  # the gap between: new
