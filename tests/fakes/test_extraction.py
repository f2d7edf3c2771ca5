"""The fakes read the known entities from the product's own extract prompt."""

from __future__ import annotations

from gligabao.ai.prompts import extract_user
from gligabao.models import Entity

from .extraction import Known, known_entities, links, section

REF = "2025-01-31T09:00:00Z"


def _body(prompt: str) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}]}


def test_known_entities_round_trip_the_product_rendering() -> None:
    known = [
        Entity(12, "Robert Smith", "person", "college roommate"),
        Entity(3, "Acme", "", ""),
        Entity(7, "Dr. Ruth Park", "person", "dentist: since 2019"),
    ]
    facts = {12: ["Robert Smith lives in Austin.", "Robert Smith works at Acme."], 3: ["x"]}
    prompt = extract_user("Bob called.", REF, known, facts=facts)
    assert known_entities(prompt) == [
        Known(12, "Robert Smith", "person", "college roommate", tuple(facts[12])),
        Known(3, "Acme", "", "", ("x",)),
        Known(7, "Dr. Ruth Park", "person", "dentist: since 2019", ()),
    ]
    assert section(prompt, "text") == "Bob called."
    assert known_entities(extract_user("Bob called.", REF, [])) == []


def test_links_adds_the_id_of_a_listed_entity_only() -> None:
    reply = {"entities": [{"name": "Bob", "type": "person"}], "edges": []}
    answer = links(reply, {"Bob": "Robert Smith"})
    listed = extract_user("Bob called.", REF, [Entity(12, "Robert Smith", "person", "")])
    assert answer(_body(listed))["entities"] == [{"name": "Bob", "type": "person", "id": 12}]
    unlisted = extract_user("Bob called.", REF, [Entity(4, "Rob Stone", "person", "")])
    assert answer(_body(unlisted))["entities"] == [{"name": "Bob", "type": "person"}]
    assert "id" not in reply["entities"][0]  # the scripted reply itself is left as it was
