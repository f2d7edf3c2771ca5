"""The name rules of entity resolution: a merge needs a reason besides an
embedding, and conflicting parts never give one."""

from __future__ import annotations

import pytest

from gligabao.memory.names import (
    ALIAS,
    SAME_NAME,
    best_match,
    match_reason,
    nickname_forms,
    parts,
    types_conflict,
)
from gligabao.models import Entity


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Alice Johnson", "alice  johnson"),
        ("Alice Johnson", "ALICE JOHNSON"),
        ("Acme", "Acme Inc."),
        ("Acme", "Acme Corp"),
        ("Globex Corporation", "Globex"),
        ("Alice", "Alice's"),
        ("Alice", "Alice’s"),
        ("Mary-Jane Watson", "Mary Jane Watson"),
        ("José Álvarez", "Jose Alvarez"),
        ("The Overstory", "Overstory"),
        ("Dr. Smith", "Smith"),
    ],
)
def test_same_after_normalisation(a: str, b: str) -> None:
    assert match_reason(a, "", b, "") == SAME_NAME
    assert match_reason(b, "", a, "") == SAME_NAME


@pytest.mark.parametrize(
    ("new", "stored"),
    [
        ("Alice", "Alice Johnson"),  # the first name alone after the full name
        ("Alice Johnson", "Alice Marie Johnson"),  # a middle name left out
        ("J. Smith", "John Smith"),  # an initial
        ("John F. Kennedy", "John Fitzgerald Kennedy"),
        ("Bob", "Robert"),  # a known short form
        ("Robert", "Bob"),  # and its long form
        ("Bob Smith", "Robert Smith"),
        ("Liz", "Elizabeth Moore"),
        ("Dan Haas", "Daniel Haas"),
        ("Trish", "Patricia Quinn"),
    ],
)
def test_alias_person(new: str, stored: str) -> None:
    assert match_reason(new, "person", stored, "person") == ALIAS
    assert match_reason(new, "", stored, "person") == ALIAS


@pytest.mark.parametrize(
    ("new", "stored"),
    [
        ("Alice Johnson", "Alice"),  # says more than the stored name
        ("John Smith", "J. Smith"),  # a stored initial is Jane's as much as John's
        ("Daniel Haas", "Dan"),
    ],
)
def test_a_new_name_never_says_more_than_the_stored_one(new: str, stored: str) -> None:
    # The stored entity keeps its name: a stored "Dan" that took in "Dan
    # Haas" would take in "Dan Brown" next.
    assert match_reason(new, "person", stored, "person") is None


def test_alias_organisation_keeps_its_first_word() -> None:
    assert match_reason("Umbrella", "organization", "Umbrella Health", "company") == ALIAS
    # The longer name may be a branch of it: Acme Labs, Acme Bank, Acme Foods.
    assert match_reason("Acme Labs", "organization", "Acme", "organization") is None
    # The last word alone is a generic noun, not the name.
    assert match_reason("Bank", "organization", "Acme Bank", "organization") is None
    # No short forms or initials for an organisation.
    assert match_reason("A. Bank", "organization", "Acme Bank", "organization") is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Dan Haas", "Hal Haas"),
        ("Maria Garcia", "Mario Garcia"),
        ("Tom Smith", "John Smith"),
        ("Anna Lee", "Hanna Lee"),
        ("Acme Bank", "Acme Foods"),
        ("Alice Johnson", "Alice Smith"),
        ("Haas", "Dan Haas"),  # a surname alone could be any of the family
        ("Dr. Smith", "John Smith"),
        ("John Smith", "John Smith Jr."),  # father and son
        ("John Smith Sr.", "John Smith Jr."),
        ("J.", "John Smith"),  # an initial alone is not enough
        ("Alexander Brandt", "Alexandra Brandt"),  # both "Alex", not each other's
        ("Mario", "Maria Garcia"),
    ],
)
def test_conflicting_parts_never_match(a: str, b: str) -> None:
    assert match_reason(a, "person", b, "person") is None
    assert match_reason(b, "", a, "") is None


def test_a_place_with_a_part_left_out_is_another_place() -> None:
    assert match_reason("Mexico", "country", "Mexico City", "city") is None
    assert match_reason("York", "city", "New York", "city") is None
    assert match_reason("Paris", "city", "paris", "place") == SAME_NAME


def test_different_kinds_never_match_even_with_the_same_name() -> None:
    assert types_conflict("person", "city")
    assert types_conflict("organization", "place")
    assert not types_conflict("company", "organization")
    assert not types_conflict("pet", "dog")
    assert not types_conflict("restaurant", "place")  # a venue is both
    assert not types_conflict("restaurant", "organization")
    assert not types_conflict("hobby", "person")  # an unknown word is no evidence
    assert not types_conflict("", "person")
    assert match_reason("Jordan", "person", "Jordan", "country") is None
    assert match_reason("Amazon", "company", "Amazon", "river") is None
    assert match_reason("Georgia", "state", "Georgia", "person") is None


def test_parts_never_empties_a_name() -> None:
    assert parts("Inc.").tokens == ("inc",)
    assert parts("The").tokens == ("the",)
    assert parts("Dr.").tokens == ("dr",)
    assert parts("John Smith Jr.").generation == frozenset({"jr"})
    assert match_reason("", "", "Alice", "") is None


def test_nickname_forms_come_from_the_maintained_list_one_step_only() -> None:
    assert "robert" in nickname_forms("Bob")
    assert "bob" in nickname_forms("robert")
    assert "alex" in nickname_forms("alexander")
    assert "alexandra" not in nickname_forms("alexander")
    assert nickname_forms("zzyzx") == frozenset()


def _e(i: int, name: str, type_: str = "person") -> Entity:
    return Entity(i, name, type_, "")


def test_best_match_takes_the_one_fit_by_the_strongest_reason() -> None:
    stored = [_e(1, "Alice Johnson"), _e(2, "Hal Haas"), _e(3, "Alice")]
    assert best_match("alice", "person", stored) == (stored[2], SAME_NAME)
    assert best_match("Dan Haas", "person", stored) is None
    assert best_match("Hal", "person", stored) == (stored[1], ALIAS)


def test_best_match_refuses_to_guess_between_two() -> None:
    stored = [_e(1, "Alice Johnson"), _e(2, "Alice Smith")]
    assert best_match("Alice", "person", stored) is None
    # The same entity met twice (by keyword and by vector) is one candidate.
    assert best_match("Alice", "person", [stored[0], stored[0]]) == (stored[0], ALIAS)
