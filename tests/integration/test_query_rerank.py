"""A reranker configured (GB_RERANK_PROVIDER): query and search send their
best facts and passages to it once, its order decides what fills the
context, and the call is an inference of stage ``rerank`` with its cost. A
reranker that fails after its retries fails the query (502) and writes
nothing; the deadline bounds it (504). Off by default: no request at all."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from query_helpers import GraphBuilder, ask, graph_snapshot
from test_deadline import LambdaContext

from conftest import Harness
from fakes.rerank_server import FakeBedrockRerank, FakeRerank
from gligabao.local.server import make_event

QUESTION = "What did Mia paint last summer?"
TEXTS = {  # by cosine to the question, best first; each about 50 tokens
    "near": (
        "Mia painted a portrait of her grandmother last summer, sitting by the window "
        "every afternoon while the old woman told her stories about the farm.",
        0.95,
    ),
    "middle": (
        "Mia and Leo went to the summer fair with their cousins, ate too much ice cream "
        "and rode the big wheel twice before the rain came down at six.",
        0.9,
    ),
    "far": (
        "Last summer Mia painted the old harbour at dawn, all in blue, from the end of the "
        "pier where the fishing boats come in before the market opens.",
        0.85,
    ),
}
ONE_PASSAGE = 100  # a budget with room for one of them


@pytest.fixture
def rerank_fake() -> Iterator[FakeRerank]:
    with FakeRerank() as fake:
        yield fake


@pytest.fixture
def bedrock_rerank() -> Iterator[FakeBedrockRerank]:
    with FakeBedrockRerank() as fake:
        yield fake


@pytest.fixture
def gb_env(request: pytest.FixtureRequest, rerank_fake: FakeRerank) -> dict[str, str]:
    """The http reranker on, one retry (the tests' default is none); a test
    parametrized with "bedrock" gets the Bedrock one, with "off" none."""
    which = getattr(request, "param", "http")
    if which == "off":
        return {}
    if which == "bedrock":
        fake: FakeBedrockRerank = request.getfixturevalue("bedrock_rerank")
        return {**fake.env(), "GB_LLM_MAX_RETRIES": "1"}
    return {**rerank_fake.env(), "GB_LLM_MAX_RETRIES": "1"}


def _passages(gb: Harness) -> dict[str, int]:
    g = GraphBuilder(gb)
    ids = {}
    for label, (text, sim) in TEXTS.items():
        a = g.text(text)
        g.chunk_vector(a.id, label, sim)
        ids[label] = a.id
    g.save()
    ask(gb, QUESTION)
    return ids


def _search(gb: Harness, **extra: Any) -> Any:
    r = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": QUESTION, **extra})
    assert r.status == 200, r.body
    return r


def test_the_reranked_order_fills_the_context(gb: Harness, rerank_fake: FakeRerank) -> None:
    ids = _passages(gb)
    rerank_fake.prefer("harbour", 0.95).prefer("portrait", 0.4).prefer("fair", 0.01)
    found = _search(gb).body
    [sent] = rerank_fake.reranks()
    assert sent["query"] == QUESTION
    # The reranker saw the passages best first by the old scores, with their dates...
    assert sent["documents"][0] == f"2025-01-01: {TEXTS['near'][0]}"
    assert all(d.startswith("2025-01-01: ") for d in sent["documents"])
    # ...and its order is the context's (the floor and the budget cut no more
    # than they would have: the three are all in).
    assert [p["artifact_id"] for p in found["passages"]] == [ids["far"], ids["near"], ids["middle"]]

    # A budget for one passage: the reranker's best is the one that fits.
    one = _search(gb, max_context_tokens=ONE_PASSAGE).body
    assert [p["artifact_id"] for p in one["passages"]] == [ids["far"]]


@pytest.mark.parametrize("gb_env", ["off"], indirect=True)
def test_off_by_default_nothing_is_reranked(gb: Harness, rerank_fake: FakeRerank) -> None:
    ids = _passages(gb)
    r = _search(gb, max_context_tokens=ONE_PASSAGE)
    assert [p["artifact_id"] for p in r.body["passages"]] == [ids["near"]]
    assert rerank_fake.reranks() == []
    call = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1").body
    assert "rerank" not in {s["name"] for s in call["steps"]}


def test_the_query_answers_from_the_reranked_context_and_records_it(
    gb: Harness, rerank_fake: FakeRerank
) -> None:
    ids = _passages(gb)
    rerank_fake.prefer("harbour", 0.95)
    r = gb.client.post(
        "/v1/gb/query", {"user_id": "u1", "query": QUESTION, "max_context_tokens": ONE_PASSAGE}
    )
    assert r.status == 200, r.body
    [sent] = gb.llm.requests_for("query")
    prompt = sent["messages"][0]["content"]
    prompt = prompt if isinstance(prompt, str) else "".join(b["text"] for b in prompt)
    assert f"[passage {ids['far']}]" in prompt and f"[passage {ids['near']}]" not in prompt

    call = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1").body
    [step] = [s for s in call["steps"] if s["name"] == "rerank"]
    assert step["documents"] == 3
    rows = gb.client.get(f"/v1/gb/inferences?user_id=u1&call_id={r.call_id}").body["inferences"]
    [row] = [x for x in rows if x["stage"] == "rerank"]
    assert (row["provider"], row["model"], row["status"], row["type"]) == (
        "http",
        "rerank-test",
        "ok",
        "query",
    )
    assert row["input_tokens"] == rerank_fake.reranks()[0].reply["usage"]["total_tokens"]
    assert row["cost_usd"] == 0  # a self-hosted model has no price unless GB_RERANK_PRICES


@pytest.mark.parametrize("gb_env", ["bedrock"], indirect=True)
def test_bedrock_rerank_is_recorded_with_its_price(
    gb: Harness, bedrock_rerank: FakeBedrockRerank
) -> None:
    ids = _passages(gb)
    bedrock_rerank.fail_next(429).prefer("harbour", 0.9)  # throttled once, then answered
    r = _search(gb, max_context_tokens=ONE_PASSAGE)
    assert [p["artifact_id"] for p in r.body["passages"]] == [ids["far"]]
    assert [x.status for x in bedrock_rerank.reranks()] == [429, 200]
    rows = gb.client.get(f"/v1/gb/inferences?user_id=u1&call_id={r.call_id}").body["inferences"]
    [row] = [x for x in rows if x["stage"] == "rerank"]
    assert (row["provider"], row["model"], row["status"]) == (
        "bedrock",
        "cohere.rerank-v3-5:0",
        "ok",
    )
    assert row["cost_usd"] == pytest.approx(0.002)  # one search unit at $2 per 1,000


@pytest.mark.parametrize(
    "reply",
    [
        {"results": [{"index": 9, "relevance_score": 0.9}]},
        {"results": "none"},
        {"results": [{"index": 0}]},
    ],
)
def test_a_malformed_reply_is_a_502_and_writes_nothing(
    gb: Harness, rerank_fake: FakeRerank, reply: Any
) -> None:
    _passages(gb)
    before = graph_snapshot(gb)
    rerank_fake.reply_next(reply)
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": QUESTION})
    assert r.status == 502, r.body
    assert "reply is malformed" in r.body["error"]
    assert gb.llm.calls("query") == 0  # no answer from an unranked context
    assert graph_snapshot(gb) == before
    rows = gb.client.get(f"/v1/gb/inferences?user_id=u1&call_id={r.call_id}").body["inferences"]
    [row] = [x for x in rows if x["stage"] == "rerank"]
    assert "malformed" in row["status"]


def test_a_reranker_down_after_the_retries_is_a_502(gb: Harness, rerank_fake: FakeRerank) -> None:
    _passages(gb)
    before = graph_snapshot(gb)
    rerank_fake.fail_next(503, times=2)
    r = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": QUESTION})
    assert r.status == 502, r.body
    assert r.body["error"] == "rerank request failed: HTTP 503"
    assert len(rerank_fake.reranks()) == 2  # the first try and one retry
    assert graph_snapshot(gb) == before


def test_a_slow_reranker_past_the_budget_is_a_504(gb: Harness, rerank_fake: FakeRerank) -> None:
    from gligabao.handlers import query

    _passages(gb)
    # The Lambda has 7 s left after the reserve (room for the reads before the
    # rerank on a busy machine); the reranker takes 30 s, its timeout is 10 s.
    rerank_fake.delay_next(30.0)
    event = make_event(
        "POST",
        "/v1/gb/query",
        {"content-type": "application/json"},
        json.dumps({"user_id": "u1", "query": QUESTION}).encode(),
        "127.0.0.1",
    )
    out = query.lambda_handler(event, LambdaContext(9_000))
    assert out["statusCode"] == 504, out
    assert "during the rerank call" in json.loads(out["body"])["error"]
    assert gb.llm.calls("query") == 0
