"""The records of each call (issue "Call records, costs, datasets"): one
inference row per LLM or embeddings request, priced from the price table;
the trajectory of each call; `GET /v1/gb/inferences` and
`GET /v1/gb/calls/{id}`; reasoning levels and per-stage models as they reach
the request and the rows; the monitoring log line and EMF metrics."""

from __future__ import annotations

import base64
import json
import logging
import re
import sys
from collections import Counter
from typing import Any
from urllib.parse import urlencode

import pytest

from conftest import Harness, Reply

DEFAULT_MODEL = "claude-haiku-5-5"
EMBED_MODEL = "text-embedding-3-small"
# USD per million tokens: cost_usd == input + 2 * output (LLM), == input (embeddings).
PRICES = {DEFAULT_MODEL: [1_000_000, 2_000_000], EMBED_MODEL: [1_000_000, 0]}
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
QUERY_STEPS = [
    "parse",
    "keyword_seeds",
    "search_vectors",
    "expand",
    "entities",
    "passages",
    "score",
    "fill",
    "llm",
    "evidence",
]
REMEMBER_STEPS = [
    "parse",
    "chunk",
    "embed_text",
    "known_entities",
    "context",
    "summarize",
    "extract",
    "resolve",
    "facts",
    "invalidate",
    "write",
]
BUDGETS = {"low": 1024, "medium": 4096, "high": 16384}

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
# Long enough to be chunked with the thresholds below (about 250 tokens).
LONG_TEXT = "\n\n".join(
    f"Paragraph {i}: Alice moved from Acme to Globex in the spring and spent the summer "
    f"learning the ropes of her new team number {i}."
    for i in range(8)
)


@pytest.fixture
def gb_env() -> dict[str, str]:
    return {
        "GB_PRICES": json.dumps(PRICES),
        "GB_CHUNK_THRESHOLD_TOKENS": "150",
        "GB_CHUNK_TOKENS": "80",
        "GB_CHUNK_OVERLAP_TOKENS": "10",
    }


# --- helpers -------------------------------------------------------------------


def get(gb: Harness, path: str, **params: Any) -> Reply:
    return gb.client.get(f"{path}?{urlencode(params)}" if params else path)


def inferences(gb: Harness, user: str = "u1", **params: Any) -> list[dict[str, Any]]:
    """Every inference of a listing, all pages (limit 200: one page here)."""
    r = get(gb, "/v1/gb/inferences", user_id=user, limit=200, **params)
    assert r.status == 200, r.body
    assert r.body["next"] is None
    return list(r.body["inferences"])


def pages(gb: Harness, limit: int, user: str = "u1", **params: Any) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = []
    cursor: str | None = None
    while True:
        extra = {"cursor": cursor} if cursor else {}
        r = get(gb, "/v1/gb/inferences", user_id=user, limit=limit, **params, **extra)
        assert r.status == 200, r.body
        assert len(r.body["inferences"]) <= limit
        out.append(r.body["inferences"])
        cursor = r.body["next"]
        if cursor is None:
            return out
        assert len(out) < 100, "pagination does not end"


def call_record(gb: Harness, call_id: str, user: str = "u1") -> dict[str, Any]:
    r = get(gb, f"/v1/gb/calls/{call_id}", user_id=user)
    assert r.status == 200, r.body
    return dict(r.body)


def post_remember(gb: Harness, text: str, user: str = "u1", **extra: Any) -> Reply:
    return gb.client.post("/v1/gb/remember", {"user_id": user, "text": text, **extra})


def post_query(gb: Harness, question: str, user: str = "u1", **extra: Any) -> Reply:
    return gb.client.post("/v1/gb/query", {"user_id": user, "query": question, **extra})


