"""query over HTTP: the request rules, reasoning and models as they reach the
LLM, session_id, 404s, and the 502s. Every error checks that nothing was
written to the graph (and that the LLM was not called when it should not be)."""

from __future__ import annotations

from typing import Any

import pytest
from query_helpers import GraphBuilder, ask, graph_snapshot, vector_counts

from conftest import Harness


def alice(gb: Harness, user: str = "u1", dataset: str = "main") -> GraphBuilder:
    g = GraphBuilder(gb, user=user, dataset=dataset)
    a = g.entity("Alice", "person", "engineer", sim=0.9)
    b = g.entity("Acme", "organization")
    g.edge(a, b, "works_at", "Alice works at Acme.", valid_at="2023-01-01T00:00:00Z", sim=0.9)
    return g.save()


def post(gb: Harness, body: Any = None, **kw: Any) -> tuple[int, Any]:
    r = gb.client.post("/v1/gb/query", body, **kw)
    return r.status, r.body


class Unchanged:
    """Asserts, on exit, that the graph tables and the vectors are as they were."""

    def __init__(self, gb: Harness, g: GraphBuilder) -> None:
        self.gb, self.g = gb, g

    def __enter__(self) -> Unchanged:
        self.tables = graph_snapshot(self.gb)
        self.vectors = vector_counts(self.gb, self.g.key)
        return self

    def __exit__(self, *exc: object) -> None:
        assert graph_snapshot(self.gb) == self.tables
        assert vector_counts(self.gb, self.g.key) == self.vectors


# --- reasoning and models ---------------------------------------------------------


@pytest.mark.parametrize(
    ("reasoning", "budget"),
    [
        (None, None),
        ("none", None),
        ("NONE", None),
        ("low", 1024),
        ("Medium", 4096),
        ("HIGH", 16384),
        ({"query": "low"}, 1024),
        ({"query": "hIgH"}, 16384),
        ({"query": "none"}, None),
        ({"detect_geo": "high"}, None),  # the query stage left out: none
        ({}, None),
    ],
)
def test_reasoning_reaches_the_llm(gb: Harness, reasoning: Any, budget: int | None) -> None:
    alice(gb)
    extra = {} if reasoning is None else {"reasoning": reasoning}
    gb.llm.script("query", {"answer": "Acme", "edges": [501]})
    out = gb.query(ask(gb, "Where does Alice work?"), **extra)
    assert out["answer"] == "Acme"
    [req] = gb.llm.requests_for("query")
    if budget is None:
        assert "thinking" not in req
        assert req["max_tokens"] == 2048
    else:
        assert req["thinking"] == {"type": "enabled", "budget_tokens": budget}
        assert req["max_tokens"] == 2048 + budget
    assert req["model"] == "claude-haiku-5-5"
    # The inference is recorded with the level it ran with.
    r = gb.client.get("/v1/gb/inferences?user_id=u1")
    assert r.status == 200, r.body
    stages = {i["stage"]: i for i in r.body["inferences"]}
    assert set(stages) == {"embed", "query"}
    assert (
        stages["query"]["reasoning"]
        == {
            None: "none",
            1024: "low",
            4096: "medium",
            16384: "high",
        }[budget]
    )
    assert all(i["type"] == "query" for i in r.body["inferences"])


@pytest.mark.parametrize(
    ("models", "model"),
    [
        ({"query": "claude-haiku-4-5"}, "claude-haiku-4-5"),
        ({"query": "claude-opus-4-1", "detect_geo": "claude-haiku-4-5"}, "claude-opus-4-1"),
        ({"detect_geo": "claude-opus-4-1"}, "claude-haiku-5-5"),  # left out: the default
        ({}, "claude-haiku-5-5"),
    ],
)
def test_models_reach_the_llm(gb: Harness, models: dict[str, str], model: str) -> None:
    alice(gb)
    gb.query(ask(gb, "Where does Alice work?"), models=models, reasoning={"query": "low"})
    [req] = gb.llm.requests_for("query")
    assert req["model"] == model
    assert req["thinking"]["budget_tokens"] == 1024
    r = gb.client.get("/v1/gb/inferences?user_id=u1")
    [inf] = [i for i in r.body["inferences"] if i["stage"] == "query"]
    assert inf["model"] == model and inf["reasoning"] == "low"


