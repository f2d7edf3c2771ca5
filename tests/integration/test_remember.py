"""POST /v1/gb/remember through HTTP: the response, entity resolution,
invalidation, provenance, stage options and idempotency (spec: remember.md)."""

from __future__ import annotations

from datetime import UTC, datetime

from remember_helpers import (
    EDGE_KEYS,
    RFC3339_Z,
    ent,
    extract_prompt,
    extraction,
    fact,
    invalidate_prompt,
    key,
    works_at,
)

from conftest import Harness

REF = "2025-01-31T09:00:00Z"

# --------------------------------------------------------------------- shape


def test_response_shape(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person", "engineer"), ent("Acme", "organization", "a company")],
            [fact("Alice", "Acme", "works at", "Alice works at Acme.")],
        ),
    )
    out = gb.remember(
        "Alice works at Acme.", session_id="chat-42", reference_time="2025-01-31T10:00:00+01:00"
    )
    assert set(out) == {
        "session_id",
        "artifact_id",
        "artifacts",
        "entities",
        "edges",
        "invalidated",
        "chunks",
    }
    assert out["session_id"] == "chat-42"
    assert out["artifact_id"] == 1 and out["artifacts"] == [1]
    assert out["entities"] == [
        {
            "id": 1,
            "name": "Alice",
            "type": "person",
            "description": "engineer",
            "created": True,
            "match": None,
        },
        {
            "id": 2,
            "name": "Acme",
            "type": "organization",
            "description": "a company",
            "created": True,
            "match": None,
        },
    ]
    [edge] = out["edges"]
    assert set(edge) == EDGE_KEYS  # expired_at is omitted while null
    assert edge["id"] == 1
    assert (edge["source_id"], edge["target_id"]) == (1, 2)
    assert (edge["source"], edge["target"]) == ("Alice", "Acme")
    assert edge["relation"] == "works_at"  # snake_case
    assert edge["description"] == "Alice works at Acme."
    assert edge["artifact_id"] == 1
    assert edge["valid_at"] == REF  # the reference time, normalized to UTC
    assert edge["invalid_at"] is None
    assert RFC3339_Z.match(edge["created_at"])
    assert out["invalidated"] == []
    assert out["chunks"] == 0

    art = gb.graph.get_artifacts(key(), [1])[1]
    assert art.text == "Alice works at Acme."
    assert art.session_id == "chat-42"
    assert art.reference_time == REF
    assert RFC3339_Z.match(art.created_at)
    assert art.parent_id is None and art.index is None
    assert art.call_id  # the call that wrote it


def test_session_id_omitted_and_lists_never_null(gb: Harness) -> None:
    out = gb.remember("Nothing to see here.")  # the fake's default: nothing extracted
    assert "session_id" not in out
    assert out == {
        "artifact_id": 1,
        "artifacts": [1],
        "entities": [],
        "edges": [],
        "invalidated": [],
        "chunks": 0,
    }
    # the text is stored whole even when nothing was extracted
    assert gb.graph.get_artifacts(key(), [1])[1].text == "Nothing to see here."


def test_reference_time_defaults_to_now(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    before = datetime.now(UTC).replace(microsecond=0)
    out = gb.remember("Alice works at Acme.")
    after = datetime.now(UTC)
    valid_at = datetime.fromisoformat(out["edges"][0]["valid_at"].replace("Z", "+00:00"))
    assert before <= valid_at <= after
    assert f"<reference_time>{out['edges'][0]['valid_at']}</reference_time>" in extract_prompt(gb)


def test_reference_time_and_model_dates_reach_the_edges(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Acme", "organization")],
            [
                fact(
                    "Alice",
                    "Acme",
                    "worked_at",
                    valid_at="2020-05-01T00:00:00+02:00",
                    invalid_at="2023-01-01",
                ),
                fact("Alice", "Acme", "admires", valid_at="not a date"),
            ],
        ),
    )
    out = gb.remember(
        "Alice worked at Acme from May 2020 to 2023, and admires it.", reference_time=REF
    )
    assert f"<reference_time>{REF}</reference_time>" in extract_prompt(gb)
    by_rel = {e["relation"]: e for e in out["edges"]}
    assert by_rel["worked_at"]["valid_at"] == "2020-04-30T22:00:00Z"
    assert by_rel["worked_at"]["invalid_at"] == "2023-01-01T00:00:00Z"
    assert by_rel["admires"]["valid_at"] == REF  # unusable date: the reference time
    assert by_rel["admires"]["invalid_at"] is None