def requests_signature(gb: Harness) -> Counter[tuple[str, str, int, int]]:
    """(stage, model, input tokens, output tokens) of every request the fakes
    received, from the usage they reported."""
    sig: Counter[tuple[str, str, int, int]] = Counter()
    for req in gb.llm.requests:
        usage = (req.reply or {}).get("usage") or {}
        sig[
            (
                req.stage or "",
                req["model"],
                usage.get("input_tokens", 0),
                usage.get("output_tokens", 0),
            )
        ] += 1
    for req in gb.emb.requests:
        usage = (req.reply or {}).get("usage") or {}
        sig[("embed", req["model"], usage.get("prompt_tokens", 0), 0)] += 1
    return sig


def rows_signature(rows: list[dict[str, Any]]) -> Counter[tuple[str, str, int, int]]:
    return Counter((r["stage"], r["model"], r["input_tokens"], r["output_tokens"]) for r in rows)


def check_ok_row(
    row: dict[str, Any],
    *,
    call_id: str,
    type_: str,
    dataset: str = "main",
    session_id: str | None = None,
    user: str = "u1",
) -> None:
    assert row["call_id"] == call_id
    assert row["type"] == type_
    assert row["user_id"] == user
    assert row["dataset"] == dataset
    assert row["session_id"] == session_id
    assert row["status"] == "ok"
    assert row["input_tokens"] > 0
    assert isinstance(row["latency_ms"], int) and row["latency_ms"] >= 0
    assert TS.match(row["created_at"]), row["created_at"]
    assert isinstance(row["id"], str) and row["id"]
    if row["stage"] == "embed":
        assert row["model"] == EMBED_MODEL
        assert row["reasoning"] == "none"
        assert row["output_tokens"] == 0
        assert row["thinking_tokens"] is None
        assert row["cost_usd"] == row["input_tokens"]
    else:
        assert row["output_tokens"] > 0
        if row["model"] == DEFAULT_MODEL:
            assert row["cost_usd"] == row["input_tokens"] + 2 * row["output_tokens"]


def reset_fakes(gb: Harness) -> None:
    """Forget the requests so far (scripts too: script after this)."""
    gb.llm.reset()
    gb.emb.reset()


# --- one row per request ----------------------------------------------------------


def test_remember_has_one_row_per_request(gb: Harness) -> None:
    gb.llm.script("extract", ALICE_ACME)
    r = post_remember(gb, "Alice works at Acme.", dataset="d1", session_id="s1")
    assert r.status == 200, r.body
    assert re.fullmatch(r"[0-9a-f]{32}", r.call_id)
    rows = inferences(gb, call_id=r.call_id)
    assert len(rows) == gb.llm.calls() + gb.emb.calls() == 3
    assert Counter(row["stage"] for row in rows) == {"extract": 1, "embed": 2}
    assert rows_signature(rows) == requests_signature(gb)
    for row in rows:
        check_ok_row(row, call_id=r.call_id, type_="remember", dataset="d1", session_id="s1")
    extract = next(row for row in rows if row["stage"] == "extract")
    assert extract["model"] == DEFAULT_MODEL
    assert extract["reasoning"] == "none"
    assert extract["thinking_tokens"] is None


def test_remember_every_stage_has_its_rows(gb: Harness) -> None:
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.")
    reset_fakes(gb)
    # A chunked text: a summary and an extraction per chunk; the first chunk
    # states a new employer, so the live works_at fact is a candidate.
    gb.llm.script("extract", ALICE_GLOBEX)
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    r = post_remember(gb, LONG_TEXT, session_id="s9")
    assert r.status == 200, r.body
    chunks = r.body["chunks"]
    assert chunks >= 2
    assert [i["id"] for i in r.body["invalidated"]] == [1]
    rows = inferences(gb, call_id=r.call_id)
    assert Counter(row["stage"] for row in rows) == {
        "summarize": chunks,
        "extract": chunks,
        "invalidate": 1,
        "embed": 2,
    }
    assert len(rows) == gb.llm.calls() + gb.emb.calls()
    assert rows_signature(rows) == requests_signature(gb)
    for row in rows:
        check_ok_row(row, call_id=r.call_id, type_="remember", session_id="s9")

    call = call_record(gb, r.call_id)
    assert call["type"] == "remember"
    assert call["status"] == "ok"
    assert call["session_id"] == "s9"
    assert TS.match(call["started_at"])
    assert [s["name"] for s in call["steps"]] == REMEMBER_STEPS
    steps = {s["name"]: s for s in call["steps"]}
    assert all(isinstance(s["ms"], int | float) and s["ms"] >= 0 for s in call["steps"])
    assert steps["chunk"]["chunks"] == chunks
    assert steps["summarize"]["chunks"] == chunks
    assert steps["embed_text"]["inputs"] == chunks
    assert steps["known_entities"]["entities"] >= 1
    assert steps["invalidate"] == {**steps["invalidate"], "candidates": 1, "invalidated": 1}
    assert steps["write"]["edges"] == 1
    assert call["duration_ms"] >= sum(s["ms"] for s in call["steps"]) - 1


