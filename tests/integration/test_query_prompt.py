"""query: the context given to the LLM (the prompt format), the fixed answer
when there is nothing to answer from, and the evidence built from the reply."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from query_helpers import (
    NO_INFORMATION,
    GraphBuilder,
    ask,
    empty_evidence,
    graph_lines,
    graph_snapshot,
    passage_blocks,
    prompt,
    section,
)

from conftest import Harness
from gligabao.clock import parse


def build_alice(gb: Harness, dataset: str = "main") -> GraphBuilder:
    """Alice and her facts, with every optional field present and absent, and
    four chunks of one long text (902 text+summary, 904 and 905 text only,
    903 summary only)."""
    g = GraphBuilder(gb, dataset=dataset)
    alice = g.entity("Alice", "person", "engineer")  # 1
    acme = g.entity("Acme", "organization")  # 2
    paris = g.entity("Paris", "", "capital of France")  # 3
    widget = g.entity("Widget")  # 4
    g.entity("Globex", "organization", "a company nobody mentions")  # 5: not around Alice
    g.edge(
        alice,
        acme,
        "works_at",
        "Alice works at Acme.",
        valid_at="2023-01-01T00:00:00Z",
        invalid_at="2024-03-01T00:00:00Z",
    )  # 501: ended, not superseded
    g.edge(alice, paris, "lives_in", "Alice lives in Paris.", valid_at="2022-05-01T00:00:00Z")
    g.edge(alice, widget, "owns")  # 503: no description, no time
    text = g.text("a long text about Alice")  # 901
    g.chunk(
        text, 0, "Alice joined Acme in 2023.", "Alice joined Acme.", text_sim=0.9, summary_sim=0.85
    )
    g.chunk(text, 1, "Alice moved to Paris.", "She moved.", summary_sim=0.8)  # 903
    g.chunk(text, 2, "Alice bought a widget.", "A widget.", text_sim=0.88)  # 904
    g.chunk(text, 3, "Alice left Acme in 2024.", "She left.", text_sim=0.87)  # 905
    return g.save()


def test_prompt_format(gb: Harness) -> None:
    build_alice(gb)
    q = ask(gb, "What does Alice do?")
    before = datetime.now(UTC) - timedelta(seconds=2)
    out = gb.query(q)
    after = datetime.now(UTC) + timedelta(seconds=2)
    assert out == {"answer": "ok", "evidence": empty_evidence()}

    [req] = gb.llm.requests_for("query")
    assert req["model"] == "claude-haiku-5-5"
    assert req["max_tokens"] == 2048
    assert "thinking" not in req
    assert req["system"].startswith("[stage: query]")
    text = prompt(gb)
    assert graph_lines(text) == [
        "[entity 1] Alice (person): engineer",
        "[entity 2] Acme (organization)",
        "[entity 3] Paris: capital of France",
        "[entity 4] Widget",
        "[edge 501] Alice(1) --works_at--> Acme(2): Alice works at Acme. "
        "[valid_at=2023-01-01T00:00:00Z, invalid_at=2024-03-01T00:00:00Z]",
        "[edge 502] Alice(1) --lives_in--> Paris(3): Alice lives in Paris. "
        "[valid_at=2022-05-01T00:00:00Z]",
        "[edge 503] Alice(1) --owns--> Widget(4)",
    ]
    # A passage is headed with its text's reference time (and session), once
    # for a run: the chunks of one text share it, so only the first says it.
    at = "2025-01-01T00:08:00Z"
    assert passage_blocks(text) == {
        902: f"[passage 902] {at} (chunk 0 of text 901)\n"
        "summary: Alice joined Acme.\n"
        "text: Alice joined Acme in 2023.",
        903: "[passage 903] (chunk 1 of text 901)\nsummary: She moved.",
        904: "[passage 904] (chunk 2 of text 901)\ntext: Alice bought a widget.",
        905: "[passage 905] (chunk 3 of text 901)\ntext: Alice left Acme in 2024.",
    }
    now = section(text, "current_time")
    assert now is not None and now.endswith("Z")
    assert before <= parse(now) <= after
    assert q in text
    # The graph comes before the passages.
    assert text.index("</graph>") < text.index("<passages>")


def test_no_passages_section_without_passages(gb: Harness) -> None:
    g = GraphBuilder(gb)
    g.entity("Alice", "person", "engineer")
    g.save()
    gb.query(ask(gb, "Who is Alice?"))
    text = prompt(gb)
    assert graph_lines(text) == ["[entity 1] Alice (person): engineer"]
    assert "<passages>" not in text and "</passages>" not in text
    assert section(text, "current_time") is not None


def test_nothing_to_answer_from(gb: Harness) -> None:
    """An empty dataset: the fixed answer, empty evidence, no LLM call (the
    question is still embedded once)."""
    GraphBuilder(gb).save()
    snap = graph_snapshot(gb)
    out = gb.query(ask(gb, "What do you know?"), session_id="s-1")
    assert out == {"session_id": "s-1", "answer": NO_INFORMATION, "evidence": empty_evidence()}
    assert gb.llm.calls() == 0
    assert gb.emb.inputs() == ["What do you know?"]
    out = gb.query("What do you know?")
    assert out == {"answer": NO_INFORMATION, "evidence": empty_evidence()}
    assert gb.llm.calls() == 0
    assert graph_snapshot(gb) == snap


def test_only_dangling_vectors_is_nothing(gb: Harness) -> None:
    """Every hit is resolved through the database: vectors whose rows are gone
    give nothing to answer from."""
    g = GraphBuilder(gb)
    for kind, id_ in (("entities", 7), ("edges", 507), ("chunks", 907), ("summaries", 908)):
        g.dangling(kind, id_, 0.95)  # type: ignore[arg-type]
    g.save()
    out = gb.query(ask(gb, "Anything about anyone?"))
    assert out == {"answer": NO_INFORMATION, "evidence": empty_evidence()}
    assert gb.llm.calls() == 0


def test_evidence(gb: Harness) -> None:
    build_alice(gb)
    g = GraphBuilder(gb, next_entity=6, next_edge=504, next_artifact=906)
    # A real row that is not in the context: citing it is a hallucination too.
    globex = g.entity("Initech", "organization")
    far = g.entity("Far Away")
    g.edge(globex, far, "near")  # 504: not around any seed
    g.save()
    gb.llm.script(
        "query",
        {
            "answer": "Alice worked at Acme until 2024.",
            # out of order, duplicated, hallucinated (999) and real but not
            # in the context (5, 6, 504, 906), bools and strings are no IDs
            "entities": [3, 999, 5, 6, 3, True, "1"],
            "edges": [501, 501, 999, 504, 501],
            "passages": [905, 903, 903, 999, 906, 901],
        },
    )
    # No word of the question but Alice's name: every fact and passage about
    # her is relevant enough.
    out = gb.query(ask(gb, "Tell me about Alice."))
    assert out["answer"] == "Alice worked at Acme until 2024."
    ev = out["evidence"]
    # Endpoints of the cited edge (Alice 1, Acme 2) added; ordered by ID.
    assert ev["entities"] == [
        {"id": 1, "name": "Alice", "type": "person", "description": "engineer"},
        {"id": 2, "name": "Acme", "type": "organization"},
        {"id": 3, "name": "Paris", "type": "", "description": "capital of France"},
    ]
    [edge] = ev["edges"]
    assert edge == {
        "id": 501,
        "source_id": 1,
        "target_id": 2,
        "source": "Alice",
        "target": "Acme",
        "relation": "works_at",
        "description": "Alice works at Acme.",
        "valid_at": "2023-01-01T00:00:00Z",
        "invalid_at": "2024-03-01T00:00:00Z",
        "created_at": edge["created_at"],
    }
    stored = gb.graph.get_edges(g.key, [501])[501]
    assert edge["created_at"] == stored.created_at
    # Passages as they were given: 903 with its summary only, 905 with its text only.
    assert ev["passages"] == [
        {"artifact_id": 903, "parent_id": 901, "index": 1, "summary": "She moved."},
        {"artifact_id": 905, "parent_id": 901, "index": 3, "text": "Alice left Acme in 2024."},
    ]


def test_evidence_temporal_fields_as_stored(gb: Harness) -> None:
    g = GraphBuilder(gb)
    alice = g.entity("Alice", "person")
    acme = g.entity("Acme")
    g.edge(alice, acme, "works_at", artifact_id=77)  # 501: no times at all
    g.edge(alice, acme, "visited", valid_at="2020-01-01T00:00:00Z")  # 502
    g.save()
    gb.llm.script("query", {"answer": "yes", "edges": [502, 501]})
    out = gb.query(ask(gb, "Does Alice know Acme?"))
    e1, e2 = out["evidence"]["edges"]
    assert e1["id"] == 501 and e1["valid_at"] is None and e1["invalid_at"] is None
    assert e1["artifact_id"] == 77
    assert "expired_at" not in e1 and "description" not in e1
    assert e2["id"] == 502 and e2["valid_at"] == "2020-01-01T00:00:00Z" and e2["invalid_at"] is None
    assert "artifact_id" not in e2
    assert [e["id"] for e in out["evidence"]["entities"]] == [1, 2]
    assert out["evidence"]["passages"] == []


def test_evidence_arrays_never_null(gb: Harness) -> None:
    g = GraphBuilder(gb)
    g.entity("Alice", "person")
    g.save()
    q = ask(gb, "Who is Alice?")
    for reply in (
        {"answer": "Alice is a person."},
        {"answer": "Alice is a person.", "entities": None, "edges": None, "passages": None},
        {"answer": "Alice is a person.", "entities": "1", "edges": {}, "passages": 3},
        'Here you go:\n```json\n{"answer": "Alice is a person.", "entities": [1]}\n```\nDone.',
    ):
        gb.llm.script("query", reply)
        out = gb.query(q)
        assert out["answer"] == "Alice is a person."
        ev = out["evidence"]
        assert set(ev) == {"entities", "edges", "passages"}
        assert all(isinstance(v, list) for v in ev.values()), ev
    assert ev["entities"] == [{"id": 1, "name": "Alice", "type": "person"}]
