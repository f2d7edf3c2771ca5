"""Concurrent remember calls (spec: remember.md, step 4 and Conventions):
the same new entity is created once, IDs stay unique and increasing."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from remember_helpers import ent, extraction, fact, key, remember_all

from conftest import Harness, Reply

N = 8


def _text(body: dict[str, Any]) -> str:
    """The call's own text in an extract prompt. Not the whole prompt: its
    <known_entities> come first and hold the texts of calls that committed
    already (Zed's facts "Zed met friend4."), so a search of the whole prompt
    finds another call's friend whenever this call extracts after one of
    them committed (the timing of a loaded full-suite run)."""
    m = re.search(r"<text>\n(.*?)\n</text>", body["messages"][0]["content"], re.S)
    assert m, body
    return m.group(1)


def _extract(body: dict[str, Any]) -> dict[str, Any]:
    """Every text "Zed met friend<i>." names Zed, and a friend of its own."""
    m = re.fullmatch(r"Zed met (friend\d+)\.", _text(body))
    assert m, body
    friend = m.group(1)
    return extraction(
        [ent("Zed", "person", f"met {friend}"), ent(friend, "person", "a friend of Zed")],
        [fact("Zed", friend, "met")],
    )


def test_concurrent_calls_create_a_new_entity_once(gb: Harness) -> None:
    gb.llm.default("extract", _extract)
    replies = remember_all(gb, [f"Zed met friend{i}." for i in range(N)])
    assert [r.status for r in replies] == [200] * N, [r.body for r in replies]
    outs = [r.body for r in replies]

    zeds = [next(e for e in out["entities"] if e["name"] == "Zed") for out in outs]
    assert len({z["id"] for z in zeds}) == 1, zeds
    assert sum(z["created"] for z in zeds) == 1, zeds
    # every call created its own friend
    friends = [next(e for e in out["entities"] if e["name"] != "Zed") for out in outs]
    assert [(f["name"], f["created"]) for f in friends] == [
        (f"friend{i}", True) for i in range(N)
    ], friends
    zed = zeds[0]["id"]
    rows = gb.scan("entities")
    names = sorted(r["name"]["S"] for r in rows)
    assert names == sorted(["Zed"] + [f"friend{i}" for i in range(N)]), outs
    assert len(gb.scan("names")) == N + 1
    # every edge points at the one Zed
    edges = list(gb.graph.iter_edges(key()))
    assert len(edges) == N
    assert {e.source_id for e in edges} == {zed}
    # IDs: unique, positive
    artifact_ids = [out["artifact_id"] for out in outs]
    assert len(set(artifact_ids)) == N and min(artifact_ids) >= 1
    entity_ids = [int(r["id"]["N"]) for r in rows]
    assert len(set(entity_ids)) == len(entity_ids) and min(entity_ids) >= 1
    assert len({e.id for e in edges}) == N
    # every call's description was kept
    desc = gb.graph.get_entities(key(), [zed])[zed].description
    for i in range(N):
        assert f"met friend{i}" in desc, desc
    assert sorted(gb.graph.entity_artifacts(key(), zed)) == sorted(artifact_ids)
    # the counts agree with the rows
    [ds] = gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"]
    assert (ds["entities"], ds["edges"], ds["artifacts"]) == (N + 1, N, N)

    # IDs keep increasing after the burst
    gb.llm.default("extract", extraction([ent("Yan", "person")], []))
    later = gb.remember("Yan arrived.")
    assert later["artifact_id"] > max(artifact_ids)
    assert later["entities"][0]["id"] > max(entity_ids)


def test_the_fake_model_reads_each_calls_own_text(gb: Harness) -> None:
    """A call after another committed sees "Zed met friend0." among Zed's
    known facts, before its own text: the fake must still answer friend1."""
    gb.llm.default("extract", _extract)
    first = gb.remember("Zed met friend0.")
    second = gb.remember("Zed met friend1.")
    assert "Zed met friend0." in gb.llm.requests_for("extract")[-1]["messages"][0]["content"]
    assert {e["name"]: e["created"] for e in first["entities"]} == {"Zed": True, "friend0": True}
    assert {e["name"]: e["created"] for e in second["entities"]} == {
        "Zed": False,
        "friend1": True,
    }
    assert sorted(r["name"]["S"] for r in gb.scan("entities")) == ["Zed", "friend0", "friend1"]


def test_concurrent_first_calls_create_the_dataset_once(gb: Harness) -> None:
    replies = remember_all(gb, [f"Nothing here {i}." for i in range(N)])
    assert [r.status for r in replies] == [200] * N, [r.body for r in replies]
    assert sorted(r.body["artifact_id"] for r in replies) == list(range(1, N + 1))
    assert len(gb.scan("datasets")) == 1


def test_concurrent_enrichment_of_an_existing_entity_loses_nothing(gb: Harness) -> None:
    gb.llm.script("extract", extraction([ent("Alice", "person", "engineer")]))
    gb.remember("Alice is an engineer.")

    def enrich(body: dict[str, Any]) -> dict[str, Any]:
        m = re.fullmatch(r"Alice likes (\w+)\.", _text(body))
        assert m, body
        return extraction([ent("Alice", "person", f"likes {m.group(1)}")])

    gb.llm.default("extract", enrich)
    hobbies = ["tea", "chess", "golf", "jazz"]
    replies = remember_all(gb, [f"Alice likes {h}." for h in hobbies])
    assert [r.status for r in replies] == [200] * len(hobbies), [r.body for r in replies]
    assert all(r.body["entities"][0]["created"] is False for r in replies)
    desc = gb.graph.get_entities(key(), [1])[1].description
    assert desc.startswith("engineer; ")
    for h in hobbies:
        assert f"likes {h}" in desc, desc
    assert len(gb.scan("entities")) == 1
    # the keyword index follows the description
    gb.llm.default("extract", extraction([]))
    gb.remember("Who plays golf?")
    assert "[entity 1] Alice" in gb.llm.requests_for("extract")[-1]["messages"][0]["content"]


def test_same_idempotency_key_while_the_first_call_runs(gb: Harness) -> None:
    gb.llm.script("extract", extraction([ent("Zed", "person")]))
    gb.llm.delay_next(1.5, stage="extract")
    body = {"user_id": "u1", "text": "Zed arrived."}
    headers = {"Idempotency-Key": "slow"}
    first: list[Reply] = []
    t = threading.Thread(
        target=lambda: first.append(gb.client.post("/v1/gb/remember", body, headers=headers))
    )
    t.start()
    deadline = time.monotonic() + 10
    while gb.llm.calls("extract") == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    during = gb.client.post("/v1/gb/remember", body, headers=headers)
    t.join(timeout=60)
    assert during.status == 409, during.body  # still in progress: not run twice
    assert set(during.body) == {"error"}
    assert first[0].status == 200, first[0].body
    after = gb.client.post("/v1/gb/remember", body, headers=headers)
    assert after.body == first[0].body
    assert gb.llm.calls("extract") == 1
    assert len(gb.scan("artifacts")) == 1