def test_query_rows_and_trajectory(gb: Harness) -> None:
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.")
    reset_fakes(gb)
    gb.llm.script("query", {"answer": "At Acme.", "entities": [1], "edges": [1], "passages": []})
    r = post_query(gb, "Where does Alice work?", session_id="s2")
    assert r.status == 200, r.body
    rows = inferences(gb, call_id=r.call_id)
    assert Counter(row["stage"] for row in rows) == {"query": 1, "embed": 1}
    assert len(rows) == gb.llm.calls() + gb.emb.calls()
    assert rows_signature(rows) == requests_signature(gb)
    for row in rows:
        check_ok_row(row, call_id=r.call_id, type_="query", session_id="s2")

    call = call_record(gb, r.call_id)
    assert call["call_id"] == r.call_id
    assert (call["type"], call["status"], call["session_id"]) == ("query", "ok", "s2")
    assert [s["name"] for s in call["steps"]] == QUERY_STEPS
    steps = {s["name"]: s for s in call["steps"]}
    assert all(isinstance(s["ms"], int | float) and s["ms"] >= 0 for s in call["steps"])
    assert steps["keyword_seeds"]["seeds"] >= 1
    assert steps["search_vectors"]["entities"] >= 0
    assert steps["expand"]["edges"] == 1
    assert steps["entities"]["entities"] == 2
    assert steps["fill"] == {**steps["fill"], "budget": 3000, "edges": 1}
    query_row = next(row for row in rows if row["stage"] == "query")
    assert steps["llm"]["input_tokens"] == query_row["input_tokens"]
    assert steps["evidence"] == {**steps["evidence"], "entities": 2, "edges": 1, "passages": 0}


def test_query_without_context_makes_no_llm_request(gb: Harness) -> None:
    gb.remember("Nothing to extract here.")
    reset_fakes(gb)
    r = post_query(gb, "Where does Alice work?")
    assert r.status == 200, r.body
    rows = inferences(gb, call_id=r.call_id)
    assert [row["stage"] for row in rows] == ["embed"]
    assert gb.llm.calls() == 0 and gb.emb.calls() == 1
    call = call_record(gb, r.call_id)
    assert [s["name"] for s in call["steps"]] == QUERY_STEPS[:8]


