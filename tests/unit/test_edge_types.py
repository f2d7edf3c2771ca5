"""Typing a fact by the dataset's edge types (memory/attributes.py, issue 47):
the declared name between allowed ends, else the free form; the filter that
tells a typed fact from a free one spelled like it; the reply schema."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gligabao.ai.prompts import EXTRACT_SCHEMA, extract_schema
from gligabao.memory.attributes import relation_filter, type_facts

TYPES: dict[str, Any] = {
    "entity_types": {"Customer": {}, "Account": {}},
    "edge_types": {
        "OWNS_ACCOUNT": {
            "source_types": ["Customer"],
            "target_types": ["Account"],
            "attributes": {"share": {"type": "number"}},
        },
        "KNOWS": {"attributes": {}},  # no ends listed: any
    },
}


@dataclass
class Named:
    norm: str
    type: str


@dataclass
class Stated:
    source: str
    target: str
    relation: str
    attributes: dict[str, Any] = field(default_factory=dict)


NAMED = [Named("acme", "customer"), Named("savings", "account"), Named("bob", "person")]


def test_a_declared_edge_type_between_allowed_ends_is_typed() -> None:
    f = Stated("acme", "savings", "owns_account", {"share": 0.5, "role": "x"})
    assert type_facts(NAMED, [f], TYPES) == (1, 0)
    assert (f.relation, f.attributes) == ("OWNS_ACCOUNT", {"share": 0.5})


def test_wrong_ends_or_an_undeclared_relation_stay_free() -> None:
    wrong = Stated("bob", "savings", "owns_account", {"share": 1})
    free = Stated("bob", "acme", "works_at", {"since": "2020"})
    unknown_end = Stated("acme", "nobody", "owns_account")  # not in the entities list
    assert type_facts(NAMED, [wrong, free, unknown_end], TYPES) == (2, 2)
    assert [s.relation for s in (wrong, free, unknown_end)] == [
        "owns_account",
        "works_at",
        "owns_account",
    ]
    assert wrong.attributes == free.attributes == {}


def test_an_edge_type_without_ends_takes_any() -> None:
    f = Stated("bob", "acme", "knows")
    assert type_facts(NAMED, [f], TYPES) == (0, 0)
    assert f.relation == "KNOWS"


def test_without_a_schema_nothing_is_typed() -> None:
    f = Stated("acme", "savings", "owns_account", {"share": 0.5})
    assert type_facts(NAMED, [f], None) == (1, 0)
    assert f.relation == "owns_account"


def test_the_filter_keeps_typed_facts_of_a_declared_name() -> None:
    keep = relation_filter(frozenset({"owns_account", "works_at"}), TYPES)
    assert keep(Stated("a", "b", "OWNS_ACCOUNT"))
    assert not keep(Stated("a", "b", "owns_account"))  # the free form of a declared type
    assert keep(Stated("a", "b", "works_at"))  # a free relation, not declared
    assert not keep(Stated("a", "b", "likes"))
    # no schema: a relation is its name, whatever the case
    assert relation_filter(frozenset({"owns_account"}), None)(Stated("a", "b", "owns_account"))


def test_the_reply_schema_asks_for_edge_attributes_only_when_declared() -> None:
    schema = extract_schema(TYPES)
    edge = schema["properties"]["edges"]["items"]["properties"]
    assert edge["attributes"]["properties"] == {"share": {"type": "number"}}
    assert "attributes" not in schema["properties"]["entities"]["items"]["properties"]
    assert extract_schema({"edge_types": {"KNOWS": {}}}) is EXTRACT_SCHEMA