INVALID_OPTIONS: list[dict[str, Any]] = [
    {"reasoning": "extreme"},
    {"reasoning": ""},
    {"reasoning": 3},
    {"reasoning": True},
    {"reasoning": ["low"]},
    {"reasoning": {"query": "max"}},
    {"reasoning": {"query": 1}},
    {"reasoning": {"query": None}},
    {"reasoning": {"extract": "low"}},  # a remember stage
    {"reasoning": {"summarize": "none"}},
    {"reasoning": {"embed": "none"}},
    {"reasoning": {"answer": "low"}},
    {"models": {"extract": "claude-haiku-5-5"}},
    {"models": {"invalidate": "claude-haiku-5-5"}},
    {"models": {"bogus": "claude-haiku-5-5"}},
    {"models": {"query": ""}},
    {"models": {"query": "not a model"}},
    {"models": {"query": "x" * 129}},
    {"models": {"query": 5}},
    {"models": "claude-sonnet-4-5"},
    {"models": ["claude-sonnet-4-5"]},
]


def test_invalid_options_are_400(gb: Harness) -> None:
    g = alice(gb)
    with Unchanged(gb, g):
        for extra in INVALID_OPTIONS:
            status, body = post(gb, {"user_id": "u1", "query": ask(gb, "Where?"), **extra})
            assert status == 400, (extra, body)
            assert isinstance(body["error"], str) and body["error"], extra
    assert gb.llm.calls() == 0
    assert gb.emb.calls() == 0


# --- request rules ------------------------------------------------------------------


INVALID_BODIES: list[Any] = [
    {"user_id": "u1"},
    {"user_id": "u1", "query": ""},
    {"user_id": "u1", "query": "   \n\t"},
    {"user_id": "u1", "query": 42},
    {"user_id": "u1", "query": ["Where?"]},
    {"query": "Where does Alice work?"},
    {"user_id": "", "query": "Where does Alice work?"},
    {"user_id": 7, "query": "Where does Alice work?"},
    {"user_id": "u1", "query": "Where?", "dataset": "bad name!"},
    {"user_id": "u1", "query": "Where?", "session_id": "s" * 129},
    {"user_id": "u1", "query": "Where?", "session_id": "é" * 65},  # 130 bytes
    {"user_id": "u1", "query": "Where?", "session_id": "bad\nid"},
    {"user_id": "u1", "query": "Where?", "session_id": "bad\x7fid"},
    {"user_id": "u1", "query": "Where?", "session_id": 12},
    {"user_id": "u1", "query": "Where?", "unknown": 1},
    ["not", "an", "object"],
]


def test_invalid_requests_are_400(gb: Harness) -> None:
    g = alice(gb)
    with Unchanged(gb, g):
        for body in INVALID_BODIES:
            status, out = post(gb, body)
            assert status == 400, (body, out)
            assert isinstance(out["error"], str) and out["error"], body
    assert gb.llm.calls() == 0 and gb.emb.calls() == 0


def test_invalid_json_is_400(gb: Harness) -> None:
    g = alice(gb)
    with Unchanged(gb, g):
        for raw in (b"{not json", b"", b"null"):
            status, out = post(gb, raw=raw)
            assert status == 400, (raw, out)
    assert gb.llm.calls() == 0


def test_body_limit(gb: Harness) -> None:
    g = alice(gb)
    with Unchanged(gb, g):
        big = {"user_id": "u1", "query": "Where does Alice work? " + "x" * (64 * 1024)}
        status, out = post(gb, big)
        assert status == 413, out
    assert gb.llm.calls() == 0
    with Unchanged(gb, g):  # under 64 KiB, past the question's cap in characters
        status, out = post(gb, {"user_id": "u1", "query": "Where does Alice work? " + "y" * 60_000})
        assert status == 400, out
        assert "at most 4000 characters" in out["error"]
    assert gb.llm.calls() == 0
    status, out = post(gb, {"user_id": "u1", "query": "Where does Alice work? " + "y" * 3_977})
    assert status == 200, out


def test_session_id_echoed_or_omitted(gb: Harness) -> None:
    alice(gb)
    q = ask(gb, "Where does Alice work?")
    out = gb.query(q, session_id="chat-42")
    assert out["session_id"] == "chat-42"
    out = gb.query(q, session_id="é" * 64)  # 128 bytes
    assert out["session_id"] == "é" * 64
    out = gb.query(q)
    assert "session_id" not in out
    out = gb.query(q, session_id=None)
    assert "session_id" not in out
    # It does not change retrieval: the same context each time.
    prompts = [r["messages"][0]["content"] for r in gb.llm.requests_for("query")]
    strip = [p.split("</current_time>", 1)[1] for p in prompts]
    assert len(set(strip)) == 1
    # The session is recorded with the inferences.
    r = gb.client.get("/v1/gb/inferences?user_id=u1&session_id=chat-42")
    assert {i["stage"] for i in r.body["inferences"]} == {"embed", "query"}