def test_large_embedding_batches_get_a_row_per_request(
    gb: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gligabao.ai import port

    monkeypatch.setattr(port, "EMBED_BATCH", 2)
    gb.llm.script(
        "extract",
        {
            "entities": [
                {"name": n, "type": "person"} for n in ("Ann", "Ben", "Cid", "Dan", "Eve")
            ],
            "edges": [],
        },
    )
    r = post_remember(gb, "Ann, Ben, Cid, Dan and Eve are friends.")
    assert r.status == 200, r.body
    rows = inferences(gb, call_id=r.call_id)
    # 1 text, then 5 names in batches of 2: 1 + 3 embeddings requests.
    assert gb.emb.calls() == 4
    assert len(rows) == gb.llm.calls() + gb.emb.calls() == 5
    assert rows_signature(rows) == requests_signature(gb)


# --- failures ----------------------------------------------------------------------


def test_failed_llm_call_is_recorded(gb: Harness) -> None:
    gb.llm.fail_next(500, stage="extract")
    r = post_remember(gb, "Alice works at Acme.", session_id="s1")
    assert r.status == 502, r.body
    assert r.call_id
    rows = inferences(gb, call_id=r.call_id)
    assert len(rows) == gb.llm.calls() + gb.emb.calls() == 2  # no retry: GB_LLM_MAX_RETRIES=0
    failed = next(row for row in rows if row["stage"] == "extract")
    assert failed["status"] == "LLM call failed: HTTP 500"
    assert (failed["input_tokens"], failed["output_tokens"], failed["cost_usd"]) == (0, 0, 0)
    assert failed["model"] == DEFAULT_MODEL and failed["session_id"] == "s1"
    assert next(row for row in rows if row["stage"] == "embed")["status"] == "ok"
    call = call_record(gb, r.call_id)
    assert call["status"] == "LLM call failed: HTTP 500" == r.body["error"]
    assert call["type"] == "remember"
    assert [s["name"] for s in call["steps"]][-1] == "extract"
    # Nothing of the failed call was written.
    assert gb.graph.get_dataset(_key("u1", "main")) is None


def test_failed_query_llm_call_is_recorded(gb: Harness) -> None:
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.")
    gb.llm.fail_next(500, stage="query")
    r = post_query(gb, "Where does Alice work?")
    assert r.status == 502, r.body
    rows = inferences(gb, call_id=r.call_id)
    assert {row["stage"]: row["status"] for row in rows} == {
        "embed": "ok",
        "query": "LLM call failed: HTTP 500",
    }
    call = call_record(gb, r.call_id)
    assert call["status"] == "LLM call failed: HTTP 500"
    assert [s["name"] for s in call["steps"]] == QUERY_STEPS[:9]


def test_unusable_replies_are_recorded_with_their_usage(gb: Harness) -> None:
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.")
    reset_fakes(gb)
    gb.llm.script("query", "no JSON at all")
    r = post_query(gb, "Where does Alice work?")
    assert r.status == 502, r.body
    row = next(row for row in inferences(gb, call_id=r.call_id) if row["stage"] == "query")
    assert row["status"] == "unparsable reply"
    assert row["input_tokens"] > 0 and row["output_tokens"] > 0
    assert row["cost_usd"] == row["input_tokens"] + 2 * row["output_tokens"]
    assert call_record(gb, r.call_id)["status"] == r.body["error"]

    gb.llm.truncate_next(stage="extract")
    r = post_remember(gb, "Bob likes tea.")
    assert r.status == 502, r.body
    row = next(row for row in inferences(gb, call_id=r.call_id) if row["stage"] == "extract")
    assert row["status"] == "LLM reply was cut at the token limit"
    assert row["output_tokens"] == 4096  # the fake reports max_tokens when it cuts
    assert row["cost_usd"] == row["input_tokens"] + 2 * 4096


def test_failed_embeddings_request_is_recorded(gb: Harness) -> None:
    gb.emb.fail_next(500)
    r = post_remember(gb, "Alice works at Acme.")
    assert r.status == 502, r.body
    rows = inferences(gb, call_id=r.call_id)
    assert len(rows) == gb.emb.calls() == 1 and gb.llm.calls() == 0
    assert rows[0]["stage"] == "embed"
    assert rows[0]["status"].startswith("embeddings request failed")
    assert call_record(gb, r.call_id)["status"] == r.body["error"]


# --- GET /v1/gb/inferences --------------------------------------------------------------


def _key(user: str, dataset: str) -> Any:
    from gligabao.models import DatasetKey

    return DatasetKey(user, dataset)


def _some_calls(gb: Harness) -> list[str]:
    """Calls in two datasets and two sessions; returns their call ids in order."""
    ids = []
    gb.llm.script("extract", ALICE_ACME)
    ids.append(post_remember(gb, "Alice works at Acme.", session_id="a").call_id)
    ids.append(post_remember(gb, "Bob likes tea.", dataset="other", session_id="b").call_id)
    ids.append(post_query(gb, "Where does Alice work?", session_id="a").call_id)
    ids.append(post_query(gb, "Who likes tea?", dataset="other").call_id)
    ids.append(post_remember(gb, "Carol lives in Lyon.", session_id="b").call_id)
    return ids


def test_inferences_newest_first(gb: Harness) -> None:
    ids = _some_calls(gb)
    rows = inferences(gb)
    assert len(rows) == gb.llm.calls() + gb.emb.calls()
    assert [r["created_at"] for r in rows] == sorted((r["created_at"] for r in rows), reverse=True)
    # Newest first also within a second: the calls come in reverse order, and
    # the rows of a call in reverse order of its requests.
    seen = list(dict.fromkeys(r["call_id"] for r in rows))
    assert seen == ids[::-1]
    query = [r["stage"] for r in rows if r["call_id"] == ids[2]]
    assert query == ["query", "embed"]
    remember = [r["stage"] for r in rows if r["call_id"] == ids[0]]
    assert remember == ["embed", "extract", "embed"]


@pytest.mark.parametrize("limit", [1, 2, 3, 7])
def test_inferences_pagination(gb: Harness, limit: int) -> None:
    _some_calls(gb)
    everything = inferences(gb)
    got = pages(gb, limit)
    assert all(len(p) == limit for p in got[:-1])
    flat = [r for p in got for r in p]
    assert flat == everything
    assert len({r["id"] for r in flat}) == len(flat)


def test_inferences_filters(gb: Harness) -> None:
    ids = _some_calls(gb)
    everything = inferences(gb)

    other = inferences(gb, dataset="other")
    assert other == [r for r in everything if r["dataset"] == "other"]
    assert {r["call_id"] for r in other} == {ids[1], ids[3]}

    session_a = inferences(gb, session_id="a")
    assert session_a == [r for r in everything if r["session_id"] == "a"]
    assert {r["call_id"] for r in session_a} == {ids[0], ids[2]}

    one_call = inferences(gb, call_id=ids[4])
    assert one_call == [r for r in everything if r["call_id"] == ids[4]]
    assert len(one_call) == 2  # embed, extract (nothing extracted: no second embed)

    both = inferences(gb, dataset="main", session_id="b")
    assert {r["call_id"] for r in both} == {ids[4]}
    assert inferences(gb, dataset="other", call_id=ids[0]) == []
    assert inferences(gb, dataset="nothing-here") == []

    # Pages of a filtered listing: every row exactly once.
    flat = [r for p in pages(gb, 1, session_id="a") for r in p]
    assert flat == session_a


def test_inferences_of_other_users_are_never_listed(gb: Harness) -> None:
    mine = post_remember(gb, "Alice works at Acme.").call_id
    theirs = post_remember(gb, "Bob likes tea.", user="u2").call_id
    post_query(gb, "Who likes tea?", user="u2")
    rows = inferences(gb)
    assert {r["call_id"] for r in rows} == {mine}
    assert {r["user_id"] for r in rows} == {"u1"}
    assert inferences(gb, call_id=theirs) == []
    their_rows = inferences(gb, user="u2")
    assert {r["user_id"] for r in their_rows} == {"u2"}, their_rows
    # u2's remember (its text embedded, one extraction) and query (the question
    # embedded; the stored text is a passage, so the model is asked)
    assert sorted(r["stage"] for r in their_rows) == ["embed", "embed", "extract", "query"]
    # A cursor of u1 used by u2 only ever reads u2's partition.
    first = get(gb, "/v1/gb/inferences", user_id="u1", limit=1)
    assert first.body["next"]
    r = get(gb, "/v1/gb/inferences", user_id="u2", cursor=first.body["next"], limit=200)
    assert r.status == 200, r.body
    assert {x["user_id"] for x in r.body["inferences"]} <= {"u2"}
    # The call records too.
    assert get(gb, f"/v1/gb/calls/{theirs}", user_id="u1").status == 404
    assert get(gb, f"/v1/gb/calls/{mine}", user_id="u2").status == 404


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "limit=201",
        "limit=-1",
        "limit=abc",
        "limit=",
        "limit=1.5",
        "cursor=%21%21",
        "cursor=e30",
        "dataset=bad%2Fname",
        "dataset=",
        "nope=1",
        "user_id=",
        "limit=%C2%B2",
        "cursor=" + base64.urlsafe_b64encode(json.dumps({"sk": "x" * 1025}).encode()).decode(),
        # cursors of another shape: the sort key as stored, another listing's, a near miss
        "cursor=2024-01-01T00:00:00Z%23" + "0" * 32,
        "cursor=i2024-01-01T00:00:00Z%23" + "0" * 32,
        "cursor=e_000000000001",
        "cursor=a1",
        "cursor=i2024-01-01T00:00:00Z_" + "0" * 31,
        "cursor=i2024-01-01T00:00:00Z_" + "A" * 32,
    ],
)
def test_inferences_bad_parameters(gb: Harness, query: str) -> None:
    path = (
        f"/v1/gb/inferences?{query}"
        if "user_id" in query
        else f"/v1/gb/inferences?user_id=u1&{query}"
    )
    r = gb.client.get(path)
    assert r.status == 400, (query, r.body)
    assert isinstance(r.body["error"], str) and r.body["error"]


