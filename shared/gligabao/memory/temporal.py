"""The interval rules of the bi-temporal graph: the model proposes, this decides.

A fact holds over the half-open interval ``[valid_at, invalid_at)``: a missing
``valid_at`` is an unknown start (taken as "always before"), a missing
``invalid_at`` an open end. Timestamps are RFC 3339 UTC strings of one format
(``clock.fmt``), so they compare as strings.

Pure functions only: no I/O, no model, no store. The remember steps call them
on what the extraction and invalidate stages nominated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .. import clock


@dataclass(frozen=True)
class Interval:
    valid_at: str | None
    invalid_at: str | None


def fact_interval(valid_at: str | None, invalid_at: str | None, reference_time: str) -> Interval:
    """The interval of an extracted fact from the model's dates.

    A fact stated without any date holds from the reference time. A fact that
    ended (by the reference time) with no stated start has an unknown start:
    the reference time would put its start after its end. A start after the
    end is a misreading; the end, the more specific claim, is kept."""
    start, end = clock.normalize(valid_at), clock.normalize(invalid_at)
    if start is not None and end is not None and start > end:
        start = None
    if start is None and (end is None or end > reference_time):
        start = reference_time  # stated as current (possibly until a future end)
    return Interval(start, end)


def overlaps(a: Interval, b: Interval) -> bool:
    """True when the two half-open intervals share an instant."""
    a_before_b_ends = b.invalid_at is None or a.valid_at is None or a.valid_at < b.invalid_at
    b_before_a_ends = a.invalid_at is None or b.valid_at is None or b.valid_at < a.invalid_at
    return a_before_b_ends and b_before_a_ends


def contains(interval: Interval, instant: str) -> bool:
    """True when the fact held at ``instant`` (its start included, its end not)."""
    started = interval.valid_at is None or interval.valid_at <= instant
    return started and (interval.invalid_at is None or instant < interval.invalid_at)


def _starts_no_earlier(a: Interval, b: Interval) -> bool:
    """a starts at or after b (an unknown start is the earliest)."""
    if a.valid_at is None:
        return b.valid_at is None
    return b.valid_at is None or a.valid_at >= b.valid_at


Kind = Literal["none", "supersede", "end_old", "end_new"]


@dataclass(frozen=True)
class Verdict:
    """What a nominated contradiction does.

    * ``none``: nothing (the intervals do not meet).
    * ``supersede``: the old fact expires; its ``invalid_at`` becomes ``at``
      (``None``: it keeps its own).
    * ``end_old``: the new fact is the end of the old one (an ended fact with
      no known start): the old fact's ``invalid_at`` becomes ``at``; the new
      fact is not a fact of its own.
    * ``end_new``: the old fact started later (a text remembered out of
      order): the new fact is stored already ended, at ``at``.
    """

    kind: Kind
    at: str | None = None


NOTHING = Verdict("none")


def judge(old: Interval, new: Interval) -> Verdict:
    """The effect of a new fact that the model says contradicts a live one."""
    if new.valid_at is None and new.invalid_at is not None:
        # "Alice left Acme in 2020": ends the old fact when that was still
        # holding then, and had started before.
        started_before = old.valid_at is None or old.valid_at < new.invalid_at
        still_holding = old.invalid_at is None or old.invalid_at > new.invalid_at
        if started_before and still_holding:
            return Verdict("end_old", new.invalid_at)
        return NOTHING
    if not overlaps(old, new):
        return NOTHING  # one ended before the other began
    if _starts_no_earlier(new, old):
        # The same start: the newer knowledge wins. The old end is never put
        # before the old start (new.valid_at >= old.valid_at here).
        return Verdict("supersede", new.valid_at)
    # The live fact starts later: the new one ended when it began.
    return Verdict("end_new", old.valid_at)


def restates(old: Interval, new: Interval) -> bool:
    """A new fact the model calls a duplicate of a live one restates it only
    when their periods meet; else it is another period of the same fact."""
    return overlaps(old, new)


def end_on_restatement(old: Interval, new: Interval) -> str | None:
    """The ``invalid_at`` a restatement gives an open fact: the new fact's end,
    when it has one after the old start. None: the old fact is unchanged."""
    if old.invalid_at is not None or new.invalid_at is None:
        return None
    if old.valid_at is not None and new.invalid_at < old.valid_at:
        return None
    return new.invalid_at


def ordered(interval: Interval) -> bool:
    """The invariant of every edge: ``valid_at <= invalid_at`` when both are set."""
    return (
        interval.valid_at is None
        or interval.invalid_at is None
        or interval.valid_at <= interval.invalid_at
    )