def test_edge_endpoints_missing_from_the_entities_list_are_created(gb: Harness) -> None:
    gb.llm.script(
        "extract", extraction([ent("Alice", "person")], [fact("Alice", "Paris", "lives_in")])
    )
    out = gb.remember("Alice lives in Paris.")
    assert [(e["id"], e["name"], e["created"]) for e in out["entities"]] == [
        (1, "Alice", True),
        (2, "Paris", True),
    ]
    assert out["edges"][0]["target_id"] == 2


def test_code_fences_and_prose_around_the_json_are_tolerated(gb: Harness) -> None:
    import json

    gb.llm.script("extract", "Here you go:\n```json\n" + json.dumps(works_at()) + "\n```\nDone.")
    out = gb.remember("Alice works at Acme.")
    assert [e["name"] for e in out["entities"]] == ["Alice", "Acme"]


# ----------------------------------------------------------------- resolution


def test_resolution_by_the_id_the_model_was_shown(gb: Harness) -> None:
    gb.llm.script("extract", works_at(person_desc="engineer"))
    gb.remember("Alice works at Acme.")
    # The model calls her by another name but cites the ID it was shown.
    gb.llm.script(
        "extract",
        extraction(
            [ent("A. Smith", "person", "", id_=1), ent("Paris", "city")],
            [fact("A. Smith", "Paris", "lives_in")],
        ),
    )
    out = gb.remember("Alice moved to Paris.")
    prompt = extract_prompt(gb)
    assert "[entity 1] Alice (person): engineer" in prompt
    assert "[entity 2] Acme" not in prompt or "[entity 2] Acme (organization)" in prompt
    ents = {e["id"]: e for e in out["entities"]}
    assert ents[1]["name"] == "Alice" and ents[1]["created"] is False
    assert ents[3]["name"] == "Paris" and ents[3]["created"] is True
    assert out["edges"][0]["source_id"] == 1
    assert len(gb.scan("entities")) == 3


