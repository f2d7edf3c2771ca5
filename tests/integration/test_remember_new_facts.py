"""Facts between entities that are new in the same text (found with the
load test): a new entity has no ID until the write, so the facts step must not
tell facts apart by entity ID."""

from __future__ import annotations

from remember_helpers import ent, extraction, fact, invalidate_prompt, works_at

from conftest import Harness


def test_same_relation_between_new_entities_is_one_edge_each(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Acme"), ent("Bob", "person"), ent("Globex")],
            [fact("Alice", "Acme", "works_at"), fact("Bob", "Globex", "works_at")],
        ),
    )
    out = gb.remember("Alice works at Acme. Bob works at Globex.")
    assert sorted((e["source"], e["relation"], e["target"]) for e in out["edges"]) == [
        ("Alice", "works_at", "Acme"),
        ("Bob", "works_at", "Globex"),
    ]
    assert len(gb.scan("edges")) == 2
    ids = {e["name"]: e["id"] for e in out["entities"]}
    assert {(e["source_id"], e["target_id"]) for e in out["edges"]} == {
        (ids["Alice"], ids["Acme"]),
        (ids["Bob"], ids["Globex"]),
    }


def test_a_fact_stated_twice_in_one_text_is_one_edge(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Acme")],
            [fact("Alice", "Acme", "works_at"), fact("alice", "ACME", "works_at", "Again.")],
        ),
    )
    out = gb.remember("Alice works at Acme. Yes, Alice works at Acme.")
    assert len(out["edges"]) == 1
    assert len(gb.scan("edges")) == 1


def test_invalidate_prompt_names_the_new_entities(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Initech"), ent("Bob", "person"), ent("Globex")],
            [fact("Alice", "Initech", "works_at"), fact("Bob", "Globex", "works_at")],
        ),
    )
    gb.remember("Alice now works at Initech; Bob works at Globex.")
    prompt = invalidate_prompt(gb)
    assert "Alice --works_at--> Initech" in prompt
    assert "Bob --works_at--> Globex" in prompt