def test_inferences_and_calls_need_a_user(gb: Harness) -> None:
    r = gb.client.get("/v1/gb/inferences")
    assert r.status == 400 and "user_id" in r.body["error"]
    r = gb.client.get("/v1/gb/inferences?limit=5")
    assert r.status == 400 and "user_id" in r.body["error"]
    call_id = post_remember(gb, "Bob likes tea.").call_id
    r = gb.client.get(f"/v1/gb/calls/{call_id}")
    assert r.status == 400 and "user_id" in r.body["error"]
    r = gb.client.get(f"/v1/gb/calls/{call_id}?user_id=u1&extra=1")
    assert r.status == 400


def test_unknown_call_is_404(gb: Harness) -> None:
    r = get(gb, "/v1/gb/calls/0123456789abcdef0123456789abcdef", user_id="u1")
    assert r.status == 404 and r.body["error"]
    # Longer than a DynamoDB key can be: not found, not an upstream error.
    assert get(gb, f"/v1/gb/calls/{'a' * 1100}", user_id="u1").status == 404
    # A call that failed validation never ran: it has an id but no record.
    bad = gb.client.post("/v1/gb/remember", {"user_id": "u1"})
    assert bad.status == 400 and bad.call_id
    assert get(gb, f"/v1/gb/calls/{bad.call_id}", user_id="u1").status == 404


