"""query over graphs built by remember (scripted extract and invalidate
replies): the path the product takes end to end."""

from __future__ import annotations

from typing import Any

from query_helpers import edge_ids, entity_ids, graph_lines, prompt

from conftest import Harness


def extraction(entities: list[tuple[str, str, str]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "entities": [{"name": n, "type": t, "description": d} for n, t, d in entities],
        "edges": edges,
    }


def fact(
    source: str, target: str, relation: str, description: str, **times: str | None
) -> dict[str, Any]:
    return {
        "source": source,
        "target": target,
        "relation": relation,
        "description": description,
        "valid_at": times.get("valid_at"),
        "invalid_at": times.get("invalid_at"),
    }


def test_query_after_remember_sees_only_live_and_ended_facts(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        extraction(
            [("Alice", "person", "engineer"), ("Acme", "organization", ""), ("Paris", "city", "")],
            [
                fact("Alice", "Acme", "works_at", "Alice works at Acme."),
                fact(
                    "Alice",
                    "Paris",
                    "lived_in",
                    "Alice lived in Paris.",
                    valid_at="2019-01-01T00:00:00Z",
                    invalid_at="2021-01-01T00:00:00Z",
                ),
            ],
        ),
    )
    gb.remember(
        "Alice works at Acme. She lived in Paris from 2019 to 2021.",
        reference_time="2024-01-01T00:00:00Z",
    )
    gb.llm.script(
        "extract",
        extraction(
            [("Alice", "person", ""), ("Globex", "organization", "")],
            [
                fact(
                    "Alice",
                    "Globex",
                    "works_at",
                    "Alice works at Globex.",
                    valid_at="2024-06-01T00:00:00Z",
                )
            ],
        ),
    )
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    gb.remember("Alice now works at Globex.", reference_time="2024-06-01T00:00:00Z")
    embedded = len(gb.emb.inputs())

    # The question's vector matches the superseded fact's text exactly.
    gb.emb.alias("Where does Alice work?", "works_at: Alice works at Acme.", 1.0)
    gb.llm.script("query", {"answer": "Alice works at Globex.", "entities": [1], "edges": [1, 3]})
    out = gb.query("Where does Alice work?", session_id="chat-1")
    assert gb.emb.inputs()[embedded:] == ["Where does Alice work?"]

    text = prompt(gb)
    assert edge_ids(text) == [2, 3]  # the Acme edge (1) is superseded
    assert entity_ids(text) == [1, 3, 4]  # Alice, Paris, Globex (Acme only came with edge 1)
    lines = graph_lines(text)
    assert "[entity 1] Alice (person): engineer" in lines
    assert (
        "[edge 2] Alice(1) --lived_in--> Paris(3): Alice lived in Paris. "
        "[valid_at=2019-01-01T00:00:00Z, invalid_at=2021-01-01T00:00:00Z]"
    ) in lines
    assert (
        "[edge 3] Alice(1) --works_at--> Globex(4): Alice works at Globex. "
        "[valid_at=2024-06-01T00:00:00Z]"
    ) in lines
    # No superseded fact in the graph. The raw texts the facts were stated in
    # are passages now, each with its date, so the old job may be read there
    # as what was said on 2024-01-01.
    assert not [line for line in lines if "Acme" in line]
    assert "[passage 1] 2024-01-01T00:00:00Z\nAlice works at Acme." in text

    assert out["session_id"] == "chat-1"
    assert out["answer"] == "Alice works at Globex."
    ev = out["evidence"]
    assert [e["id"] for e in ev["entities"]] == [1, 4]
    [edge] = ev["edges"]
    assert edge["id"] == 3 and edge["source"] == "Alice" and edge["target"] == "Globex"
    assert edge["artifact_id"] == 2  # the text it was stated in
    assert edge["valid_at"] == "2024-06-01T00:00:00Z" and edge["invalid_at"] is None
    assert ev["passages"] == []