def test_dataset_selects_the_graph(gb: Harness) -> None:
    alice(gb, dataset="work")
    g = GraphBuilder(gb, dataset="home")
    g.entity("Alice", "person", "gardener")
    g.save()
    gb.query(ask(gb, "Who is Alice?"), dataset="home")
    text = gb.llm.requests_for("query")[-1]["messages"][0]["content"]
    assert "gardener" in text and "Acme" not in text


# --- 404 ----------------------------------------------------------------------------


def test_missing_dataset_is_404(gb: Harness) -> None:
    g = alice(gb)
    with Unchanged(gb, g):
        status, out = post(gb, {"user_id": "u1", "query": "Where?", "dataset": "nope"})
        assert status == 404, out
        assert "nope" in out["error"]
        # The default dataset of a user who never remembered anything.
        status, out = post(gb, {"user_id": "u2", "query": "Where?"})
        assert status == 404, out
    assert gb.llm.calls() == 0
    # The dataset is checked while the question is embedded (issue 18): one
    # embeddings request a query, at most, and no answer call.
    assert gb.emb.calls() <= 2


def test_another_users_dataset_is_404(gb: Harness) -> None:
    g = alice(gb, user="alice", dataset="private")
    with Unchanged(gb, g):
        status, out = post(gb, {"user_id": "mallory", "query": "Where?", "dataset": "private"})
        assert status == 404, out
        assert "Alice" not in str(out)
    assert gb.llm.calls() == 0


# --- 502 ----------------------------------------------------------------------------


def _fail_llm(status: int) -> Any:
    return lambda gb: gb.llm.fail_next(status, stage="query")


UPSTREAM_FAULTS = {
    "llm-500": _fail_llm(500),
    "llm-529": _fail_llm(529),
    "llm-429": _fail_llm(429),
    "llm-400": _fail_llm(400),
    "truncated-cut": lambda gb: gb.llm.truncate_next("query"),
    "truncated-whole": lambda gb: gb.llm.truncate_next("query", cut=False),
    "empty-content": lambda gb: gb.llm.empty_next("query"),
    "empty-text": lambda gb: gb.llm.empty_next("query", empty_text=True),
    "unparsable": lambda gb: gb.llm.script("query", "I think Alice works at Acme."),
    "json-array": lambda gb: gb.llm.script("query", [1, 2, 3]),
    "no-answer": lambda gb: gb.llm.script("query", {"entities": [1]}),
    "empty-answer": lambda gb: gb.llm.script("query", {"answer": "", "entities": [1]}),
    "blank-answer": lambda gb: gb.llm.script("query", {"answer": "  \n "}),
    "answer-not-string": lambda gb: gb.llm.script("query", {"answer": 42}),
    "answer-null": lambda gb: gb.llm.script("query", {"answer": None}),
    "embeddings-500": lambda gb: gb.emb.fail_next(500),
    "embeddings-429": lambda gb: gb.emb.fail_next(429),
    "embeddings-401": lambda gb: gb.emb.fail_next(401),
}


@pytest.mark.parametrize("fault", list(UPSTREAM_FAULTS))
def test_upstream_failures_are_502(gb: Harness, fault: str) -> None:
    g = alice(gb)
    UPSTREAM_FAULTS[fault](gb)
    with Unchanged(gb, g):
        r = gb.client.post(
            "/v1/gb/query",
            {"user_id": "u1", "query": ask(gb, "Where does Alice work?"), "session_id": "s1"},
        )
    assert r.status == 502, r.body
    assert set(r.body) == {"error"} and r.body["error"]
    llm_calls = gb.llm.calls("query")
    assert llm_calls == (0 if fault.startswith("embeddings") else 1)  # no retries (0 configured)
    # The call is recorded as failed, with its inferences.
    call = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1")
    assert call.status == 200, call.body
    assert call.body["status"] != "ok"
    infs = gb.client.get(f"/v1/gb/inferences?user_id=u1&call_id={r.call_id}").body["inferences"]
    assert any(i["status"] != "ok" for i in infs), infs