# --- reasoning and models ------------------------------------------------------------


def test_reasoning_none_sends_no_thinking(gb: Harness) -> None:
    gb.llm.script("extract", ALICE_ACME)
    r = post_remember(gb, "Alice works at Acme.", reasoning="none")
    assert r.status == 200, r.body
    req = gb.llm.requests_for("extract")[0]
    assert "thinking" not in req
    assert req["max_tokens"] == 4096
    gb.llm.script("query", {"answer": "Acme", "entities": [], "edges": [1], "passages": []})
    r = post_query(gb, "Where does Alice work?")  # no reasoning field: none
    assert r.status == 200, r.body
    req = gb.llm.requests_for("query")[0]
    assert "thinking" not in req and req["max_tokens"] == 2048
    rows = [x for x in inferences(gb) if x["stage"] != "embed"]
    assert [(x["stage"], x["reasoning"], x["thinking_tokens"]) for x in rows] == [
        ("query", "none", None),
        ("extract", "none", None),
    ]


@pytest.mark.parametrize("level", ["low", "medium", "high"])
def test_query_reasoning_levels(gb: Harness, level: str) -> None:
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.")
    r = post_query(gb, "Where does Alice work?", reasoning=level)
    assert r.status == 200, r.body
    req = gb.llm.requests_for("query")[0]
    assert req["thinking"] == {"type": "enabled", "budget_tokens": BUDGETS[level]}
    assert req["max_tokens"] == 2048 + BUDGETS[level]
    row = next(x for x in inferences(gb, call_id=r.call_id) if x["stage"] == "query")
    assert row["reasoning"] == level
    assert row["thinking_tokens"] > 0
    usage = req.reply["usage"]
    assert row["output_tokens"] == usage["output_tokens"]  # thinking included, billed as output
    assert row["output_tokens"] >= row["thinking_tokens"]
    assert row["cost_usd"] == row["input_tokens"] + 2 * row["output_tokens"]