def test_an_id_the_model_was_not_shown_is_ignored(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    # "Bob likes tea" names neither Alice nor Acme: no known entity is shown,
    # so an ID in the reply is invented and must not merge Bob into Acme.
    gb.llm.script(
        "extract",
        extraction(
            [ent("Bob", "person", id_=2), ent("Tea", "drink", id_=99)],
            [fact("Bob", "Tea", "likes")],
        ),
    )
    out = gb.remember("Bob likes tea.")
    assert "<known_entities>\n(none)\n</known_entities>" in extract_prompt(gb)
    assert [(e["id"], e["name"], e["created"]) for e in out["entities"]] == [
        (3, "Bob", True),
        (4, "Tea", True),
    ]
    assert gb.graph.get_entities(key(), [2])[2].name == "Acme"


def test_resolution_by_normalized_name(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    gb.llm.script(
        "extract",
        extraction([ent("ALICE ", "person"), ent("acme!", "")], [fact("ALICE ", "acme!", "likes")]),
    )
    out = gb.remember("ALICE likes ACME.")
    assert [(e["id"], e["name"], e["created"]) for e in out["entities"]] == [
        (1, "Alice", False),
        (2, "Acme", False),
    ]
    assert (out["edges"][0]["source_id"], out["edges"][0]["target_id"]) == (1, 2)
    assert len(gb.scan("entities")) == 2
    assert len(gb.scan("names")) == 2


def test_an_embedding_match_alone_never_merges(gb: Harness) -> None:
    gb.emb.alias("Hal Haas", "Dan Haas", 0.99)
    gb.llm.script("extract", extraction([ent("Dan Haas", "person", "roofer")]))
    gb.remember("Dan Haas fixed the roof.")
    gb.llm.script("extract", extraction([ent("Hal Haas", "person", "piano teacher")]))
    out = gb.remember("Hal Haas teaches piano.")
    assert "Hal Haas" in gb.emb.inputs()  # the new name was embedded to compare
    assert [(e["id"], e["name"], e["created"], e["match"]) for e in out["entities"]] == [
        (2, "Hal Haas", True, None)
    ]
    assert len(gb.scan("entities")) == 2
    assert len(gb.scan("names")) == 2


def test_a_candidate_merges_with_a_name_reason(gb: Harness) -> None:
    gb.llm.script("extract", works_at("Alice Smith"))
    gb.remember("Alice Smith works at Acme.")
    gb.llm.script("extract", extraction([ent("Alice", "person", "board member")]))
    out = gb.remember("Alice joined the board.")
    assert out["entities"] == [
        {
            "id": 1,
            "name": "Alice Smith",
            "type": "person",
            "description": "board member",
            "created": False,
            "match": "alias",
        }
    ]
    assert len(gb.scan("entities")) == 2  # Alice Smith and Acme
    assert len(gb.scan("names")) == 2  # the alias claims no name


def test_the_similarity_threshold_makes_candidates(gb: Harness) -> None:
    # No shared term and another normalized name: only the name vector
    # makes these candidates, from 0.75 up; the name rules then merge.
    gb.emb.alias("Jose", "José", 0.76)
    gb.emb.alias("Zoe", "Zoë", 0.74)
    gb.llm.script("extract", extraction([ent("José", "person"), ent("Zoë", "person")]))
    gb.remember("José and Zoë called.")
    gb.llm.script("extract", extraction([ent("Jose", "person")]))
    out = gb.remember("Jose called again.")
    assert (out["entities"][0]["id"], out["entities"][0]["match"]) == (1, "same name")
    gb.llm.script("extract", extraction([ent("Zoe", "person")]))
    out = gb.remember("Zoe called again.")
    assert (out["entities"][0]["id"], out["entities"][0]["created"]) == (3, True)


def test_distinct_names_are_never_merged(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    assert gb.emb.similarity("Bob", "Alice") < 0.75
    gb.llm.script("extract", works_at("Bob", "Acme Labs"))
    out = gb.remember("Bob works at Acme Labs.")
    assert [(e["id"], e["name"], e["created"]) for e in out["entities"]] == [
        (3, "Bob", True),
        (4, "Acme Labs", True),
    ]
    assert len(gb.scan("entities")) == 4


def test_description_is_enriched_never_lost(gb: Harness) -> None:
    gb.llm.script("extract", extraction([ent("Alice", "person", "engineer")]))
    gb.remember("Alice is an engineer.")
    gb.llm.script("extract", extraction([ent("Alice", "person", "lives in Paris")]))
    out = gb.remember("Alice lives in Paris.")
    assert out["entities"][0]["description"] == "engineer; lives in Paris"
    # no description, or one already known: nothing lost, nothing repeated
    gb.llm.script("extract", extraction([ent("Alice", "", "")]))
    gb.remember("Alice again.")
    gb.llm.script("extract", extraction([ent("alice", "person", "Engineer")]))
    out = gb.remember("alice, engineer.")
    row = gb.graph.get_entities(key(), [1])[1]
    assert row.description == "engineer; lives in Paris"
    assert row.type == "person"
    assert row.name == "Alice"
    assert out["entities"][0]["description"] == row.description
    # the new words are searchable: a later text naming Paris shows Alice
    gb.remember("Paris is lovely.")
    assert "[entity 1] Alice" in extract_prompt(gb)


def test_known_entities_found_by_similarity(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    # No shared word with "Acme", but the text's vector is close to its name.
    gb.emb.alias("The rocket company hired again.", "Acme", 0.9)
    gb.remember("The rocket company hired again.")
    prompt = extract_prompt(gb)
    assert "[entity 2] Acme (organization)" in prompt
    assert "[entity 1]" not in prompt


# --------------------------------------------------------------- invalidation


def test_a_contradicting_fact_supersedes_the_live_one(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    first = gb.remember("Alice works at Acme.", reference_time="2024-01-01T00:00:00Z")
    assert gb.llm.calls("invalidate") == 0
    gb.llm.script("extract", works_at("Alice", "Globex"))
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    out = gb.remember("Alice now works at Globex.", reference_time=REF)

    assert gb.llm.calls("invalidate") == 1
    prompt = invalidate_prompt(gb)
    assert "[new 0] Alice --works_at--> Globex" in prompt
    assert "[edge 1] Alice(1) --works_at--> Acme(2)" in prompt
    [inv] = out["invalidated"]
    assert inv["id"] == 1
    assert inv["invalid_at"] == REF  # the new fact's valid_at
    assert RFC3339_Z.match(inv["expired_at"])
    assert [e["id"] for e in out["edges"]] == [2]
    assert out["edges"][0]["valid_at"] == REF

    old = gb.graph.get_edges(key(), [1])[1]  # still in the table
    assert old.expired_at == inv["expired_at"]
    assert old.invalid_at == REF
    assert old.valid_at == first["edges"][0]["valid_at"]
    assert len(gb.scan("edges")) == 2
    assert [e.id for e in gb.graph.live_edges_around(key(), [1], 100)] == [2]


def test_superseded_by_a_dated_fact_and_an_ended_fact_closes_nothing(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Acme", "organization"), ent("Paris", "city")],
            [
                fact("Alice", "Acme", "works_at"),
                fact("Alice", "Paris", "lives_in", invalid_at="2024-12-01T00:00:00Z"),
            ],
        ),
    )
    gb.remember(
        "Alice works at Acme; she lived in Paris until December.",
        reference_time="2024-01-01T00:00:00Z",
    )
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Globex", "organization"), ent("Lyon", "city")],
            [
                fact("Alice", "Globex", "works_at", valid_at="2024-06-01T00:00:00Z"),
                fact("Alice", "Lyon", "lives_in"),
            ],
        ),
    )
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}, {"edge_id": 2, "by": 1}]})
    out = gb.remember("Alice joined Globex in June and lives in Lyon.", reference_time=REF)
    inv = {i["id"]: i for i in out["invalidated"]}
    assert inv[1]["invalid_at"] == "2024-06-01T00:00:00Z"
    # Paris had ended before Lyon began: nominated, but the intervals do not
    # meet, so it stays as history with its own invalid_at
    assert 2 not in inv
    paris = gb.graph.get_edges(key(), [2])[2]
    assert (paris.invalid_at, paris.expired_at) == ("2024-12-01T00:00:00Z", None)
    assert [e.id for e in gb.graph.live_edges_around(key(), [1], 100)] == [4, 3, 2]


