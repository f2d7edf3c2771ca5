"""An attribute value against its declared spec (memory/attributes.py), and
the newest-wins merge with its history (models.merge_attributes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from gligabao.ai import prompts
from gligabao.memory.attributes import keep_valid, valid
from gligabao.models import ATTRIBUTE_HISTORY, merge_attributes

TIER = {"type": "string", "enum": ["gold", "silver"]}
WHEN = {"type": "string", "format": "date-time"}


@pytest.mark.parametrize(
    ("value", "spec", "stored"),
    [
        ("gold", TIER, "gold"),
        ("2027-03-01T09:30:00+02:00", WHEN, "2027-03-01T07:30:00Z"),
        ("2027-03-01T09:30:00", WHEN, "2027-03-01T09:30:00Z"),  # no offset: UTC
        (3, {"type": "integer"}, 3),
        (3.0, {"type": "integer"}, 3),
        (2.5, {"type": "number"}, 2.5),
        (True, {"type": "boolean"}, True),
        (" a note ", {"type": "string"}, "a note"),
    ],
)
def test_a_valid_value_is_kept_normalized(value: Any, spec: dict[str, Any], stored: Any) -> None:
    assert valid(value, spec) == (True, stored)


@pytest.mark.parametrize(
    ("value", "spec"),
    [
        ("platinum", TIER),
        ("Gold", TIER),
        ("2027-03-01", WHEN),  # a bare date is no date-time
        ("next spring", WHEN),
        (5, WHEN),
        (2.5, {"type": "integer"}),
        (True, {"type": "integer"}),
        (True, {"type": "number"}),
        (float("nan"), {"type": "number"}),
        ("3", {"type": "number"}),
        ("yes", {"type": "boolean"}),
        ("", {"type": "string"}),
        ("x" * 1001, {"type": "string"}),
        ({"a": 1}, {"type": "string"}),
    ],
)
def test_a_value_that_does_not_fit_is_refused(value: Any, spec: dict[str, Any]) -> None:
    assert valid(value, spec)[0] is False


@dataclass
class _Ex:
    type: str
    attributes: dict[str, Any] = field(default_factory=dict)


def test_keep_valid_matches_the_type_without_case_and_counts_the_dropped() -> None:
    types = {"entity_types": {"Customer": {"attributes": {"tier": TIER}}}}
    ents = [_Ex("customer", {"tier": "gold", "seats": 3}), _Ex("person", {"tier": "gold"})]
    assert keep_valid(ents, types) == 2
    assert [e.attributes for e in ents] == [{"tier": "gold"}, {}]


def test_the_newest_value_wins_and_the_history_keeps_a_few() -> None:
    values: dict[str, Any] = {}
    history: dict[str, list[dict[str, Any]]] = {}
    for i in range(ATTRIBUTE_HISTORY + 3):
        values, history = merge_attributes(values, history, {"tier": f"t{i}"}, f"at{i}")
    assert values == {"tier": f"t{ATTRIBUTE_HISTORY + 2}"}
    assert len(history["tier"]) == ATTRIBUTE_HISTORY
    assert history["tier"][0] == {
        "value": f"t{ATTRIBUTE_HISTORY + 1}",
        "until": f"at{ATTRIBUTE_HISTORY + 2}",
    }
    # the same value again changes nothing
    assert merge_attributes(values, history, dict(values), "later") == (values, history)


def test_the_reply_schema_carries_the_declared_attributes_only_when_there_are_some() -> None:
    assert prompts.extract_schema(None) is prompts.EXTRACT_SCHEMA
    types = {"entity_types": {"Customer": {"attributes": {"tier": {**TIER, "description": "d"}}}}}
    schema = prompts.extract_schema(types)
    item = schema["properties"]["entities"]["items"]["properties"]
    assert item["attributes"]["properties"] == {"tier": TIER}
    assert (
        "attributes" not in prompts.EXTRACT_SCHEMA["properties"]["entities"]["items"]["properties"]
    )