def test_remember_reasoning_per_stage(gb: Harness) -> None:
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.")
    reset_fakes(gb)
    gb.llm.script("extract", ALICE_GLOBEX)
    r = post_remember(gb, LONG_TEXT, reasoning={"extract": "high", "invalidate": "low"})
    assert r.status == 200, r.body
    for req in gb.llm.requests_for("extract"):
        assert req["thinking"]["budget_tokens"] == 16384 and req["max_tokens"] == 4096 + 16384
    (inv,) = gb.llm.requests_for("invalidate")
    assert inv["thinking"]["budget_tokens"] == 1024 and inv["max_tokens"] == 2048 + 1024
    for req in gb.llm.requests_for("summarize"):
        assert "thinking" not in req and req["max_tokens"] == 1024
    rows = inferences(gb, call_id=r.call_id)
    levels = {(x["stage"], x["reasoning"], x["thinking_tokens"] is not None) for x in rows}
    assert levels == {
        ("extract", "high", True),
        ("invalidate", "low", True),
        ("summarize", "none", False),
        ("embed", "none", False),
    }
    # A string is the level of the main stage (extract) only.
    reset_fakes(gb)
    r = post_remember(gb, "Dan likes jazz.", reasoning="medium")
    assert r.status == 200, r.body
    assert gb.llm.requests_for("extract")[0]["thinking"]["budget_tokens"] == 4096


def test_models_per_stage(gb: Harness) -> None:
    gb.llm.script("extract", ALICE_ACME)
    r = post_remember(gb, "Alice works at Acme.", models={"extract": "claude-opus-4-1"})
    assert r.status == 200, r.body
    assert gb.llm.requests_for("extract")[0]["model"] == "claude-opus-4-1"
    row = next(x for x in inferences(gb, call_id=r.call_id) if x["stage"] == "extract")
    assert row["model"] == "claude-opus-4-1"
    # Built-in price of that model (15 and 75 USD per million): GB_PRICES merges over it.
    assert row["cost_usd"] == pytest.approx(
        (row["input_tokens"] * 15 + row["output_tokens"] * 75) / 1e6, abs=1e-8
    )

    r = post_query(gb, "Where does Alice work?", models={"query": "my-own-model"})
    assert r.status == 200, r.body
    assert gb.llm.requests_for("query")[0]["model"] == "my-own-model"
    row = next(x for x in inferences(gb, call_id=r.call_id) if x["stage"] == "query")
    assert row["model"] == "my-own-model"
    assert row["cost_usd"] == 0  # not in the price table

    r = post_query(gb, "Where does Alice work?")
    assert gb.llm.requests_for("query")[1]["model"] == DEFAULT_MODEL
    row = next(x for x in inferences(gb, call_id=r.call_id) if x["stage"] == "query")
    assert row["model"] == DEFAULT_MODEL

    # A stage of another endpoint is a 400, and nothing is recorded.
    before = len(inferences(gb))
    assert post_query(gb, "x", models={"extract": "m"}).status == 400
    assert post_remember(gb, "x", reasoning={"query": "low"}).status == 400
    assert len(inferences(gb)) == before


# --- monitoring --------------------------------------------------------------------------


