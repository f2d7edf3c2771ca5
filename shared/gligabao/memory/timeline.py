"""What new facts do to the live ones: the candidates the invalidate stage is
shown, and the effect of its reply once the interval rules (``temporal``) have
judged each nomination. Pure: the remember steps do the reads and the writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..ai.jsonreply import as_id
from ..models import Edge
from .temporal import Interval, contains, end_on_restatement, judge, overlaps, restates

PER_FACT = 10  # candidates shown per new fact
MAX_CANDIDATES = 60  # and in all (one invalidate call per text)


@dataclass(frozen=True)
class FactView:
    """A new fact as this module needs it. Entity IDs are 0 for an entity
    this call creates (it has no live fact)."""

    source_id: int
    target_id: int
    relation: str
    interval: Interval


def interval_of(edge: Edge) -> Interval:
    return Interval(edge.valid_at, edge.invalid_at)


def restated_period(olds: list[Edge], new: Interval) -> Edge | None:
    """The live edge (same source, relation and target; newest first) that a
    fact states again, or None when the fact is another period of it."""
    for old in olds:  # the period in which the fact starts
        if new.valid_at is not None and contains(interval_of(old), new.valid_at):
            return old
    # A fact whose start is unknown or before the period: the period it meets.
    return next((o for o in olds if overlaps(interval_of(o), new)), None)


def candidates(
    facts: list[FactView], around: list[Edge], similar: list[set[int]], skip: set[int]
) -> list[Edge]:
    """The live facts the invalidate stage is shown: per new fact, those
    between the same entities, those of its source with the same relation
    name, and those of its entities whose text is similar (``similar[i]``:
    edge IDs found by the fact's vector). ``around``: the live edges of the
    text's known entities, newest first."""
    chosen: dict[int, Edge] = {}
    for f, near in zip(facts, similar, strict=True):
        if not (f.source_id or f.target_id):
            continue
        ends = {f.source_id, f.target_id}
        picked = 0
        for e in around:
            if len(chosen) >= MAX_CANDIDATES or picked >= PER_FACT:
                break
            if e.id in skip:
                continue
            touches = f.source_id in (e.source_id, e.target_id) or (
                f.target_id in (e.source_id, e.target_id)
            )
            same_pair = {e.source_id, e.target_id} == ends
            same_kind = e.source_id == f.source_id and e.relation == f.relation
            if (same_pair or same_kind or (touches and e.id in near)) and e.id not in chosen:
                chosen[e.id] = e
                picked += 1
    return sorted(chosen.values(), key=lambda e: e.id, reverse=True)


def _pairs(items: Any, second: str) -> Iterable[tuple[int, int]]:
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            edge_id, index = as_id(item.get("edge_id")), as_id(item.get(second))
            if edge_id is not None and index is not None:
                yield edge_id, index


@dataclass
class Effects:
    """The invalidate reply, after the interval rules.

    * ``superseded``: edge ID -> its new ``invalid_at`` (None: it keeps its
      own); the edge expires.
    * ``ended``: edge ID -> its ``invalid_at``; the edge stays live.
    * ``absorbed``: new fact index -> the live edge it states again (a
      duplicate, or the end of that edge): no new edge for it.
    * ``new_ends``: new fact index -> the ``invalid_at`` it is stored with.
    """

    superseded: dict[int, str | None] = field(default_factory=dict)
    ended: dict[int, str] = field(default_factory=dict)
    absorbed: dict[int, int] = field(default_factory=dict)
    new_ends: dict[int, str] = field(default_factory=dict)


def effects(data: dict[str, Any], facts: list[FactView], shown: list[Edge]) -> Effects:
    """Apply the model's nominations (IDs it was not shown, or fact numbers
    out of range, are ignored) through the interval rules."""
    by_id = {e.id: e for e in shown}
    out = Effects()
    for edge_id, i in _pairs(data.get("duplicates"), "of"):
        if edge_id not in by_id or not 0 <= i < len(facts) or i in out.absorbed:
            continue
        old, new = interval_of(by_id[edge_id]), facts[i].interval
        if not restates(old, new):
            continue  # another period of the same fact: a new edge
        out.absorbed[i] = edge_id
        end = end_on_restatement(old, new)
        if end is not None:
            out.ended[edge_id] = end
    for edge_id, i in _pairs(data.get("invalidated"), "by"):
        if edge_id not in by_id or not 0 <= i < len(facts) or i in out.absorbed:
            continue
        if edge_id in out.superseded or edge_id in out.ended:
            continue
        verdict = judge(interval_of(by_id[edge_id]), facts[i].interval)
        if verdict.kind == "supersede":
            out.superseded[edge_id] = verdict.at
        elif verdict.kind == "end_old" and verdict.at is not None:
            out.ended[edge_id] = verdict.at
            out.absorbed.setdefault(i, edge_id)
        elif verdict.kind == "end_new" and verdict.at is not None:
            prev = out.new_ends.get(i)
            out.new_ends[i] = verdict.at if prev is None else min(prev, verdict.at)
    # A fact absorbed after an earlier nomination ended it: no new edge, no end.
    for i in out.absorbed:
        out.new_ends.pop(i, None)
    return out
