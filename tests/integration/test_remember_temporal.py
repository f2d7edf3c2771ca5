"""remember over time, through HTTP and the fake LLM: the interval rules
decide what the invalidate stage nominates; duplicates; ended facts; the
candidates per entity; self-loops."""

from __future__ import annotations

from typing import Any

from remember_helpers import ent, extraction, fact, invalidate_prompt, key, works_at

from conftest import Harness

Y2015, Y2016, Y2020 = "2015-01-01T00:00:00Z", "2016-01-01T00:00:00Z", "2020-01-01T00:00:00Z"
Y2023, Y2024 = "2023-01-01T00:00:00Z", "2024-01-01T00:00:00Z"
REF = "2025-01-31T09:00:00Z"


def at_acme(relation: str, **kw: Any) -> dict[str, Any]:
    """The extraction of a fact between Alice and Acme."""
    return extraction(
        [ent("Alice", "person"), ent("Acme", "organization")],
        [fact("Alice", "Acme", relation, **kw)],
    )


def ordered(gb: Harness) -> None:
    """Every edge: valid_at <= invalid_at when both are set."""
    for row in gb.scan("edges"):
        valid, invalid = row.get("valid_at", {}).get("S"), row.get("invalid_at", {}).get("S")
        assert valid is None or invalid is None or valid <= invalid, row


def test_an_old_fact_remembered_later_closes_nothing(gb: Harness) -> None:
    """The first reproduction: "In 2015 Alice worked at Globex for a year",
    after "Alice works at Acme since 2023", left Acme live."""
    gb.llm.script("extract", works_at(valid_at=Y2023))
    gb.remember("Alice works at Acme since 2023.", reference_time=REF)
    gb.llm.script("extract", works_at("Alice", "Globex", valid_at=Y2015, invalid_at=Y2016))
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}], "duplicates": []})
    out = gb.remember("In 2015 Alice worked at Globex for a year.", reference_time=REF)
    assert gb.llm.calls("invalidate") == 1  # nominated...
    assert out["invalidated"] == []  # ...and refused by the intervals
    acme = gb.graph.get_edges(key(), [1])[1]
    assert (acme.valid_at, acme.invalid_at, acme.expired_at) == (Y2023, None, None)
    [globex] = out["edges"]
    assert (globex["valid_at"], globex["invalid_at"]) == (Y2015, Y2016)
    ordered(gb)


def test_an_ended_fact_without_a_start_has_no_valid_at(gb: Harness) -> None:
    """The second reproduction: "Alice left Initech in 2020" got valid_at =
    the reference time, after its invalid_at."""
    gb.llm.script("extract", works_at("Alice", "Initech", invalid_at=Y2020))
    out = gb.remember("Alice left Initech in 2020.", reference_time=REF)
    [edge] = out["edges"]
    assert (edge["valid_at"], edge["invalid_at"]) == (None, Y2020)
    ordered(gb)


def test_a_later_start_supersedes_from_that_start(gb: Harness) -> None:
    gb.llm.script("extract", works_at(valid_at=Y2023))
    gb.remember("Alice works at Acme since 2023.", reference_time=REF)
    gb.llm.script("extract", works_at("Alice", "Globex", valid_at=Y2024))
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    out = gb.remember("Alice joined Globex in 2024.", reference_time=REF)
    [inv] = out["invalidated"]
    assert (inv["id"], inv["invalid_at"]) == (1, Y2024)
    acme = gb.graph.get_edges(key(), [1])[1]
    assert acme.invalid_at == Y2024 and acme.expired_at == inv["expired_at"]
    ordered(gb)


def test_a_text_remembered_out_of_order_is_stored_already_ended(gb: Harness) -> None:
    gb.llm.script("extract", works_at(valid_at=Y2023))
    gb.remember("Alice works at Acme since 2023.", reference_time=REF)
    # told later, but true earlier: Globex from 2015, with no end stated
    gb.llm.script("extract", works_at("Alice", "Globex", valid_at=Y2015))
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    out = gb.remember("Alice started at Globex in 2015.", reference_time=REF)
    assert out["invalidated"] == []
    [globex] = out["edges"]
    assert (globex["valid_at"], globex["invalid_at"]) == (Y2015, Y2023)
    assert gb.graph.get_edges(key(), [1])[1].expired_at is None  # Acme untouched
    live = gb.graph.live_edges_around(key(), [1], 10)
    assert {e.id for e in live} == {1, 2}  # both kept, Globex as history
    ordered(gb)


def test_left_acme_with_another_relation_ends_the_acme_edge(gb: Harness) -> None:
    gb.llm.script("extract", works_at(valid_at=Y2020))
    gb.remember("Alice works at Acme since 2020.", reference_time=REF)
    gb.llm.script("extract", at_acme("left", valid_at=Y2024))
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    out = gb.remember("Alice left Acme in 2024.", reference_time=REF)
    assert "Alice --left--> Acme" in invalidate_prompt(gb)
    assert "[edge 1] Alice(1) --works_at--> Acme(2)" in invalidate_prompt(gb)
    [inv] = out["invalidated"]
    assert (inv["id"], inv["invalid_at"]) == (1, Y2024)
    ordered(gb)


