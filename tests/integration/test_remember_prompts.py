"""What the extract and invalidate stages are told: each rule of the system
prompts, and the context of the user message (speaker, the session's previous
texts, the relation names in use), through HTTP to the fake LLM."""

from __future__ import annotations

import re

import pytest
from remember_helpers import (
    assert_nothing_written,
    ent,
    extract_prompt,
    extraction,
    fact,
    works_at,
)

from conftest import Harness
from gligabao.ai import prompts


def extract_system(gb: Harness) -> str:
    system = gb.llm.requests_for("extract")[-1]["system"]
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


# One phrase per rule: the test fails when a rule is dropped from the prompt.
EXTRACT_RULES = {
    "speaker and first person": '"I", "me", "my" are the speaker',
    "no speaker given": 'Without a <speaker>, "I" is the entity "user"',
    "pronouns": "an edge\n  never has a pronoun as source or target",
    "references resolved through the session": "using <previous_messages>",
    "present-tense relations": "in the present tense for a state",
    "time not in the relation": "not worked_at",
    "reuse relation names": "Reuse a relation from <known_relations>",
    "no self-loops": "Never an edge from an entity to itself",
    "bare years": 'A bare year is its first instant ("in 2020" -> "2020-01-01T00:00:00Z")',
    "relative dates": "Resolve relative dates",
    "ended facts": "valid_at its start if the\n  text gives one, else null",
    "no dates from other events": "never take a date from another event",
    "no reference time as start": "never use <reference_time> as a start",
    "known entity ids only": 'Add "id" only for a listed entity',
}
INVALIDATE_RULES = {
    "contradiction across relation names": "the relation names may differ",
    "duplicates": "is a duplicate of it",
    "time left to the code": "Time is judged by the code",
    "duplicates key": '"duplicates": [{"edge_id": <edge ID>, "of": <new fact number>}]',
}


@pytest.mark.parametrize("rule", sorted(EXTRACT_RULES))
def test_the_extract_prompt_states_each_rule(gb: Harness, rule: str) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    assert EXTRACT_RULES[rule] in extract_system(gb)


@pytest.mark.parametrize("rule", sorted(INVALIDATE_RULES))
def test_the_invalidate_prompt_states_each_rule(rule: str) -> None:
    assert INVALIDATE_RULES[rule] in prompts.INVALIDATE_SYSTEM


def test_no_copyable_id_in_the_example_reply() -> None:
    assert not re.search(r'"id":\s*\d', prompts.EXTRACT_SYSTEM)
    assert not re.search(r'"(edge_id|by|of)":\s*\d', prompts.INVALIDATE_SYSTEM)


def test_structured_replies_are_asked_for(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    body = gb.llm.requests_for("extract")[-1].body
    assert body["tools"][0]["input_schema"] == prompts.EXTRACT_SCHEMA
    assert body["tool_choice"]["type"] == "tool"
    # with extended thinking, JSON text (the API refuses a forced tool then)
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.", reasoning={"extract": "low"})
    body = gb.llm.requests_for("extract")[-1].body
    assert "tools" not in body and body["thinking"]["type"] == "enabled"


def test_the_speaker_is_given_to_extraction(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        extraction(
            [ent("Dana", "person"), ent("Lyon", "city")], [fact("Dana", "Lyon", "lives_in")]
        ),
    )
    out = gb.remember("I moved to Lyon.", speaker="Dana")
    assert "<speaker>Dana</speaker>" in extract_prompt(gb)
    assert [(e["source"], e["target"]) for e in out["edges"]] == [("Dana", "Lyon")]
    gb.remember("Nothing to say.")
    assert "<speaker>" not in extract_prompt(gb)


def test_the_sessions_previous_texts_are_given_to_extraction(gb: Harness) -> None:
    gb.remember("My sister Maya lives in Boston.", session_id="s1", speaker="Dana")
    gb.remember("Unrelated text of another session.", session_id="s2")
    gb.remember("She is a nurse.", session_id="s1", speaker="Dana")
    prompt = extract_prompt(gb)
    block = prompt.split("<previous_messages>")[1].split("</previous_messages>")[0]
    assert block.strip() == "<message>Dana: My sister Maya lives in Boston.</message>"
    assert "<text>\nShe is a nurse.\n</text>" in prompt
    gb.remember("And she runs.", session_id="s1")
    block = extract_prompt(gb).split("<previous_messages>")[1]
    assert block.index("Maya lives in Boston") < block.index("She is a nurse")
    gb.remember("No session.")
    assert "<previous_messages>" not in extract_prompt(gb)


def test_the_relations_in_use_are_given_to_extraction(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Acme"), ent("Lyon", "city")],
            [fact("Alice", "Acme", "works_at"), fact("Alice", "Lyon", "lives_in")],
        ),
    )
    gb.remember("Alice works at Acme and lives in Lyon.")
    gb.remember("Alice is learning Italian.")
    assert "<known_relations>lives_in, works_at</known_relations>" in extract_prompt(gb) or (
        "<known_relations>works_at, lives_in</known_relations>" in extract_prompt(gb)
    )


@pytest.mark.parametrize("speaker", ["", "   ", 5, "x" * 201, "Dana\n", ["Dana"]])
def test_a_bad_speaker_is_400_and_nothing_is_written(gb: Harness, speaker: object) -> None:
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Hi.", "speaker": speaker})
    assert r.status == 400, r.body
    assert "speaker" in r.body["error"]
    assert gb.llm.calls() == 0
    assert_nothing_written(gb)
