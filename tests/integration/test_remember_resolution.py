"""Entity resolution through `remember`: which stored entity each name is,
and why (the ``match`` of each entity in the response)."""

from __future__ import annotations

from typing import Any

from remember_helpers import ent, extract_prompt, extraction, fact

from conftest import Harness
from fakes.extraction import known_entities, links


def _entities(out: dict[str, Any]) -> list[tuple[int, str, bool, str | None]]:
    return [(e["id"], e["name"], e["created"], e["match"]) for e in out["entities"]]


def test_the_same_name_merges_and_says_so(gb: Harness) -> None:
    gb.llm.script("extract", extraction([ent("Acme Inc.", "organization", "anvils")]))
    gb.remember("Acme Inc. makes anvils.")
    gb.llm.script("extract", extraction([ent("Acme", "company", "hiring")]))
    out = gb.remember("Acme is hiring.")
    assert _entities(out) == [(1, "Acme Inc.", False, "same name")]
    assert len(gb.scan("entities")) == 1


def test_the_model_links_what_the_rules_refuse(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        extraction(
            [ent("Diego", "person", "friend"), ent("Denver", "city")],
            [fact("Diego", "Denver", "lives_in", "Diego lives in Denver.")],
        ),
    )
    gb.remember("My friend Diego lives in Denver.")
    # "Diego Morales" says more than the stored "Diego": no rule merges it,
    # the model does, having seen the candidate and its fact.
    reply = extraction([ent("Diego Morales", "person", "bike shop owner")])
    gb.llm.script("extract", links(reply, {"Diego Morales": "Diego"}))
    calls = gb.llm.calls()
    out = gb.remember("Diego Morales opened a bike shop.")
    assert gb.llm.calls() - calls == 1  # the decision rides on the extraction call
    assert _entities(out) == [(1, "Diego", False, "model")]
    [diego] = [k for k in known_entities(extract_prompt(gb)) if k.id == 1]
    assert diego.type == "person"
    assert diego.facts == ("Diego lives in Denver.",)


def test_without_the_model_a_longer_name_is_a_new_entity(gb: Harness) -> None:
    gb.llm.script("extract", extraction([ent("Diego", "person")]))
    gb.remember("Diego fixed my bike.")
    gb.llm.script("extract", extraction([ent("Diego Morales", "person")]))
    out = gb.remember("Diego Morales opened a bike shop.")
    assert _entities(out) == [(2, "Diego Morales", True, None)]


def test_an_alias_by_a_known_short_form(gb: Harness) -> None:
    gb.llm.script("extract", extraction([ent("Robert Smith", "person", "roommate")]))
    gb.remember("Robert Smith is my college roommate.")
    gb.llm.script("extract", extraction([ent("Bob", "person")]))
    out = gb.remember("Bob called last night.")
    assert _entities(out) == [(1, "Robert Smith", False, "alias")]
    # "Bob" shares no word with "Robert Smith": its short form found it.
    assert "[entity 1] Robert Smith (person)" in extract_prompt(gb)


def test_a_model_id_it_was_not_shown_is_no_reason(gb: Harness) -> None:
    gb.llm.script("extract", extraction([ent("Dan Haas", "person")]))
    gb.remember("Dan Haas fixed our roof.")
    # An ID never listed, a quoted one, and one that is no number at all.
    gb.llm.script("extract", extraction([ent("Hal Haas", "person", id_=999)]))
    assert _entities(gb.remember("Hal Haas teaches piano."))[0][2:] == (True, None)
    gb.llm.script(
        "extract", {"entities": [{"name": "Daniel", "type": "person", "id": "1"}], "edges": []}
    )
    assert _entities(gb.remember("Daniel Haas called."))[0] == (1, "Dan Haas", False, "model")
    gb.llm.script(
        "extract", {"entities": [{"name": "Hal Haas", "type": "person", "id": "x"}], "edges": []}
    )
    assert _entities(gb.remember("Hal Haas again."))[0] == (2, "Hal Haas", False, "same name")


def test_namesakes_of_two_kinds_stay_two(gb: Harness) -> None:
    gb.llm.script("extract", extraction([ent("Jordan", "person", "coworker")]))
    gb.remember("Jordan is my new coworker.")
    gb.llm.script("extract", extraction([ent("Jordan", "country", "trip")]))
    out = gb.remember("We fly to Jordan in May.")
    assert _entities(out) == [(2, "Jordan", True, None)]
    assert len(gb.scan("names")) == 1  # the person holds the name; the country is found by terms
    gb.llm.script("extract", extraction([ent("Jordan", "country", "Petra")]))
    out = gb.remember("Jordan has Petra.")
    assert _entities(out) == [(2, "Jordan", False, "same name")]
    gb.llm.script("extract", extraction([ent("Jordan", "person", "lunch")]))
    assert _entities(gb.remember("Lunch with Jordan."))[0] == (1, "Jordan", False, "same name")
    assert len(gb.scan("entities")) == 2
