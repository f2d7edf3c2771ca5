"""remember of long texts: chunks, summaries, their vectors and provenance,
with a small chunking threshold (spec: remember.md, step 2)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from remember_helpers import (
    assert_nothing_written,
    ent,
    extraction,
    fact,
    key,
    snapshot,
    works_at,
)

from conftest import Harness


@pytest.fixture
def gb_env() -> dict[str, str]:
    return {
        "GB_CHUNK_THRESHOLD_TOKENS": "50",
        "GB_CHUNK_TOKENS": "30",
        "GB_CHUNK_OVERLAP_TOKENS": "5",
    }


# Five paragraphs of about 20 tokens each: over the threshold of 50.
PARAGRAPHS = [
    "Alice joined Globex in March as the head of the robotics lab there.",
    "The lab builds small delivery robots for hospitals in the region.",
    "Bob, her former colleague from Acme, visited the lab in April.",
    "Together they planned a joint project on warehouse automation.",
    "The project starts next year with a budget of two million euros.",
]
LONG = "\n\n".join(PARAGRAPHS)


def _chunk_of(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    m = re.search(r"<(?:chunk[^>]*|text)>\n(.*)\n</(?:chunk|text)>", content, re.S)
    assert m, content
    return m.group(1)


def _summary(body: dict[str, Any]) -> dict[str, Any]:
    m = re.search(r'<chunk index="(\d+)" of="(\d+)">', body["messages"][0]["content"])
    assert m
    return {"summary": f"summary {m.group(1)} of {m.group(2)}"}


def test_a_long_text_is_chunked_summarized_and_embedded(gb: Harness) -> None:
    gb.llm.default("summarize", _summary)
    out = gb.remember(LONG, session_id="s1", reference_time="2025-01-31T09:00:00Z")
    n = out["chunks"]
    assert n >= 3
    assert out["artifact_id"] == 1
    assert gb.llm.calls("summarize") == n
    assert gb.llm.calls("extract") == n  # one extraction per chunk
    arts = sorted(gb.graph.iter_artifacts(key()), key=lambda a: a.id)
    assert [a.id for a in arts] == list(range(1, n + 2))
    parent, chunks = arts[0], arts[1:]
    assert parent.text == LONG and parent.parent_id is None and parent.index is None
    assert [c.parent_id for c in chunks] == [1] * n
    assert [c.index for c in chunks] == list(range(n))
    assert [c.summary for c in chunks] == [f"summary {i} of {n}" for i in range(n)]
    assert {c.session_id for c in chunks} == {"s1"}
    assert {c.reference_time for c in chunks} == {"2025-01-31T09:00:00Z"}
    # every paragraph is in some chunk, and the extraction saw the chunks
    for p in PARAGRAPHS:
        assert any(p in c.text for c in chunks), p
    assert [_chunk_of(r) for r in gb.llm.requests_for("extract")] == [c.text for c in chunks]
    assert gb.vectors.count(key(), "chunks") == n
    assert gb.vectors.count(key(), "summaries") == n
    datasets = gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"]
    assert datasets[0]["artifacts"] == n + 1


def test_a_short_text_has_no_chunk(gb: Harness) -> None:
    out = gb.remember("Alice joined Globex.")  # about 5 tokens
    assert out["chunks"] == 0
    assert gb.llm.calls("summarize") == 0
    assert len(gb.scan("artifacts")) == 1
    # no chunk, but the text itself is a passage (its vector in the chunks index)
    assert gb.vectors.count(key(), "chunks") == 1
    assert gb.vectors.count(key(), "summaries") == 0


def test_chunk_provenance_and_entities_across_chunks(gb: Harness) -> None:
    def extract(body: dict[str, Any]) -> dict[str, Any]:
        text = _chunk_of(body)
        if "Alice joined Globex" in text:
            return works_at("Alice", "Globex", person_desc="head of the robotics lab")
        if "Bob, her former colleague" in text:
            return extraction(
                [ent("Bob", "person"), ent("alice", "person", "visited by Bob")],
                [fact("Bob", "alice", "visited")],
            )
        return extraction([])

    gb.llm.default("extract", extract)
    out = gb.remember(LONG)
    n = out["chunks"]
    chunks = sorted((a for a in gb.graph.iter_artifacts(key()) if a.parent_id), key=lambda a: a.id)
    alice_chunk = next(c.id for c in chunks if "Alice joined Globex" in c.text)
    bob_chunk = next(c.id for c in chunks if "Bob, her former colleague" in c.text)
    assert alice_chunk != bob_chunk
    ents = {e["name"]: e for e in out["entities"]}
    assert set(ents) == {"Alice", "Globex", "Bob"}  # "alice" of a later chunk is Alice
    assert ents["Alice"]["description"] == "head of the robotics lab; visited by Bob"
    alice = ents["Alice"]["id"]
    assert sorted(gb.graph.entity_artifacts(key(), alice)) == [1, alice_chunk, bob_chunk]
    assert sorted(gb.graph.entity_artifacts(key(), ents["Bob"]["id"])) == [1, bob_chunk]
    by_rel = {e["relation"]: e for e in out["edges"]}
    assert by_rel["visited"]["artifact_id"] == 1  # the text, not the chunk
    assert sorted(gb.graph.edge_artifacts(key(), by_rel["visited"]["id"])) == [1, bob_chunk]
    assert sorted(gb.graph.edge_artifacts(key(), by_rel["works_at"]["id"])) == [1, alice_chunk]
    assert len(gb.scan("entities")) == 3
    assert n == len(chunks)


def test_stage_options_reach_every_stage(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember("Alice works at Acme.")
    gb.llm.script("extract", works_at("Alice", "Globex"))
    r = gb.client.post(
        "/v1/gb/remember",
        {
            "user_id": "u1",
            "text": LONG,
            "reasoning": {"extract": "low", "invalidate": "medium", "summarize": "high"},
            "models": {
                "extract": "claude-sonnet-4-5",
                "invalidate": "claude-opus-4-1",
                "summarize": "claude-haiku-4-5",
            },
        },
    )
    assert r.status == 200, r.body
    expected = {
        "extract": ("claude-sonnet-4-5", 1024),
        "invalidate": ("claude-opus-4-1", 4096),
        "summarize": ("claude-haiku-4-5", 16384),
    }
    for stage, (model, budget) in expected.items():
        reqs = [q for q in gb.llm.requests_for(stage) if q["model"] != "claude-haiku-5-5"]
        assert reqs, stage
        for req in reqs:
            assert req["model"] == model, stage
            assert req["thinking"] == {"type": "enabled", "budget_tokens": budget}, stage
            assert req["max_tokens"] > budget, stage
    assert len(gb.llm.requests_for("summarize")) == r.body["chunks"]
    assert len(gb.llm.requests_for("invalidate")) == 1  # one call for all chunks' facts


def test_a_failed_summary_writes_nothing_and_the_retry_completes(gb: Harness) -> None:
    gb.llm.script("summarize", {"summary": "first"})
    gb.llm.fail_next(500, stage="summarize")
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": LONG})
    assert r.status == 502, r.body
    assert set(r.body) == {"error"}
    assert_nothing_written(gb)
    out = gb.remember(LONG)
    assert out["chunks"] >= 3
    assert gb.vectors.count(key(), "chunks") == out["chunks"]


def test_an_empty_summary_is_502(gb: Harness) -> None:
    gb.remember("Alice joined Globex.")
    before = snapshot(gb)
    gb.llm.script("summarize", {"summary": ""})
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": LONG})
    assert r.status == 502, r.body
    assert snapshot(gb) == before
