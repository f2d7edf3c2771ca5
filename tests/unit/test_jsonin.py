"""JSON within bounds (api/jsonin.py): what Python's json would answer with
a ValueError or a RecursionError (a 500 before) is UnsafeJson, bad input."""

from __future__ import annotations

import json

import pytest

from gligabao.api.jsonin import MAX_DEPTH, MAX_DIGITS, UnsafeJson, loads


@pytest.mark.parametrize(
    "raw",
    [
        "1" * (MAX_DIGITS + 1),
        "-" + "9" * (MAX_DIGITS + 1),
        '{"a": ' + "7" * 5000 + "}",
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        "[" * 30000 + "]" * 30000,
        '{"a": ' * 40 + "1" + "}" * 40,
    ],
)
def test_past_the_bounds_is_unsafe(raw: str) -> None:
    with pytest.raises(UnsafeJson):
        loads(raw)


@pytest.mark.parametrize(
    "raw",
    ["1" * MAX_DIGITS, "[" * MAX_DEPTH + "]" * MAX_DEPTH, '{"a": [1, 2.5, "x", null]}', "1e400"],
)
def test_within_the_bounds_is_parsed_as_json_does(raw: str) -> None:
    assert loads(raw) == json.loads(raw)


def test_what_is_not_json_stays_a_decode_error() -> None:
    with pytest.raises(json.JSONDecodeError):
        loads("{nope")
