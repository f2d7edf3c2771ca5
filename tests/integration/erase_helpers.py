"""What the erase tests share: a user with two datasets, an idempotent and a
queued remember, a text forgotten; another user who must keep everything;
and the checks that nothing of what went comes back through the API."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from conftest import Harness

# Distinctive, so that a scan for them can only find this user's traces.
USER = "zeph/quill 7"  # a "/" and a space: the path carries it percent-encoded
PATH_USER = quote(USER, safe="")
OTHER = "bob-keeps"
TEXT = "Zephyrine Quatermass works at Borogrove Labs."
SECOND = "Zephyrine Quatermass sings with the Wuffletown choir."
FORGOTTEN = "Zephyrine Quatermass once visited Snorkelhaven."
KEPT = "Bob likes Darjeeling tea."
NEEDLES = ("zephyrine", "quatermass", "borogrove", "wuffletown", "snorkelhaven", USER, "zeph")
FORGOTTEN_NEEDLES = ("snorkelhaven", "once visited")


def _extraction(names: list[tuple[str, str]], relation: str) -> dict[str, Any]:
    (a, ta), (b, tb) = names
    return {
        "entities": [{"name": a, "type": ta}, {"name": b, "type": tb}],
        "edges": [
            {"source": a, "target": b, "relation": relation, "description": f"{a} {relation} {b}."}
        ],
    }


ZEPH_WORK = _extraction(
    [("Zephyrine Quatermass", "person"), ("Borogrove Labs", "organization")], "works_at"
)
ZEPH_CHOIR = _extraction(
    [("Zephyrine Quatermass", "person"), ("Wuffletown choir", "group")], "member_of"
)
ZEPH_VISIT = _extraction([("Zephyrine Quatermass", "person"), ("Snorkelhaven", "place")], "visited")
BOB_TEA = _extraction([("Bob", "person"), ("Darjeeling tea", "drink")], "likes")


def populate(gb: Harness) -> dict[str, int]:
    """The user's memory (two datasets, an idempotency record, a queued
    remember done, a forgotten text) and the other user's. The highest
    artifact ID of the user's main dataset."""
    gb.llm.script("extract", ZEPH_WORK)
    r = gb.client.post(
        "/v1/gb/remember",
        {"user_id": USER, "text": TEXT},
        headers={"Idempotency-Key": "zeph-key-1"},
    )
    assert r.status == 200, r.body
    gb.llm.script("extract", ZEPH_VISIT)
    visit = gb.remember(FORGOTTEN, user=USER)["artifact_id"]
    gb.llm.script("extract", ZEPH_CHOIR)
    r = gb.client.post(
        "/v1/gb/remember",
        {"user_id": USER, "text": SECOND, "dataset": "hobbies"},
        headers={"Prefer": "respond-async"},
    )
    assert r.status == 202, r.body
    wait_call(gb, USER, r.body["call_id"])
    gb.llm.script("extract", BOB_TEA)
    r = gb.client.post(
        "/v1/gb/remember",
        {"user_id": OTHER, "text": KEPT},
        headers={"Idempotency-Key": "bob-key-1"},
    )
    assert r.status == 200, r.body
    # a forget first: its text must be gone before the erase too
    r = gb.client.delete(f"/v1/gb/artifacts/{visit}?user_id={PATH_USER}")
    assert r.status == 200, r.body
    return {"last_artifact": visit}


def wait_call(gb: Harness, user: str, call_id: str) -> dict[str, Any]:
    import time

    for _ in range(400):
        r = gb.client.get(f"/v1/gb/calls/{call_id}?user_id={quote(user, safe='')}")
        if r.status == 200 and r.body["status"] not in ("accepted", "running"):
            return dict(r.body)
        time.sleep(0.05)
    raise AssertionError(f"call {call_id} did not finish")


def erase(gb: Harness, user: str = USER) -> dict[str, Any]:
    r = gb.client.delete(f"/v1/gb/users/{quote(user, safe='')}")
    assert r.status == 202, r.body
    assert r.headers.get("Location") == f"/v1/gb/calls/{r.body['call_id']}"
    return dict(r.body)


def traces(raw: str, needles: tuple[str, ...] = NEEDLES) -> list[str]:
    low = raw.lower()
    return [n for n in needles if n.lower() in low]


def assert_api_returns_nothing(gb: Harness) -> None:
    """query, search, every browse route, MCP, export: nothing of the user."""
    from gligabao import wiring
    from gligabao.memory.transfer import export_dataset
    from gligabao.models import DatasetKey

    u = PATH_USER
    r = gb.client.get(f"/v1/gb/inferences?user_id={u}")
    assert r.status == 200 and r.body["inferences"] == [], r.body
    for dataset in ("main", "hobbies"):
        assert gb.client.get(f"/v1/gb/entities?user_id={u}&dataset={dataset}").status == 404
        assert gb.client.get(f"/v1/gb/artifacts?user_id={u}&dataset={dataset}").status == 404
        for path in ("entities/1", "edges/1", "artifacts/1"):
            assert gb.client.get(f"/v1/gb/{path}?user_id={u}&dataset={dataset}").status == 404
        assert list(export_dataset(wiring.graph_store(), DatasetKey(USER, dataset))) == []
        for route in ("query", "search"):
            r = gb.client.post(
                f"/v1/gb/{route}",
                {"user_id": USER, "query": "Where does she work?", "dataset": dataset},
            )
            assert r.status == 404 or not traces(json.dumps(r.body)), (route, r.body)
    assert gb.client.get(f"/v1/gb/datasets?user_id={u}").body == {"datasets": []}
    mcp = gb.client.post(
        "/mcp",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "search",
                "arguments": {"user_id": USER, "query": "Where does she work?"},
            },
        },
    )
    assert mcp.status == 200 and not traces(json.dumps(mcp.body).replace(USER, "")), mcp.body


def assert_other_user_kept(gb: Harness) -> None:
    r = gb.client.get(f"/v1/gb/artifacts?user_id={OTHER}")
    assert r.status == 200 and [a["text"] for a in r.body["artifacts"]] == [KEPT], r.body
    # the other user's idempotency record still replays (no new extraction)
    before = gb.llm.calls("extract")
    r = gb.client.post(
        "/v1/gb/remember",
        {"user_id": OTHER, "text": KEPT},
        headers={"Idempotency-Key": "bob-key-1"},
    )
    assert r.status == 200 and gb.llm.calls("extract") == before, r.body
