from __future__ import annotations

from conftest import Harness


def test_remember_then_query(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        {
            "entities": [
                {"name": "Alice", "type": "person", "description": "engineer"},
                {"name": "Acme", "type": "organization"},
            ],
            "edges": [
                {
                    "source": "Alice",
                    "target": "Acme",
                    "relation": "works_at",
                    "description": "Alice works at Acme.",
                }
            ],
        },
    )
    out = gb.remember("Alice works at Acme.", session_id="s1")
    assert out["session_id"] == "s1"
    assert [e["name"] for e in out["entities"]] == ["Alice", "Acme"]
    assert out["edges"][0]["relation"] == "works_at"
    gb.llm.script(
        "query", {"answer": "Alice works at Acme.", "entities": [1], "edges": [1], "passages": [99]}
    )
    q = gb.query("Where does Alice work?")
    assert q["answer"] == "Alice works at Acme."
    assert [e["id"] for e in q["evidence"]["entities"]] == [1, 2]
    assert q["evidence"]["passages"] == []
    prompt = gb.llm.requests_for("query")[0]
    print(prompt)


def test_trajectory_recorded(gb: Harness) -> None:
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Bob likes tea."})
    assert r.status == 200
    call = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1")
    assert call.status == 200, call.body
    print(call.body)
    names = [s["name"] for s in call.body["steps"]]
    assert names[:4] == ["parse", "chunk", "embed_text", "known_entities"]


def test_artifact_carries_the_call_id(gb: Harness) -> None:
    from gligabao.models import DatasetKey

    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Carol likes jazz."})
    assert r.status == 200
    art = gb.graph.get_artifacts(DatasetKey("u1", "main"), [r.body["artifact_id"]])
    assert art[r.body["artifact_id"]].call_id == r.call_id


def test_unknown_route_is_a_json_404_with_a_call_id(gb: Harness) -> None:
    r = gb.client.get("/v1/gb/nothing-here")
    assert r.status == 404
    assert "error" in r.body
    assert r.call_id


def test_quoted_ids_in_the_reply_are_read_as_ids(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        {
            "entities": [
                {"name": "Dora", "type": "person"},
                {"name": "Initech", "type": "organization"},
            ],
            "edges": [
                {
                    "source": "Dora",
                    "target": "Initech",
                    "relation": "works_at",
                    "description": "Dora works at Initech.",
                }
            ],
        },
    )
    gb.remember("Dora works at Initech.")
    gb.llm.script(
        "query", {"answer": "Initech.", "entities": [], "edges": ["1", True, "x"], "passages": []}
    )
    q = gb.query("Where does Dora work?")
    assert [e["id"] for e in q["evidence"]["edges"]] == [1]
    assert [e["id"] for e in q["evidence"]["entities"]] == [1, 2]