def test_an_ended_fact_named_by_invalidate_ends_the_live_one(gb: Harness) -> None:
    """An end with no start ("Alice no longer works at Acme, since 2024") under
    another relation name: the live fact ends; no twin edge."""
    gb.llm.script("extract", works_at(valid_at=Y2020))
    gb.remember("Alice works at Acme since 2020.", reference_time=REF)
    gb.llm.script("extract", at_acme("employed_by", invalid_at=Y2024))
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    out = gb.remember("Alice has not worked at Acme since 2024.", reference_time=REF)
    assert out["invalidated"] == [{"id": 1, "invalid_at": Y2024}]
    assert [(e["id"], e["invalid_at"]) for e in out["edges"]] == [(1, Y2024)]
    acme = gb.graph.get_edges(key(), [1])[1]
    assert (acme.valid_at, acme.invalid_at, acme.expired_at) == (Y2020, Y2024, None)
    assert len(gb.scan("edges")) == 1
    assert sorted(gb.graph.edge_artifacts(key(), 1)) == [1, 2]
    ordered(gb)


def test_a_duplicate_is_a_restatement_whatever_its_relation(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.", reference_time="2024-06-01T00:00:00Z")
    gb.llm.script("extract", at_acme("employed_by"))
    gb.llm.script("invalidate", {"invalidated": [], "duplicates": [{"edge_id": 1, "of": 0}]})
    out = gb.remember("Alice is employed by Acme.", reference_time=REF)
    assert [e["id"] for e in out["edges"]] == [1]
    assert out["invalidated"] == []
    assert len(gb.scan("edges")) == 1
    assert sorted(gb.graph.edge_artifacts(key(), 1)) == [1, 2]


def test_a_duplicate_that_says_it_ended_ends_the_fact(gb: Harness) -> None:
    gb.llm.script("extract", works_at(valid_at=Y2020))
    gb.remember("Alice works at Acme.", reference_time=REF)
    gb.llm.script("extract", at_acme("worked_at", invalid_at=Y2024))
    gb.llm.script("invalidate", {"duplicates": [{"edge_id": 1, "of": 0}]})
    out = gb.remember("Alice worked at Acme until 2024.", reference_time=REF)
    assert out["invalidated"] == [{"id": 1, "invalid_at": Y2024}]
    assert len(gb.scan("edges")) == 1


def test_a_duplicate_of_another_period_is_a_new_edge(gb: Harness) -> None:
    gb.llm.script("extract", works_at(valid_at=Y2023))
    gb.remember("Alice works at Acme since 2023.", reference_time=REF)
    gb.llm.script("extract", at_acme("worked_at", valid_at=Y2015, invalid_at=Y2016))
    gb.llm.script("invalidate", {"duplicates": [{"edge_id": 1, "of": 0}]})
    out = gb.remember("Alice was at Acme in 2015 already, for a year.", reference_time=REF)
    assert [(e["id"], e["valid_at"], e["invalid_at"]) for e in out["edges"]] == [(2, Y2015, Y2016)]
    assert out["invalidated"] == []


def test_self_loops_are_dropped(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Acme", "organization")],
            [fact("Alice", "alice", "knows"), fact("Alice", "Acme", "works_at")],
        ),
    )
    out = gb.remember("Alice knows herself. She works at Acme.")
    assert [(e["source"], e["relation"], e["target"]) for e in out["edges"]] == [
        ("Alice", "works_at", "Acme")
    ]
    assert len(gb.scan("edges")) == 1


def test_candidates_are_the_facts_of_the_entities_not_the_newest(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.", reference_time="2024-01-01T00:00:00Z")
    gb.llm.script(
        "extract",
        extraction(
            [ent("Carol", "person"), ent("Dave", "person"), ent("Paris", "city")],
            [fact("Carol", "Dave", "knows"), fact("Carol", "Paris", "lives_in")],
        ),
    )
    gb.remember("Carol knows Dave and lives in Paris.")
    # Alice and Carol both known: only Alice's facts of the same kind are shown
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Globex", "organization"), ent("Carol", "person")],
            [fact("Alice", "Globex", "works_at"), fact("Alice", "Carol", "knows")],
        ),
    )
    gb.remember("Alice works at Globex now; she knows Carol.", reference_time=REF)
    assert gb.llm.calls("invalidate") == 1
    prompt = invalidate_prompt(gb)
    assert "[edge 1] Alice(1) --works_at--> Acme(2)" in prompt
    assert "lives_in" not in prompt and "Dave" not in prompt


def test_candidates_found_by_edge_text_similarity(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.", reference_time="2024-01-01T00:00:00Z")
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Globex", "organization")],
            [fact("Alice", "Globex", "employed_by", "Alice is employed by Globex.")],
        ),
    )
    gb.emb.alias("employed_by: Alice is employed by Globex.", "works_at: Alice works at Acme.", 0.8)
    gb.remember("Alice is employed by Globex.", reference_time=REF)
    assert "[edge 1] Alice(1) --works_at--> Acme(2)" in invalidate_prompt(gb)
    # an unrelated relation of the same source, not similar: not a candidate
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Chess", "concept")],
            [fact("Alice", "Chess", "plays")],
        ),
    )
    gb.remember("Alice plays chess.", reference_time=REF)
    assert gb.llm.calls("invalidate") == 1
