"""Forget one text (issue 27): DELETE /v1/gb/artifacts/{id} removes the
text, its chunks, their vectors, the facts and entities nothing else
supports and their provenance, and sets back what the text superseded; a
second call is 404; bad input changes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import Harness

ALICE_ACME = {
    "entities": [{"name": "Alice", "type": "person"}, {"name": "Acme", "type": "organization"}],
    "edges": [
        {
            "source": "Alice",
            "target": "Acme",
            "relation": "works_at",
            "description": "Alice works at Acme.",
        }
    ],
}
ALICE_GLOBEX = {
    "entities": [{"name": "Alice", "type": "person"}, {"name": "Globex", "type": "organization"}],
    "edges": [
        {
            "source": "Alice",
            "target": "Globex",
            "relation": "works_at",
            "description": "Alice works at Globex.",
        }
    ],
}


def _forget(gb: Harness, artifact_id: Any, user: str = "u1", dataset: str = "main") -> Any:
    return gb.client.delete(f"/v1/gb/artifacts/{artifact_id}?user_id={user}&dataset={dataset}")


def _moved(gb: Harness) -> tuple[int, int]:
    gb.llm.script("extract", ALICE_ACME)
    first = gb.remember("Alice works at Acme.", session_id="s1")
    gb.llm.script("extract", ALICE_GLOBEX)
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": first["edges"][0]["id"], "by": 0}]})
    second = gb.remember("Alice moved from Acme to Globex.", session_id="s1")
    assert second["invalidated"], second
    return first["artifact_id"], second["artifact_id"]


def _live_facts(gb: Harness, name: str) -> list[tuple[str, str, str]]:
    r = gb.client.get(f"/v1/gb/entities?user_id=u1&q={name}")
    assert r.status == 200, r.body
    (ent,) = [e for e in r.body["entities"] if e["name"] == name]
    r = gb.client.get(f"/v1/gb/entities/{ent['id']}?user_id=u1")
    assert r.status == 200, r.body
    return sorted((f["source"], f["relation"], f["target"]) for f in r.body["facts"])


def test_forgetting_the_move_restores_acme_live(gb: Harness) -> None:
    first, second = _moved(gb)
    assert _live_facts(gb, "Alice") == [("Alice", "works_at", "Globex")]
    r = _forget(gb, second)
    assert r.status == 200, r.body
    body = r.body
    assert body["artifact_id"] == second
    assert body["removed"]["artifacts"] == [second]
    assert len(body["removed"]["edges"]) == 1  # works_at Globex
    assert len(body["removed"]["entities"]) == 1  # Globex (Alice is also in the first text)
    assert len(body["restored"]["edges"]) == 1
    assert _live_facts(gb, "Alice") == [("Alice", "works_at", "Acme")]
    # the restored fact is live again, with no end
    edge_id = body["restored"]["edges"][0]
    r = gb.client.get(f"/v1/gb/edges/{edge_id}?user_id=u1")
    assert r.status == 200, r.body
    assert r.body["edge"].get("expired_at") is None and r.body["edge"]["invalid_at"] is None
    assert r.body["replaced_by"] is None
    assert [s["artifact_id"] for s in r.body["sources"]] == [first]
    # the query answers from the Acme fact
    # the query answers from the Acme fact: the context it gives the LLM
    # holds it, live, and nothing of Globex
    gb.llm.script("query", {"answer": "Alice works at Acme.", "edges": [edge_id]})
    out = gb.query("Where does Alice work?")
    prompt = json.dumps(gb.llm.requests_for("query")[-1]["messages"])
    assert "Globex" not in prompt and "works_at" in prompt and "Acme" in prompt
    assert "Globex" not in {e["name"] for e in out["evidence"]["entities"]}
    assert [(e["source"], e["target"]) for e in out["evidence"]["edges"]] == [("Alice", "Acme")]
    assert all(e.get("expired_at") is None for e in out["evidence"]["edges"])
    # a second forget is 404; the browse routes no longer know it
    assert _forget(gb, second).status == 404
    assert gb.client.get(f"/v1/gb/artifacts/{second}?user_id=u1").status == 404
    for eid in body["removed"]["entities"]:
        assert gb.client.get(f"/v1/gb/entities/{eid}?user_id=u1").status == 404
    ds = gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"][0]
    assert (ds["entities"], ds["edges"], ds["artifacts"]) == (2, 1, 1)


def test_a_fact_another_text_states_stays(gb: Harness) -> None:
    gb.llm.script("extract", ALICE_ACME)
    one = gb.remember("Alice works at Acme.")
    gb.llm.script("extract", ALICE_ACME)
    two = gb.remember("Alice is still at Acme.")
    r = _forget(gb, one["artifact_id"])
    assert r.status == 200, r.body
    assert r.body["removed"]["edges"] == [] and r.body["removed"]["entities"] == []
    assert _live_facts(gb, "Alice") == [("Alice", "works_at", "Acme")]
    edge_id = one["edges"][0]["id"]
    r = gb.client.get(f"/v1/gb/edges/{edge_id}?user_id=u1")
    assert [s["artifact_id"] for s in r.body["sources"]] == [two["artifact_id"]]
    assert r.body["edge"]["artifact_id"] == two["artifact_id"]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/gb/artifacts/abc?user_id=u1",
        "/v1/gb/artifacts/0?user_id=u1",
        "/v1/gb/artifacts/-1?user_id=u1",
        "/v1/gb/artifacts/1",
        "/v1/gb/artifacts/1?user_id=u1&x=1",
        "/v1/gb/artifacts/1?user_id=u1&dataset=a%20b",
    ],
)
def test_bad_forgets_are_400_and_remove_nothing(gb: Harness, path: str) -> None:
    _moved(gb)
    before = gb.row_counts()
    r = gb.client.delete(path)
    assert r.status == 400, r.body
    assert r.body["error"]
    assert gb.row_counts() == before


def test_another_users_or_datasets_text_is_404_and_stays(gb: Harness) -> None:
    _, second = _moved(gb)
    before = gb.row_counts()
    assert _forget(gb, second, user="u2").status == 404
    assert _forget(gb, second, dataset="other").status == 404
    assert _forget(gb, 999).status == 404
    assert gb.row_counts() == before
    assert gb.client.get(f"/v1/gb/artifacts/{second}?user_id=u1").status == 200


def test_another_users_or_datasets_entity_and_fact_are_404(gb: Harness) -> None:
    gb.llm.script("extract", ALICE_ACME)
    done = gb.remember("Alice works at Acme.", session_id="s1")
    entity, edge = done["entities"][0]["id"], done["edges"][0]["id"]
    for path in (f"/v1/gb/entities/{entity}", f"/v1/gb/edges/{edge}"):
        assert gb.client.get(f"{path}?user_id=u1").status == 200
        for query in ("user_id=u2", "user_id=u1&dataset=other"):
            r = gb.client.get(f"{path}?{query}")
            assert r.status == 404, (path, query, r.body)
            assert r.body["error"]
        assert gb.client.get(f"{path}999?user_id=u1").status == 404


def test_browse_pages_to_the_end_and_refuses_bad_cursors(gb: Harness) -> None:
    first, second = _moved(gb)
    seen: list[str] = []
    cursor = None
    for _ in range(5):
        q = f"&cursor={cursor}" if cursor else ""
        r = gb.client.get(f"/v1/gb/entities?user_id=u1&limit=1{q}")
        assert r.status == 200, r.body
        seen += [e["name"] for e in r.body["entities"]]
        cursor = r.body["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == ["Acme", "Alice", "Globex"] and len(seen) == 3
    r = gb.client.get("/v1/gb/artifacts?user_id=u1&session_id=s1&limit=1")
    assert [a["id"] for a in r.body["artifacts"]] == [first]
    r = gb.client.get(f"/v1/gb/artifacts?user_id=u1&session_id=s1&cursor={r.body['next_cursor']}")
    assert [a["id"] for a in r.body["artifacts"]] == [second] and r.body["next_cursor"] is None
    r = gb.client.get("/v1/gb/artifacts?user_id=u1")
    assert [a["id"] for a in r.body["artifacts"]] == [second, first]
    r = gb.client.get(f"/v1/gb/artifacts/{second}?user_id=u1")
    assert r.status == 200 and r.body["artifact"]["text"] == "Alice moved from Acme to Globex."
    assert sorted(e["name"] for e in r.body["entities"]) == ["Alice", "Globex"]
    old = _live_facts(gb, "Acme")
    assert old == []  # the Acme fact was superseded
    # any string of a listing's cursor pattern (the OpenAPI document's) is a page
    for made_up in (
        "/v1/gb/entities?user_id=u1&cursor=e_000000000000",
        "/v1/gb/entities?user_id=u1&q=alice&cursor=e9999-99-99T99:99:99Z_999999999999999999",
        "/v1/gb/entities?user_id=u1&cursor=e0000-00-00T00:00:00Z_000000000001",
        "/v1/gb/artifacts?user_id=u1&cursor=a1",
        "/v1/gb/artifacts?user_id=u1&session_id=s1&cursor=a999999999999999999",
        "/v1/gb/artifacts?user_id=u1&session_id=nope&cursor=a1",
    ):
        r = gb.client.get(made_up)
        assert r.status == 200 and r.body["next_cursor"] is None, (made_up, r.body)
    r = gb.client.get(f"/v1/gb/artifacts?user_id=u1&cursor=a{second}")
    assert [a["id"] for a in r.body["artifacts"]] == [first]
    r = gb.client.get(f"/v1/gb/artifacts?user_id=u1&session_id=s1&cursor=a{first}")
    assert [a["id"] for a in r.body["artifacts"]] == [second]
    before = gb.row_counts()
    for bad in (
        "/v1/gb/entities?user_id=u1&cursor=zz",
        "/v1/gb/entities?user_id=u1&limit=0",
        "/v1/gb/entities?user_id=u1&limit=101",
        "/v1/gb/artifacts?user_id=u1&cursor=e30",
        "/v1/gb/entities?user_id=u1&cursor=a1",  # another listing's cursor
        "/v1/gb/artifacts?user_id=u1&cursor=e_000000000001",
        "/v1/gb/artifacts?user_id=u1&cursor=i2024-01-01T00:00:00Z_" + "0" * 32,
        "/v1/gb/artifacts?user_id=u1&cursor=a0",
        "/v1/gb/artifacts?user_id=u1&cursor=a01",
        "/v1/gb/entities?user_id=u1&cursor=e2024-01-01T00:00:00Z%23000000000001",
        "/v1/gb/entities?user_id=u1&cursor=eyJrIjoiZW50aXRpZXMifQ",
        "/v1/gb/edges/x?user_id=u1",
        "/v1/gb/entities/1.5?user_id=u1",
    ):
        r = gb.client.get(bad)
        assert r.status == 400, (bad, r.body)
    assert gb.row_counts() == before
    assert gb.client.get("/v1/gb/entities?user_id=u1&dataset=nope").status == 404
    assert gb.client.get(f"/v1/gb/artifacts/{second}?user_id=u2").status == 404


def test_the_mcp_forget_tool(gb: Harness) -> None:
    _, second = _moved(gb)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "forget", "arguments": {"user_id": "u1", "artifact_id": second}},
    }
    r = gb.client.post("/mcp", call)
    assert r.status == 200, r.body
    out = r.body["result"]["structuredContent"]
    assert out["artifact_id"] == second and len(out["restored"]["edges"]) == 1
    r = gb.client.post("/mcp", call)
    # The second time, the tool's error for the model: the text is gone.
    again = r.body["result"]
    assert again["isError"] is True and again["structuredContent"]["status"] == 404, r.body
    assert "does not exist" in again["content"][0]["text"], r.body


def test_another_principal_is_403_and_nothing_is_removed(gb: Harness) -> None:
    from gligabao.handlers import browse
    from gligabao.local.server import make_event

    _, second = _moved(gb)
    before = gb.row_counts()
    for method, target in [
        ("DELETE", f"/v1/gb/artifacts/{second}?user_id=u1"),
        ("GET", f"/v1/gb/artifacts/{second}?user_id=u1"),
        ("GET", "/v1/gb/artifacts?user_id=u1"),
        ("GET", "/v1/gb/entities?user_id=u1"),
        ("GET", "/v1/gb/entities/1?user_id=u1"),
        ("GET", "/v1/gb/edges/1?user_id=u1"),
    ]:
        event = make_event(method, target, {}, b"", "127.0.0.1")
        event["requestContext"]["authorizer"] = {
            "jwt": {"claims": {"sub": "mallory"}, "scopes": None}
        }
        out = browse.lambda_handler(event, None)
        assert out["statusCode"] == 403, (target, out["body"])
        assert json.loads(out["body"])["error"]
    assert gb.row_counts() == before
