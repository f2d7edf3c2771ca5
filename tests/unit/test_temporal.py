"""The interval rules, case by case (past, present, future, open and closed
intervals, equal starts, missing dates)."""

from __future__ import annotations

import pytest

from gligabao.memory.temporal import (
    Interval,
    Verdict,
    contains,
    end_on_restatement,
    fact_interval,
    judge,
    ordered,
    overlaps,
    restates,
)

REF = "2025-06-01T00:00:00Z"
Y2010, Y2015, Y2016, Y2018 = (f"{y}-01-01T00:00:00Z" for y in (2010, 2015, 2016, 2018))
Y2020, Y2023, Y2024, Y2027 = (f"{y}-01-01T00:00:00Z" for y in (2020, 2023, 2024, 2027))


def iv(start: str | None, end: str | None = None) -> Interval:
    return Interval(start, end)


@pytest.mark.parametrize(
    ("valid_at", "invalid_at", "expected"),
    [
        # stated as current, no date: holds from the reference time
        (None, None, iv(REF)),
        ("", "", iv(REF)),
        ("not a date", None, iv(REF)),
        # dated start, open
        ("2023-01-01", None, iv(Y2023)),
        # closed interval in the past
        (Y2015, Y2016, iv(Y2015, Y2016)),
        # ended, start unknown: valid_at null, never the reference time
        (None, Y2020, iv(None, Y2020)),
        # ends in the future, start unknown: holds from now until then
        (None, Y2027, iv(REF, Y2027)),
        # future start
        (Y2027, None, iv(Y2027)),
        # start after end: the start is dropped, the order holds
        (Y2020, Y2015, iv(None, Y2015)),
        # offsets are brought to UTC
        ("2023-01-01T02:00:00+02:00", None, iv(Y2023)),
    ],
)
def test_fact_interval(valid_at: str | None, invalid_at: str | None, expected: Interval) -> None:
    got = fact_interval(valid_at, invalid_at, REF)
    assert got == expected
    assert ordered(got)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # reproduction: "In 2015 Alice worked at Globex for a year" after
        # "Alice works at Acme since 2023": ended before, closes nothing
        (iv(Y2023), iv(Y2015, Y2016), Verdict("none")),
        # present: a new employer from 2024 supersedes the open one from 2023
        (iv(Y2023), iv(Y2024), Verdict("supersede", Y2024)),
        # equal starts: the newer knowledge wins
        (iv(Y2023), iv(Y2023), Verdict("supersede", Y2023)),
        # both starts unknown: the newer wins, the old keeps its own end
        (iv(None), iv(None), Verdict("supersede", None)),
        # a closed old interval overlapped by a later start is cut there
        (iv(Y2015, Y2020), iv(Y2018), Verdict("supersede", Y2018)),
        # future: a move planned for 2027 supersedes from 2027
        (iv(Y2023), iv(Y2027), Verdict("supersede", Y2027)),
        # the old fact ended before the new began: nothing
        (iv(Y2010, Y2015), iv(Y2016), Verdict("none")),
        # touching ends do not overlap (half-open intervals)
        (iv(Y2010, Y2015), iv(Y2015), Verdict("none")),
        # out of order: the live fact starts later, the new one ends there
        (iv(Y2023), iv(Y2015), Verdict("end_new", Y2023)),
        (iv(Y2023), iv(Y2015, Y2024), Verdict("end_new", Y2023)),
        # a known-start old fact vs a new fact whose start is unknown and
        # open: the old starts later
        (iv(Y2023), iv(None), Verdict("end_new", Y2023)),
        # ended fact, no start: ends the fact that held then
        (iv(Y2018), iv(None, Y2020), Verdict("end_old", Y2020)),
        (iv(None), iv(None, Y2020), Verdict("end_old", Y2020)),
        (iv(Y2015, Y2024), iv(None, Y2020), Verdict("end_old", Y2020)),
        # ... but not one that began after that end
        (iv(Y2023), iv(None, Y2020), Verdict("none")),
        # ... nor one that had already ended by then
        (iv(Y2010, Y2015), iv(None, Y2020), Verdict("none")),
    ],
)
def test_judge(old: Interval, new: Interval, expected: Verdict) -> None:
    verdict = judge(old, new)
    assert verdict == expected
    # whatever the verdict, the edges it writes keep valid_at <= invalid_at
    if verdict.kind == "supersede":
        assert ordered(Interval(old.valid_at, verdict.at or old.invalid_at))
    if verdict.kind == "end_old":
        assert ordered(Interval(old.valid_at, verdict.at))
    if verdict.kind == "end_new":
        assert ordered(Interval(new.valid_at, verdict.at))


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (iv(Y2015, Y2016), iv(Y2023), False),
        (iv(Y2015), iv(Y2023), True),
        (iv(None, Y2020), iv(Y2018), True),
        (iv(None, Y2020), iv(Y2020), False),
        (iv(None), iv(None), True),
        (iv(Y2015, Y2020), iv(Y2016, Y2018), True),
    ],
)
def test_overlaps_is_symmetric(a: Interval, b: Interval, expected: bool) -> None:
    assert overlaps(a, b) is expected
    assert overlaps(b, a) is expected
    assert restates(a, b) is expected


@pytest.mark.parametrize(
    ("interval", "instant", "expected"),
    [
        (iv(Y2015, Y2020), Y2015, True),  # the start is included
        (iv(Y2015, Y2020), Y2020, False),  # the end is not
        (iv(Y2015, Y2020), Y2018, True),
        (iv(Y2015, Y2020), Y2010, False),  # began after the instant
        (iv(None, Y2020), Y2010, True),  # unknown start
        (iv(Y2023), Y2027, True),  # open
        (iv(Y2023), Y2020, False),
    ],
)
def test_contains(interval: Interval, instant: str, expected: bool) -> None:
    assert contains(interval, instant) is expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (iv(Y2018), iv(None, Y2020), Y2020),  # "left Acme in 2020" restated
        (iv(Y2018, Y2020), iv(None, Y2024), None),  # already ended: unchanged
        (iv(Y2018), iv(Y2018), None),  # no end stated
        (iv(Y2023), iv(None, Y2020), None),  # an end before its start: no
    ],
)
def test_end_on_restatement(old: Interval, new: Interval, expected: str | None) -> None:
    assert end_on_restatement(old, new) == expected
