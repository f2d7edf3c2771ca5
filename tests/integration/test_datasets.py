"""Datasets (issue "Call records, costs, datasets"): `GET /v1/gb/datasets`
lists a user's datasets with their counts; `DELETE /v1/gb/datasets/{name}`
removes every row, link, term, name claim, counter, vector and record of the
dataset, and nothing of any other dataset or user."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import Harness, Reply

TS_LEN = len("2025-01-31T09:00:00Z")
SEP = "\x1f"
PARTITIONED = ("entities", "names", "terms", "edges", "artifacts", "links")
RECORDS = ("calls", "inferences")
KINDS = ("entities", "edges", "chunks", "summaries")

ALICE_ACME = {
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
BOB_TEA = {
    "entities": [{"name": "Bob", "type": "person"}, {"name": "Tea", "type": "drink"}],
    "edges": [
        {"source": "Bob", "target": "Tea", "relation": "likes", "description": "Bob likes tea."}
    ],
}
LONG_TEXT = "\n\n".join(
    f"Paragraph {i}: Alice moved from Acme to Globex in the spring and spent the summer "
    f"learning the ropes of her new team number {i}."
    for i in range(8)
)


@pytest.fixture
def gb_env() -> dict[str, str]:
    # Small chunks, so that a dataset also has chunk artifacts, summaries and
    # the chunks / summaries vectors.
    return {
        "GB_CHUNK_THRESHOLD_TOKENS": "150",
        "GB_CHUNK_TOKENS": "80",
        "GB_CHUNK_OVERLAP_TOKENS": "10",
    }


# --- helpers -------------------------------------------------------------------


def _s(item: dict[str, Any], name: str) -> str | None:
    value = item.get(name)
    return value.get("S") if isinstance(value, dict) else None


def belongs(short: str, item: dict[str, Any], user: str, dataset: str) -> bool:
    """Whether an item of a table is part of (user, dataset)."""
    if short == "datasets":
        return _s(item, "user_id") == user and _s(item, "name") == dataset
    if short in PARTITIONED:
        return _s(item, "pk") == f"{user}{SEP}{dataset}"
    if short in RECORDS:
        return _s(item, "user_id") == user and _s(item, "dataset") == dataset
    return False


def snapshot(gb: Harness) -> dict[str, list[str]]:
    """Every item of every table, canonical and sorted."""
    from gligabao.dynamodb.tables import ALL_MODELS, short_name

    return {
        short_name(m): sorted(json.dumps(i, sort_keys=True) for i in gb.scan(short_name(m)))
        for m in ALL_MODELS
    }


def items_of(snap: dict[str, list[str]], user: str, dataset: str) -> dict[str, int]:
    return {
        short: sum(1 for raw in items if belongs(short, json.loads(raw), user, dataset))
        for short, items in snap.items()
    }


def without(snap: dict[str, list[str]], user: str, dataset: str) -> dict[str, list[str]]:
    return {
        short: [raw for raw in items if not belongs(short, json.loads(raw), user, dataset)]
        for short, items in snap.items()
    }


def vector_counts(gb: Harness, user: str, dataset: str) -> dict[str, int]:
    from gligabao.models import DatasetKey

    return {kind: gb.vectors.count(DatasetKey(user, dataset), kind) for kind in KINDS}


def list_datasets(gb: Harness, user: str) -> list[dict[str, Any]]:
    r = gb.client.get(f"/v1/gb/datasets?user_id={user}")
    assert r.status == 200, r.body
    assert set(r.body) == {"datasets"}
    return list(r.body["datasets"])


def delete(gb: Harness, name: str, user: str | None = "u1") -> Reply:
    query = f"?user_id={user}" if user is not None else ""
    return gb.client.delete(f"/v1/gb/datasets/{name}{query}")


def populate(gb: Harness) -> None:
    """u1/main: facts, an invalidation, a chunked text, queries; u1/keep and
    u2/main: a little of everything too."""
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.", session_id="s1")
    gb.llm.script("extract", ALICE_GLOBEX)
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    out = gb.remember(LONG_TEXT)
    assert out["chunks"] >= 2 and out["invalidated"]
    gb.query("Where does Alice work?")
    gb.llm.script("extract", BOB_TEA)
    gb.remember("Bob likes tea.", dataset="keep")
    gb.query("Who likes tea?", dataset="keep")
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.", user="u2")
    gb.query("Where does Alice work?", user="u2")


# --- listing ----------------------------------------------------------------------------


def test_list_datasets_with_counts(gb: Harness) -> None:
    assert list_datasets(gb, "u1") == []
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.")
    gb.llm.script("extract", ALICE_GLOBEX)
    chunked = gb.remember(LONG_TEXT)
    gb.llm.script("extract", BOB_TEA)
    gb.remember("Bob likes tea.", dataset="b.set-1_x")
    gb.remember("Nothing to extract.", dataset="b.set-1_x")
    gb.remember("Carol.", user="u2", dataset="zzz")

    got = list_datasets(gb, "u1")
    assert [d["name"] for d in got] == ["b.set-1_x", "main"]
    for d in got:
        assert set(d) == {"name", "created_at", "entities", "edges", "artifacts"}
        assert len(d["created_at"]) == TS_LEN and d["created_at"].endswith("Z")
    main, other = got[1], got[0]
    # Alice, Acme, Globex; works_at Acme and works_at Globex (the first one
    # superseded but kept); two texts plus the chunks of the long one.
    assert (main["entities"], main["edges"], main["artifacts"]) == (3, 2, 2 + chunked["chunks"])
    assert (other["entities"], other["edges"], other["artifacts"]) == (2, 1, 2)
    assert [d["name"] for d in list_datasets(gb, "u2")] == ["zzz"]
    assert list_datasets(gb, "nobody") == []


def test_a_failed_remember_creates_no_dataset(gb: Harness) -> None:
    gb.llm.fail_next(500, stage="extract")
    gb.remember("Alice works at Acme.", dataset="new", status=502)
    assert list_datasets(gb, "u1") == []


@pytest.mark.parametrize(
    "path",
    [
        "/v1/gb/datasets",
        "/v1/gb/datasets?dataset=main",
        "/v1/gb/datasets?user_id=",
        "/v1/gb/datasets?user_id=u1&other=1",
        "/v1/gb/datasets?user_id=a%01b",
    ],
)
def test_list_datasets_bad_requests(gb: Harness, path: str) -> None:
    r = gb.client.get(path)
    assert r.status == 400, r.body
    assert r.body["error"]


# --- delete --------------------------------------------------------------------------------


def test_delete_dataset_removes_everything_of_it_and_nothing_else(gb: Harness) -> None:
    populate(gb)
    before = snapshot(gb)
    present = items_of(before, "u1", "main")
    # Every kind of item exists before, so that its absence after means something.
    assert all(present[t] > 0 for t in ("datasets", *PARTITIONED, *RECORDS)), present
    assert all(n > 0 for n in vector_counts(gb, "u1", "main").values())
    keep_vectors = vector_counts(gb, "u1", "keep")
    u2_vectors = vector_counts(gb, "u2", "main")
    assert keep_vectors["entities"] > 0 and u2_vectors["entities"] > 0

    r = delete(gb, "main")
    assert r.status == 204, r.body
    assert r.body is None  # no content

    after = snapshot(gb)
    left = items_of(after, "u1", "main")
    # The dataset row stays, marked deleted, with its ID counters: IDs are never
    # reused, so a vector left anywhere can never name a later row.
    assert left.pop("datasets") == 1
    assert all(n == 0 for n in left.values()), left
    (row,) = [
        json.loads(raw)
        for raw in after["datasets"]
        if belongs("datasets", json.loads(raw), "u1", "main")
    ]
    assert row["deleted_at"]
    after = {**after, "datasets": [r for r in after["datasets"] if json.loads(r) != row]}
    assert vector_counts(gb, "u1", "main") == dict.fromkeys(KINDS, 0)
    # Nothing else changed: not u1's other dataset, not u2's "main".
    assert after == without(before, "u1", "main")
    assert vector_counts(gb, "u1", "keep") == keep_vectors
    assert vector_counts(gb, "u2", "main") == u2_vectors
    assert [d["name"] for d in list_datasets(gb, "u1")] == ["keep"]
    assert [d["name"] for d in list_datasets(gb, "u2")] == ["main"]
    assert gb.query("Where does Alice work?", user="u2")["answer"]
    calls = gb.client.get("/v1/gb/inferences?user_id=u1&dataset=main")
    assert calls.status == 200 and calls.body == {"inferences": [], "next": None}
    assert gb.client.get("/v1/gb/inferences?user_id=u1&dataset=keep").body["inferences"]

    # A query on it afterwards: 404.
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"})
    assert r.status == 404, r.body
    assert "main" in r.body["error"]
    # Deleting it again: 404.
    assert delete(gb, "main").status == 404


def test_remember_after_delete_starts_a_fresh_dataset(gb: Harness) -> None:
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.")
    gb.llm.script("extract", BOB_TEA)
    first = gb.remember("Bob likes tea.")
    assert first["artifact_id"] == 2 and [e["id"] for e in first["entities"]] == [3, 4]
    assert delete(gb, "main").status == 204

    # A fresh dataset of the same name, whose IDs go on above the deleted ones'
    # (never reused: a stale vector can never resolve to a new row).
    gb.llm.script("extract", ALICE_GLOBEX)
    out = gb.remember("Alice works at Globex.")
    assert out["artifact_id"] == 3
    assert [(e["id"], e["name"], e["created"]) for e in out["entities"]] == [
        (5, "Alice", True),
        (6, "Globex", True),
    ]
    assert [e["id"] for e in out["edges"]] == [3]
    assert out["invalidated"] == []  # the old facts are gone, not superseded
    (listed,) = list_datasets(gb, "u1")
    assert (listed["entities"], listed["edges"], listed["artifacts"]) == (2, 1, 1)
    # chunks: the new short text is a passage
    assert vector_counts(gb, "u1", "main") == {
        "entities": 2,
        "edges": 1,
        "chunks": 1,
        "summaries": 0,
    }
    # Nothing of the old dataset reaches a query.
    gb.llm.script(
        "query",
        {"answer": "Globex.", "entities": [1, 2, 3, 4, 5, 6], "edges": [1, 2, 3], "passages": []},
    )
    q = gb.query("Where does Alice work? Does Bob like tea?")
    assert [e["name"] for e in q["evidence"]["entities"]] == ["Alice", "Globex"]
    assert [e["relation"] for e in q["evidence"]["edges"]] == ["works_at"]
    prompt = gb.llm.requests_for("query")[0]["messages"][0]["content"]
    assert "Acme" not in prompt and "Bob" not in prompt.split("<question>")[0]


def test_delete_missing_dataset_is_404_and_changes_nothing(gb: Harness) -> None:
    populate(gb)
    before = snapshot(gb)
    vectors = {
        (u, d): vector_counts(gb, u, d) for u, d in (("u1", "main"), ("u1", "keep"), ("u2", "main"))
    }
    r = delete(gb, "missing")
    assert r.status == 404, r.body
    assert "missing" in r.body["error"]
    # u2 has no dataset "keep": the name of another user's dataset is not found.
    assert delete(gb, "keep", user="u2").status == 404
    assert delete(gb, "main", user="u3").status == 404
    assert snapshot(gb) == before
    assert {k: vector_counts(gb, *k) for k in vectors} == vectors


@pytest.mark.parametrize("name", ["bad!name", "a" * 65, "sp%20ace", "%C3%A9t%C3%A9"])
def test_delete_bad_dataset_name_is_400(gb: Harness, name: str) -> None:
    gb.remember("Bob likes tea.")
    before = snapshot(gb)
    r = delete(gb, name)
    assert r.status == 400, r.body
    assert "dataset" in r.body["error"]
    assert snapshot(gb) == before


def test_delete_needs_a_user(gb: Harness) -> None:
    gb.remember("Bob likes tea.")
    before = snapshot(gb)
    r = delete(gb, "main", user=None)
    assert r.status == 400 and "user_id" in r.body["error"]
    r = gb.client.delete("/v1/gb/datasets/main?user_id=")
    assert r.status == 400
    r = gb.client.delete("/v1/gb/datasets/main?user_id=u1&force=1")
    assert r.status == 400
    assert snapshot(gb) == before
    assert [d["name"] for d in list_datasets(gb, "u1")] == ["main"]