class _CurrentStdout:
    """Writes to whatever sys.stdout is at the time of the write."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


@pytest.fixture
def stdout(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> pytest.CaptureFixture[str]:
    """capsys, with the Powertools logger's handler writing to the captured
    stdout: the Logger binds sys.stdout when the module is first imported,
    which in pytest is whatever capture was active then."""
    from gligabao.records.monitor import logger

    handlers = [
        h for h in logging.getLogger(logger.name).handlers if isinstance(h, logging.StreamHandler)
    ]
    assert handlers
    for h in handlers:
        monkeypatch.setattr(h, "stream", _CurrentStdout())
    return capsys


def _lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def test_monitoring_log_line_and_metrics(gb: Harness, stdout: pytest.CaptureFixture[str]) -> None:
    gb.llm.script("extract", ALICE_ACME)
    stdout.readouterr()
    ok = post_remember(gb, "Alice works at Acme.", dataset="d1", session_id="s1")
    assert ok.status == 200
    gb.llm.fail_next(500, stage="query")
    bad = post_query(gb, "Where does Alice work?", dataset="d1")
    assert bad.status == 502
    missing = post_query(gb, "Anything?", dataset="nope")
    assert missing.status == 404
    lines = _lines(stdout.readouterr().out)

    logs = {x["call_id"]: x for x in lines if x.get("message") == "call"}
    assert set(logs) == {ok.call_id, bad.call_id, missing.call_id}
    emf = [x for x in lines if "_aws" in x]
    assert len(emf) == 3

    for reply, endpoint, status, http in (
        (ok, "remember", "ok", 200),
        (bad, "query", "LLM call failed: HTTP 500", 502),
        (missing, "query", "dataset 'nope' does not exist", 404),
    ):
        log = logs[reply.call_id]
        assert log["level"] == "INFO" and log["service"] == "gligabao"
        assert log["endpoint"] == endpoint
        assert log["user_id"] == "u1"
        assert log["status"] == status and log["http_status"] == http
        assert isinstance(log["latency_ms"], int | float) and log["latency_ms"] >= 0
        rows = inferences(gb, call_id=reply.call_id)
        assert log["llm_calls"] == sum(1 for r in rows if r["stage"] != "embed")
        assert log["embed_calls"] == sum(1 for r in rows if r["stage"] == "embed")
        assert log["input_tokens"] == sum(r["input_tokens"] for r in rows)
        assert log["output_tokens"] == sum(r["output_tokens"] for r in rows)
        assert log["tokens"] == log["input_tokens"] + log["output_tokens"]
        assert log["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in rows), abs=1e-8)
    assert logs[ok.call_id]["dataset"] == "d1" and logs[ok.call_id]["session_id"] == "s1"
    assert logs[ok.call_id]["llm_calls"] == 1 and logs[ok.call_id]["cost_usd"] > 0

    by_endpoint_status = {}
    for m in emf:
        (directive,) = m["_aws"]["CloudWatchMetrics"]
        assert directive["Namespace"] == "gligabao-test"  # POWERTOOLS_METRICS_NAMESPACE
        names = {x["Name"] for x in directive["Metrics"]}
        assert {"Calls", "Errors", "Latency", "LLMCalls", "Tokens", "CostUSD"} <= names
        assert "endpoint" in directive["Dimensions"][0]
        by_endpoint_status[(m["endpoint"], m["Errors"][0])] = m
        assert m["Calls"] == [1.0]
    remember = by_endpoint_status[("remember", 0.0)]
    log = logs[ok.call_id]
    assert remember["LLMCalls"] == [1.0]
    assert remember["Tokens"] == [log["tokens"]]
    assert remember["CostUSD"][0] == pytest.approx(log["cost_usd"], abs=1e-8)
    assert remember["Latency"][0] == pytest.approx(log["latency_ms"], abs=0.01)
    failed = by_endpoint_status[("query", 1.0)]  # the 502
    assert failed["LLMCalls"] == [1.0]
    assert by_endpoint_status[("query", 0.0)]["LLMCalls"] == [0.0]  # the 404: a client error