def test_a_fact_the_text_says_has_ended_gets_invalid_at_only(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.", reference_time="2024-01-01T00:00:00Z")
    gb.llm.script("extract", works_at(invalid_at="2025-01-15T00:00:00Z"))
    out = gb.remember("Alice left Acme on January 15.", reference_time=REF)
    assert out["invalidated"] == [{"id": 1, "invalid_at": "2025-01-15T00:00:00Z"}]
    [edge] = out["edges"]
    assert edge["id"] == 1 and edge["invalid_at"] == "2025-01-15T00:00:00Z"
    assert "expired_at" not in edge
    row = gb.graph.get_edges(key(), [1])[1]
    assert row.invalid_at == "2025-01-15T00:00:00Z"
    assert row.expired_at is None
    assert [e.id for e in gb.graph.live_edges_around(key(), [1], 100)] == [1]  # still live
    assert len(gb.scan("edges")) == 1
    assert gb.llm.calls("invalidate") == 0  # no new fact to judge


def test_a_fact_stated_again_after_it_ended_is_a_new_period(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.", reference_time="2024-01-01T00:00:00Z")
    gb.llm.script("extract", works_at(invalid_at="2024-06-01T00:00:00Z"))
    gb.remember("Alice left Acme in June.", reference_time="2024-07-01T00:00:00Z")
    # stated as current again, after the end: Alice works at Acme now
    gb.llm.script("extract", works_at())
    out = gb.remember("Alice is back at Acme.", reference_time=REF)
    [edge] = out["edges"]
    assert edge["id"] == 2
    assert (edge["valid_at"], edge["invalid_at"]) == (REF, None)
    old = gb.graph.get_edges(key(), [1])[1]
    assert (old.invalid_at, old.expired_at) == ("2024-06-01T00:00:00Z", None)  # history kept
    live = gb.graph.live_edges_around(key(), [1], 100)
    assert [(e.id, e.invalid_at) for e in live] == [(2, None), (1, "2024-06-01T00:00:00Z")]
    # said once more: the current period is restated, not the ended one
    gb.llm.script("extract", works_at())
    again = gb.remember("Alice works at Acme.", reference_time="2025-02-01T00:00:00Z")
    assert [e["id"] for e in again["edges"]] == [2]
    assert sorted(gb.graph.edge_artifacts(key(), 2)) == [3, 4]
    # a text from the time of the first period restates that one
    gb.llm.script("extract", works_at())
    past = gb.remember("Alice works at Acme.", reference_time="2024-03-01T00:00:00Z")
    assert [e["id"] for e in past["edges"]] == [1]
    assert len(gb.scan("edges")) == 2


def test_no_invalidate_call_without_candidates(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    gb.llm.script("extract", works_at("Bob", "Globex"))  # no existing entity: no candidate
    gb.remember("Bob works at Globex.")
    gb.llm.script("extract", extraction([ent("Alice", "person", "likes tea")]))  # no new fact
    gb.remember("Alice likes tea.")
    gb.llm.script("extract", works_at())  # only restated
    gb.remember("Alice works at Acme.")
    assert gb.llm.calls("invalidate") == 0


def test_invalidate_reply_citing_no_candidate_is_ignored(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    gb.llm.script("extract", works_at("Alice", "Initech"))  # a candidate: same relation
    gb.llm.script(
        "invalidate",
        {
            "invalidated": [
                {"edge_id": 99, "by": 0},
                {"edge_id": 1, "by": 1},
                {"edge_id": 1, "by": -1},
                {"edge_id": "one", "by": 0},
                "junk",
            ]
        },
    )
    out = gb.remember("Alice works at Initech too.")
    assert gb.llm.calls("invalidate") == 1
    assert out["invalidated"] == []
    assert gb.graph.get_edges(key(), [1])[1].expired_at is None


# ------------------------------------------------------------------ provenance


def test_provenance_links_every_artifact_that_stated_it(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    first = gb.remember("Alice works at Acme.")
    gb.llm.script("extract", works_at())
    second = gb.remember("As I said, Alice works at Acme.")
    gb.llm.script("extract", extraction([ent("Acme", "organization", "rocket maker")]))
    third = gb.remember("Acme makes rockets.")
    assert (first["artifact_id"], second["artifact_id"], third["artifact_id"]) == (1, 2, 3)

    # restated, not duplicated: the same edge, first stated by artifact 1
    assert [e["id"] for e in second["edges"]] == [1]
    assert second["edges"][0]["artifact_id"] == 1
    assert [e["created"] for e in second["entities"]] == [False, False]
    assert len(gb.scan("edges")) == 1
    assert gb.llm.calls("invalidate") == 0

    g = gb.graph
    assert sorted(g.edge_artifacts(key(), 1)) == [1, 2]
    assert sorted(g.entity_artifacts(key(), 1)) == [1, 2]
    assert sorted(g.entity_artifacts(key(), 2)) == [1, 2, 3]
    datasets = gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"]
    assert [(d["entities"], d["edges"], d["artifacts"]) for d in datasets] == [(2, 1, 3)]


def test_the_same_fact_twice_in_one_text_is_one_edge(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Acme", "organization")],
            [fact("Alice", "Acme", "works_at"), fact("alice", "ACME", "Works At")],
        ),
    )
    out = gb.remember("Alice works at Acme. Yes, Alice works at Acme.")
    assert len(out["edges"]) == 1
    assert len(gb.scan("edges")) == 1


def test_vectors_are_written_for_entities_and_edges(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    gb.llm.script("extract", works_at())  # restated: no new vector
    gb.remember("Alice works at Acme.")
    assert gb.vectors.count(key(), "entities") == 2
    assert gb.vectors.count(key(), "edges") == 1
    # Each short text is a passage: its vector (and words) in the chunks index.
    assert gb.vectors.count(key(), "chunks") == 2
    assert gb.vectors.count(key(), "summaries") == 0
    assert (
        gb.emb.inputs().count("works_at: Alice works at Acme.") == 2
    )  # embedded, not stored twice


def test_datasets_and_users_are_isolated(gb: Harness) -> None:
    gb.llm.script("extract", works_at(), times=3)
    gb.remember("Alice works at Acme.")
    other_ds = gb.remember("Alice works at Acme.", dataset="work")
    other_user = gb.remember("Alice works at Acme.", user="u2")
    for out in (other_ds, other_user):
        assert out["artifact_id"] == 1
        assert [e["created"] for e in out["entities"]] == [True, True]
        assert "<known_entities>\n(none)\n</known_entities>" in extract_prompt(gb)
    names = [d["name"] for d in gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"]]
    assert names == ["main", "work"]


# ------------------------------------------------------------- stage options


def test_reasoning_string_and_models_reach_the_llm(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    req = gb.llm.requests_for("extract")[-1]
    assert req["model"] == "claude-haiku-5-5"  # the default model
    assert "thinking" not in req  # no reasoning asked: none paid for

    gb.llm.script("extract", works_at("Alice", "Globex"))
    gb.remember("Alice joined Globex.", reasoning="low", models={"invalidate": "claude-sonnet-4-5"})
    ext, inv = gb.llm.requests_for("extract")[-1], gb.llm.requests_for("invalidate")[-1]
    assert ext["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert ext["max_tokens"] > 1024
    assert ext["model"] == "claude-haiku-5-5"
    assert "thinking" not in inv  # a string is the level of the main stage only
    assert inv["model"] == "claude-sonnet-4-5"


def test_reasoning_and_models_per_stage(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    gb.llm.script("extract", works_at("Alice", "Globex"))
    r = gb.client.post(
        "/v1/gb/remember",
        {
            "user_id": "u1",
            "text": "Alice joined Globex.",
            "reasoning": {"extract": "medium", "invalidate": "HIGH", "summarize": "none"},
            "models": {
                "extract": "claude-sonnet-4-5",
                "invalidate": "anthropic/claude-opus-4-1@2025",
            },
        },
    )
    assert r.status == 200, r.body
    ext, inv = gb.llm.requests_for("extract")[-1], gb.llm.requests_for("invalidate")[-1]
    assert (ext["model"], ext["thinking"]["budget_tokens"]) == ("claude-sonnet-4-5", 4096)
    assert (inv["model"], inv["thinking"]["budget_tokens"]) == (
        "anthropic/claude-opus-4-1@2025",
        16384,
    )
    assert inv["max_tokens"] > 16384
    infs = gb.client.get(f"/v1/gb/inferences?user_id=u1&call_id={r.call_id}").body["inferences"]
    llm = {i["stage"]: (i["model"], i["reasoning"]) for i in infs if i["stage"] != "embed"}
    assert llm == {
        "extract": ("claude-sonnet-4-5", "medium"),
        "invalidate": ("anthropic/claude-opus-4-1@2025", "high"),
    }


def test_bad_stage_options_are_400(gb: Harness) -> None:
    cases = [
        {"reasoning": {"query": "low"}},
        {"reasoning": {"detect_geo": "low"}},
        {"reasoning": "extreme"},
        {"reasoning": {"extract": "extreme"}},
        {"reasoning": {"extract": 1}},
        {"reasoning": 3},
        {"reasoning": ["low"]},
        {"models": {"query": "claude-haiku-5-5"}},
        {"models": {"embed": "text-embedding-3-small"}},
        {"models": {"extract": "bad model"}},
        {"models": {"extract": ""}},
        {"models": {"extract": "m" * 129}},
        {"models": {"extract": "claude#1"}},
        {"models": {"extract": 5}},
        {"models": "claude-haiku-5-5"},
    ]
    for extra in cases:
        r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice.", **extra})
        assert r.status == 400, (extra, r.status, r.body)
        assert isinstance(r.body, dict) and set(r.body) == {"error"}, (extra, r.body)
        assert r.body["error"], extra
        assert r.call_id, extra
    assert gb.llm.calls() == 0
    assert gb.emb.calls() == 0
    assert len(gb.scan("datasets")) == 0
    # the longest valid model name is fine
    r = gb.client.post(
        "/v1/gb/remember", {"user_id": "u1", "text": "Alice.", "models": {"extract": "m" * 128}}
    )
    assert r.status == 200, r.body
    assert gb.llm.requests_for("extract")[-1]["model"] == "m" * 128


# ---------------------------------------------------------------- idempotency


def test_idempotency_key_header_replays_the_first_response(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    body = {"user_id": "u1", "text": "Alice works at Acme."}
    first = gb.client.post("/v1/gb/remember", body, headers={"Idempotency-Key": "k-1"})
    second = gb.client.post("/v1/gb/remember", body, headers={"Idempotency-Key": "k-1"})
    assert first.status == second.status == 200
    assert second.body == first.body
    assert second.call_id
    assert gb.llm.calls() == 1
    assert len(gb.scan("artifacts")) == 1
    # a new key is a new call
    third = gb.client.post("/v1/gb/remember", body, headers={"Idempotency-Key": "k-2"})
    assert third.body["artifact_id"] == 2
    assert gb.llm.calls() == 2


def test_idempotency_key_body_field(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    first = gb.remember("Alice works at Acme.", idempotency_key="abc")
    again = gb.remember("Alice works at Acme.", idempotency_key="abc")
    assert again == first
    assert gb.llm.calls("extract") == 1
    # the header and the field are the same key
    r = gb.client.post(
        "/v1/gb/remember",
        {"user_id": "u1", "text": "Alice works at Acme."},
        headers={"Idempotency-Key": "abc"},
    )
    assert r.body == first
    assert gb.llm.calls("extract") == 1
    assert len(gb.scan("artifacts")) == 1


def test_idempotency_key_is_per_user(gb: Harness) -> None:
    gb.llm.script("extract", works_at(), times=2)
    a = gb.remember("Alice works at Acme.", user="u1", idempotency_key="same")
    b = gb.remember("Alice works at Acme.", user="u2", idempotency_key="same")
    assert gb.llm.calls("extract") == 2
    assert a["artifact_id"] == b["artifact_id"] == 1
    assert gb.graph.get_artifacts(key("u2"), [1])[1].text == "Alice works at Acme."


def test_empty_idempotency_key_is_400(gb: Harness) -> None:
    r = gb.client.post(
        "/v1/gb/remember", {"user_id": "u1", "text": "x"}, headers={"Idempotency-Key": " "}
    )
    assert r.status == 400 and r.body["error"]
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "x", "idempotency_key": ""})
    assert r.status == 400 and r.body["error"]
    assert gb.llm.calls() == 0
