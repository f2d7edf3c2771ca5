"""Tests of the fakes themselves, through the real ``anthropic`` and ``openai``
SDKs over loopback HTTP."""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

import anthropic
import openai
import pytest

from .anthropic_server import DEFAULT_REPLIES, FakeAnthropic, find_stage
from .openai_server import FakeOpenAI, cosine, hashed_unit_vector

MODEL = "claude-test-1"
EMBED_MODEL = "text-embedding-3-small"


def claude(fake: FakeAnthropic, **kwargs: Any) -> anthropic.Anthropic:
    kwargs.setdefault("max_retries", 2)
    return anthropic.Anthropic(api_key="test-key", base_url=fake.url, **kwargs)


def ask(
    client: anthropic.Anthropic,
    stage: str = "extract",
    text: str = "Alice works at Acme.",
    *,
    system: Any = None,
    max_tokens: int = 1000,
    **kwargs: Any,
) -> anthropic.types.Message:
    return client.messages.create(
        model=MODEL,
        max_tokens=max_tokens,
        system=system if system is not None else f"[stage: {stage}]\nYou do {stage}.",
        messages=[{"role": "user", "content": text}],
        **kwargs,
    )


def text_of(msg: anthropic.types.Message) -> str:
    return "".join(b.text for b in msg.content if b.type == "text")


def gpt(fake: FakeOpenAI, **kwargs: Any) -> openai.OpenAI:
    kwargs.setdefault("max_retries", 2)
    return openai.OpenAI(api_key="test-key", base_url=fake.base_url, **kwargs)


def embed(client: openai.OpenAI, texts: str | list[str], **kwargs: Any) -> list[list[float]]:
    resp = client.embeddings.create(model=EMBED_MODEL, input=texts, **kwargs)
    return [list(d.embedding) for d in sorted(resp.data, key=lambda d: d.index)]


# ---------------------------------------------------------------- Anthropic


def test_find_stage() -> None:
    assert find_stage("[stage: extract]\nrules") == "extract"
    assert find_stage("prefix [stage:detect_geo] x") == "detect_geo"
    assert (
        find_stage(
            [{"type": "text", "text": "no marker"}, {"type": "text", "text": "[stage: query]"}]
        )
        == "query"
    )
    assert find_stage("nothing here") is None
    assert find_stage(None) is None


def test_lifecycle_and_url() -> None:
    fake = FakeAnthropic()
    assert not fake.running
    fake.start()
    try:
        assert fake.url.startswith("http://127.0.0.1:")
        assert fake.port > 0
        assert text_of(ask(claude(fake))) == json.dumps(DEFAULT_REPLIES["extract"])
    finally:
        fake.stop()
    assert not fake.running
    fake.stop()  # idempotent
    with pytest.raises(anthropic.APIConnectionError):
        ask(claude(fake, max_retries=0))


def test_default_replies_and_message_shape(fake_anthropic: FakeAnthropic) -> None:
    client = claude(fake_anthropic)
    for stage, reply in DEFAULT_REPLIES.items():
        msg = ask(client, stage)
        assert json.loads(text_of(msg)) == reply
        assert msg.type == "message"
        assert msg.role == "assistant"
        assert msg.model == MODEL
        assert msg.id.startswith("msg_")
        assert msg.stop_reason == "end_turn"
        assert msg.stop_sequence is None
        assert [b.type for b in msg.content] == ["text"]
        assert msg.usage.input_tokens > 0
        assert msg.usage.output_tokens > 0
        assert msg._request_id is not None
    assert fake_anthropic.calls() == len(DEFAULT_REPLIES)
    assert all(fake_anthropic.calls(s) == 1 for s in DEFAULT_REPLIES)


def test_system_as_blocks(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script("summarize", "scripted")
    system = [
        {"type": "text", "text": "You are a memory service."},
        {
            "type": "text",
            "text": "[stage: summarize] summarize",
            "cache_control": {"type": "ephemeral"},
        },
    ]
    msg = ask(claude(fake_anthropic), system=system)
    assert text_of(msg) == "scripted"
    assert fake_anthropic.requests_for("summarize")[0]["system"] == system


def test_script_fifo_then_default(fake_anthropic: FakeAnthropic) -> None:
    seen: list[dict[str, Any]] = []

    def by_callable(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(body)
        return {"echo": body["messages"][0]["content"]}

    fake_anthropic.script("extract", "plain text")
    fake_anthropic.script("extract", {"entities": [{"name": "Alice"}], "edges": []})
    fake_anthropic.script("extract", [1, 2])
    fake_anthropic.script("extract", by_callable)
    fake_anthropic.script("query", "q", times=2)
    assert fake_anthropic.pending() == 6
    assert fake_anthropic.pending("extract") == 4
    client = claude(fake_anthropic)
    assert text_of(ask(client)) == "plain text"
    assert json.loads(text_of(ask(client))) == {"entities": [{"name": "Alice"}], "edges": []}
    assert json.loads(text_of(ask(client))) == [1, 2]
    assert json.loads(text_of(ask(client, text="hi there"))) == {"echo": "hi there"}
    assert seen[0]["model"] == MODEL
    assert json.loads(text_of(ask(client))) == DEFAULT_REPLIES["extract"]
    # other stages are independent queues
    assert text_of(ask(client, "query")) == "q"
    assert text_of(ask(client, "query")) == "q"
    assert json.loads(text_of(ask(client, "query"))) == DEFAULT_REPLIES["query"]
    fake_anthropic.assert_all_consumed()


def test_default_override_and_removal(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.default("invalidate", {"invalidated": ["e1"]})
    client = claude(fake_anthropic)
    assert json.loads(text_of(ask(client, "invalidate"))) == {"invalidated": ["e1"]}
    fake_anthropic.default("invalidate", lambda body: "from callable")
    assert text_of(ask(client, "invalidate")) == "from callable"
    fake_anthropic.default("invalidate", None)
    with pytest.raises(anthropic.BadRequestError, match="no scripted reply"):
        ask(client, "invalidate")
    fake_anthropic.reset()
    assert json.loads(text_of(ask(client, "invalidate"))) == DEFAULT_REPLIES["invalidate"]


def test_missing_stage_marker_is_a_400(fake_anthropic: FakeAnthropic) -> None:
    with pytest.raises(anthropic.BadRequestError, match="stage") as info:
        ask(claude(fake_anthropic), system="You are helpful.")
    assert info.value.status_code == 400
    assert fake_anthropic.calls() == 1  # 400s are not retried
    assert fake_anthropic.requests[0].stage is None


def test_custom_stage_names_work(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script("rerank", "ranked")
    assert text_of(ask(claude(fake_anthropic), "rerank")) == "ranked"


def test_records_bodies_and_headers(fake_anthropic: FakeAnthropic) -> None:
    ask(claude(fake_anthropic), "query", "what?", metadata={"user_id": "u1"})
    req = fake_anthropic.last_request()
    assert req["model"] == MODEL
    assert req["messages"] == [{"role": "user", "content": "what?"}]
    assert req["metadata"] == {"user_id": "u1"}
    assert req.body == dict(req)
    assert req.stage == "query"
    assert req.status == 200
    assert req.path == "/v1/messages"
    assert req.headers["anthropic-version"]
    # the 2.x SDK sends the key as a bearer token, not x-api-key
    assert "test-key" in (req.headers.get("x-api-key") or req.headers.get("authorization", ""))
    assert req.reply["type"] == "message"
    assert fake_anthropic.requests_for("query") == [req]
    assert fake_anthropic.requests_for("extract") == []


def test_rate_limit_is_retried_by_the_sdk(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script("extract", "after the retry")
    fake_anthropic.fail_next(429, retry_after=0.001)
    msg = ask(claude(fake_anthropic, max_retries=2))
    assert text_of(msg) == "after the retry"
    first, second = fake_anthropic.requests
    assert second.received_at - first.received_at < 0.3  # the SDK's own backoff is >= 0.375 s
    assert first.status == 429
    assert first.reply["type"] == "error"
    assert first.reply["error"]["type"] == "rate_limit_error"
    assert first.headers["x-stainless-retry-count"] == "0"
    assert second.status == 200
    assert second.headers["x-stainless-retry-count"] == "1"
    assert fake_anthropic.calls("extract") == 2


def test_overloaded_exhausts_retries(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.fail_next(529, retry_after=0.001, times=3)
    with pytest.raises(anthropic.OverloadedError) as info:
        ask(claude(fake_anthropic, max_retries=2))
    assert info.value.status_code == 529
    assert isinstance(info.value.body, dict)
    assert info.value.body["error"]["type"] == "overloaded_error"
    assert fake_anthropic.calls() == 3
    # the faults are used up: the next call succeeds
    assert ask(claude(fake_anthropic, max_retries=0)).stop_reason == "end_turn"


def test_internal_error_without_retries(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.fail_next(500, body="boom")
    with pytest.raises(anthropic.InternalServerError, match="boom") as info:
        ask(claude(fake_anthropic, max_retries=0))
    assert info.value.body["error"] == {"type": "api_error", "message": "boom"}  # type: ignore[index]
    assert fake_anthropic.calls() == 1


def test_failure_with_custom_body_and_headers(fake_anthropic: FakeAnthropic) -> None:
    body = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "prompt is too long"},
    }
    fake_anthropic.fail_next(400, body=body, headers={"x-custom": "1"})
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        ask(claude(fake_anthropic))
    assert fake_anthropic.calls() == 1


def test_failure_for_one_stage_only(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.fail_next(500, stage="summarize")
    client = claude(fake_anthropic, max_retries=0)
    ask(client, "extract")
    ask(client, "query")
    with pytest.raises(anthropic.InternalServerError):
        ask(client, "summarize")
    ask(client, "summarize")


def test_faults_do_not_consume_scripts(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script("extract", "first").script("extract", "second")
    fake_anthropic.fail_next(500)
    with pytest.raises(anthropic.InternalServerError):
        ask(claude(fake_anthropic, max_retries=0))
    assert text_of(ask(claude(fake_anthropic))) == "first"


def test_retry_after_zero_falls_back_to_sdk_backoff(fake_anthropic: FakeAnthropic) -> None:
    """Documents the SDK: ``retry-after: 0`` is ignored (not > 0), so it backs
    off ~0.375-0.5 s; a tiny positive value retries at once."""
    fake_anthropic.fail_next(429, retry_after=0)
    ask(claude(fake_anthropic))
    first, second = fake_anthropic.requests
    assert second.received_at - first.received_at >= 0.3
    fake_anthropic.reset()
    fake_anthropic.fail_next(429, retry_after_ms=1)
    ask(claude(fake_anthropic))
    first, second = fake_anthropic.requests
    assert second.received_at - first.received_at < 0.3


def test_truncate_next(fake_anthropic: FakeAnthropic) -> None:
    reply = {"entities": [{"name": "Alice", "type": "person"}], "edges": []}
    fake_anthropic.script("extract", reply)
    fake_anthropic.truncate_next()
    msg = ask(claude(fake_anthropic), max_tokens=300)
    assert msg.stop_reason == "max_tokens"
    assert msg.usage.output_tokens == 300
    full = json.dumps(reply)
    assert text_of(msg) == full[: len(full) // 2]
    with pytest.raises(json.JSONDecodeError):
        json.loads(text_of(msg))
    assert ask(claude(fake_anthropic)).stop_reason == "end_turn"
    fake_anthropic.truncate_next(cut=False)
    msg = ask(claude(fake_anthropic))
    assert msg.stop_reason == "max_tokens"
    assert json.loads(text_of(msg)) == DEFAULT_REPLIES["extract"]


def test_empty_next(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.empty_next(stage="query")
    fake_anthropic.empty_next(empty_text=True)
    client = claude(fake_anthropic)
    msg = ask(client, "query")
    assert msg.content == []
    assert msg.usage.output_tokens >= 1
    msg = ask(client, "extract")
    assert [b.type for b in msg.content] == ["text"]
    assert text_of(msg) == ""
    assert text_of(ask(client, "extract")) != ""


def test_thinking_enabled(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script("extract", "answer", times=2)
    client = claude(fake_anthropic)
    plain = ask(client)
    msg = ask(client, max_tokens=3000, thinking={"type": "enabled", "budget_tokens": 1024})
    assert [b.type for b in msg.content] == ["thinking", "text"]
    block = msg.content[0]
    assert block.type == "thinking"
    assert block.thinking
    assert block.signature == "sig"
    assert msg.usage.output_tokens_details is not None
    thinking_tokens = msg.usage.output_tokens_details.thinking_tokens
    assert thinking_tokens > 0
    assert msg.usage.output_tokens == thinking_tokens + plain.usage.output_tokens
    msg = ask(client, thinking={"type": "adaptive", "display": "omitted"})
    assert msg.content[0].type == "thinking"
    assert msg.content[0].thinking == ""


def test_thinking_budget_is_validated_like_the_api(fake_anthropic: FakeAnthropic) -> None:
    client = claude(fake_anthropic)
    with pytest.raises(anthropic.BadRequestError, match="budget_tokens"):
        ask(client, max_tokens=1024, thinking={"type": "enabled", "budget_tokens": 1024})
    with pytest.raises(anthropic.BadRequestError, match="1024"):
        ask(client, max_tokens=4000, thinking={"type": "enabled", "budget_tokens": 100})


REPLY_TOOL = {
    "name": "reply",
    "description": "The reply.",
    "input_schema": {"type": "object", "properties": {"summary": {"type": "string"}}},
}


def test_forced_tool_gets_a_tool_use_block(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script("summarize", {"summary": "s"})
    fake_anthropic.script("summarize", "not json at all")
    client = claude(fake_anthropic)
    force = {"type": "tool", "name": "reply"}
    msg = ask(client, "summarize", tools=[REPLY_TOOL], tool_choice=force)
    assert [b.type for b in msg.content] == ["tool_use"]
    block = msg.content[0]
    assert block.type == "tool_use"
    assert (block.name, block.input) == ("reply", {"summary": "s"})
    assert msg.stop_reason == "tool_use"
    # a scripted text stands for a provider that ignores the schema
    msg = ask(client, "summarize", tools=[REPLY_TOOL], tool_choice=force)
    assert text_of(msg) == "not json at all"
    # without a forced tool the reply is text
    assert json.loads(text_of(ask(client, "summarize"))) == DEFAULT_REPLIES["summarize"]


def test_tools_are_validated_like_the_api(fake_anthropic: FakeAnthropic) -> None:
    client = claude(fake_anthropic)
    with pytest.raises(anthropic.BadRequestError, match="not found"):
        ask(client, tools=[REPLY_TOOL], tool_choice={"type": "tool", "name": "other"})
    bad = {**REPLY_TOOL, "input_schema": {"type": "array"}}
    with pytest.raises(anthropic.BadRequestError, match="input_schema"):
        ask(client, tools=[bad])
    with pytest.raises(anthropic.BadRequestError, match="Thinking may not be enabled"):
        ask(
            client,
            max_tokens=3000,
            thinking={"type": "enabled", "budget_tokens": 1024},
            tools=[REPLY_TOOL],
            tool_choice={"type": "tool", "name": "reply"},
        )
    assert fake_anthropic.calls() == 3


def test_streaming_is_refused(fake_anthropic: FakeAnthropic) -> None:
    with pytest.raises(anthropic.BadRequestError, match="streaming"):
        ask(claude(fake_anthropic), stream=True)


def test_delay_makes_the_client_time_out(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script("extract", "kept")
    fake_anthropic.delay_next(1.0)
    started = time.monotonic()
    with pytest.raises(anthropic.APITimeoutError):
        ask(claude(fake_anthropic, timeout=0.2, max_retries=0))
    assert time.monotonic() - started < 0.9
    # the abandoned request consumes no script once the fake notices
    deadline = time.monotonic() + 3
    while fake_anthropic.requests[0].status is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert fake_anthropic.requests[0].status == 0
    assert text_of(ask(claude(fake_anthropic))) == "kept"


def test_delay_then_sdk_retry_succeeds(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.delay_next(1.0)
    msg = ask(claude(fake_anthropic, timeout=0.25, max_retries=1))
    assert msg.stop_reason == "end_turn"
    assert fake_anthropic.calls() == 2


def test_delay_without_timeout_just_waits(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.delay_next(0.2, stage="query")
    started = time.monotonic()
    ask(claude(fake_anthropic), "extract")
    assert time.monotonic() - started < 0.2
    ask(claude(fake_anthropic), "query")
    assert time.monotonic() - started >= 0.2


def test_callable_errors_are_reported_not_retried(fake_anthropic: FakeAnthropic) -> None:
    def broken(body: dict[str, Any]) -> str:
        raise KeyError("oops")

    fake_anthropic.script("extract", broken)
    with pytest.raises(anthropic.InternalServerError, match="KeyError"):
        ask(claude(fake_anthropic, max_retries=2))
    assert fake_anthropic.calls() == 1
    assert isinstance(fake_anthropic.errors[0], KeyError)


def test_count_tokens(fake_anthropic: FakeAnthropic) -> None:
    count = claude(fake_anthropic).messages.count_tokens(
        model=MODEL, system="[stage: query]", messages=[{"role": "user", "content": "x" * 400}]
    )
    assert count.input_tokens >= 100
    assert fake_anthropic.calls() == 0


def test_concurrent_requests_consume_each_script_once(fake_anthropic: FakeAnthropic) -> None:
    for i in range(20):
        fake_anthropic.script("extract", f"reply {i}")
    client = claude(fake_anthropic)
    results: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(5):
            text = text_of(ask(client))
            with lock:
                results.append(text)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == sorted(f"reply {i}" for i in range(20))
    assert fake_anthropic.calls() == 20


def test_reset(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script("extract", "x")
    fake_anthropic.fail_next(500, stage="query")
    fake_anthropic.truncate_next()
    fake_anthropic.empty_next()
    fake_anthropic.delay_next(5)
    fake_anthropic.default("extract", "changed")
    fake_anthropic.reset()
    assert fake_anthropic.requests == []
    assert fake_anthropic.pending() == 0
    client = claude(fake_anthropic, max_retries=0, timeout=2)
    msg = ask(client)
    assert msg.stop_reason == "end_turn"
    assert json.loads(text_of(msg)) == DEFAULT_REPLIES["extract"]
    ask(client, "query")
    assert fake_anthropic.calls() == 2


def test_fixture_points_the_sdk_env_at_the_fake(fake_anthropic: FakeAnthropic) -> None:
    client = anthropic.Anthropic(api_key="k")  # no base_url: ANTHROPIC_BASE_URL
    fake_anthropic.script("detect_geo", {"places": ["Paris"]})
    msg = ask(client, "detect_geo")
    assert json.loads(text_of(msg)) == {"places": ["Paris"]}
    assert fake_anthropic.env()["ANTHROPIC_BASE_URL"] == fake_anthropic.url


def test_shared_fixture_is_reset(fake_anthropic_shared: FakeAnthropic) -> None:
    assert fake_anthropic_shared.requests == []
    ask(anthropic.Anthropic(api_key="k"))
    assert fake_anthropic_shared.calls() == 1


# ------------------------------------------------------------------- OpenAI


def test_sdk_asks_for_base64_and_gets_floats(fake_openai: FakeOpenAI) -> None:
    [vec] = embed(gpt(fake_openai), "hello")
    req = fake_openai.last_request()
    assert req["encoding_format"] == "base64"  # the SDK's default
    assert isinstance(req.reply["data"][0]["embedding"], str)
    assert len(vec) == 64
    assert math.isclose(math.sqrt(sum(x * x for x in vec)), 1.0, rel_tol=1e-5)
    assert req.reply["usage"]["prompt_tokens"] >= 1


def test_float_and_base64_agree(fake_openai: FakeOpenAI) -> None:
    client = gpt(fake_openai)
    [as_b64] = embed(client, "same text")
    [as_float] = embed(client, "same text", encoding_format="float")
    assert fake_openai.last_request()["encoding_format"] == "float"
    assert as_b64 == as_float
    assert all(isinstance(x, float) for x in as_float)


def test_response_shape(fake_openai: FakeOpenAI) -> None:
    resp = gpt(fake_openai).embeddings.create(model=EMBED_MODEL, input=["a", "b", "c"])
    assert resp.object == "list"
    assert resp.model == EMBED_MODEL
    assert [d.index for d in resp.data] == [0, 1, 2]
    assert all(d.object == "embedding" for d in resp.data)
    assert resp.usage.prompt_tokens == resp.usage.total_tokens == 3


def test_default_vectors_are_deterministic_and_nearly_orthogonal(fake_openai: FakeOpenAI) -> None:
    client = gpt(fake_openai)
    texts = [f"text number {i}" for i in range(12)]
    vecs = embed(client, texts)
    again = embed(client, texts[3])
    assert again[0] == vecs[3]
    assert embed(client, "Text number 3")[0] != vecs[3]  # default vectors: exact text
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            assert abs(cosine(vecs[i], vecs[j])) < 0.6
    # same vectors in another fake, another process: seeded from sha256
    other = FakeOpenAI()
    assert other.vector(texts[0]) == pytest.approx(vecs[0], abs=1e-6)
    assert hashed_unit_vector(texts[0], 64) == pytest.approx(vecs[0], abs=1e-6)


@pytest.mark.parametrize("similarity", [1.0, 0.95, 0.8, 0.5, 0.0, -0.3])
def test_alias_has_the_exact_cosine(fake_openai: FakeOpenAI, similarity: float) -> None:
    fake_openai.alias("Bob", "Robert Smith", similarity)
    bob, robert = embed(gpt(fake_openai), ["Bob", "Robert Smith"])
    assert cosine(bob, robert) == pytest.approx(similarity, abs=1e-5)
    assert fake_openai.similarity("Bob", "Robert Smith") == pytest.approx(similarity, abs=1e-9)


def test_alias_one_gives_the_same_vector(fake_openai: FakeOpenAI) -> None:
    fake_openai.alias("NYC", "New York City")
    nyc, ny = embed(gpt(fake_openai), ["NYC", "New York City"])
    assert nyc == ny


def test_alias_matching_is_exact_then_loose(fake_openai: FakeOpenAI) -> None:
    fake_openai.near("Acme Corp", "Acme Corporation", 0.9)
    fake_openai.near("acme corp", "something else", 0.2)  # loose key now points here
    client = gpt(fake_openai)
    exact, loose, target, other = embed(
        client, ["Acme Corp", "  ACME CORP ", "Acme Corporation", "something else"]
    )
    assert cosine(exact, target) == pytest.approx(0.9, abs=1e-5)
    assert cosine(loose, other) == pytest.approx(0.2, abs=1e-5)


def test_set_vector_and_chains(fake_openai: FakeOpenAI) -> None:
    v = [0.0] * 64
    v[0] = 2.0
    fake_openai.set_vector("anchor", v)
    fake_openai.alias("a1", "anchor", 0.9)
    fake_openai.alias("a2", "a1", 1.0)
    anchor, a1, a2 = embed(gpt(fake_openai), ["anchor", "a1", "a2"])
    assert anchor == v  # sent as given
    assert cosine(a1, anchor) == pytest.approx(0.9, abs=1e-5)
    assert a2 == a1
    with pytest.raises(ValueError):
        fake_openai.set_vector("bad", [1.0, 2.0])
    with pytest.raises(ValueError):
        fake_openai.alias("x", "y", 1.5)


def test_rules_resolve_lazily(fake_openai: FakeOpenAI) -> None:
    fake_openai.alias("late", "target", 0.7)
    w = [1.0] + [0.0] * 63
    fake_openai.set_vector("target", w)  # after the alias
    [late] = embed(gpt(fake_openai), "late")
    assert late[0] == pytest.approx(0.7, abs=1e-6)


def test_prefix_rule(fake_openai: FakeOpenAI) -> None:
    fake_openai.prefix_rule("Paris", "Paris, France", 0.9)
    fake_openai.prefix_rule("Paris, Tex", "Paris, Texas", 0.95)
    client = gpt(fake_openai)
    target, texas, p1, p2, tx, lower = embed(
        client,
        [
            "Paris, France",
            "Paris, Texas",
            "Paris downtown",
            "Paris 1er",
            "Paris, Texas!",
            "paris nights",
        ],
    )
    # "Paris, France" and "Paris, Texas" start with "Paris" but, as targets,
    # are exempt from prefix rules: they keep their hashed vectors.
    assert target == pytest.approx(hashed_unit_vector("Paris, France", 64), abs=1e-6)
    assert texas == pytest.approx(hashed_unit_vector("Paris, Texas", 64), abs=1e-6)
    assert cosine(p1, target) == pytest.approx(0.9, abs=1e-5)
    assert cosine(p2, target) == pytest.approx(0.9, abs=1e-5)
    assert cosine(tx, texas) == pytest.approx(0.95, abs=1e-5)  # longest prefix wins
    assert cosine(lower, target) == pytest.approx(0.9, abs=1e-5)
    assert p1 != p2


def test_alias_cycle_is_a_500_not_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.alias("x", "y", 0.5)
    fake_openai.alias("y", "x", 0.5)
    with pytest.raises(openai.InternalServerError, match="cycle"):
        embed(gpt(fake_openai), "x")
    assert fake_openai.calls() == 1


def test_dimensions_parameter(fake_openai: FakeOpenAI) -> None:
    fake_openai.alias("p", "q", 0.6)
    p, q = embed(gpt(fake_openai), ["p", "q"], dimensions=16)
    assert len(p) == len(q) == 16
    assert cosine(p, q) == pytest.approx(0.6, abs=1e-5)


def test_configurable_dimension() -> None:
    with FakeOpenAI(dim=256) as fake:
        [v] = embed(gpt(fake), "x")
        assert len(v) == 256


def test_inputs_and_calls(fake_openai: FakeOpenAI) -> None:
    client = gpt(fake_openai)
    embed(client, "one")
    embed(client, ["two", "three"])
    assert fake_openai.inputs() == ["one", "two", "three"]
    assert fake_openai.calls() == 2
    assert fake_openai.requests[0]["input"] == "one"
    assert fake_openai.requests[0].headers["authorization"] == "Bearer test-key"


def test_served_with_and_without_v1(fake_openai: FakeOpenAI) -> None:
    client = openai.OpenAI(api_key="k", base_url=fake_openai.url)
    embed(client, "no v1")
    embed(gpt(fake_openai), "v1")
    assert [r.path for r in fake_openai.requests] == ["/embeddings", "/v1/embeddings"]


def test_empty_input_is_a_400(fake_openai: FakeOpenAI) -> None:
    with pytest.raises(openai.BadRequestError):
        embed(gpt(fake_openai), [""])


def test_openai_rate_limit_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(429, retry_after=0.001)
    [v] = embed(gpt(fake_openai), "retry me")
    first, second = fake_openai.requests
    assert second.received_at - first.received_at < 0.3
    assert len(v) == 64
    assert fake_openai.calls() == 2
    assert fake_openai.requests[0].reply["error"]["code"] == "rate_limit_exceeded"
    assert fake_openai.inputs() == ["retry me", "retry me"]


def test_openai_server_error_exhausts_retries(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(500, body="down", retry_after=0.001, times=3)
    with pytest.raises(openai.InternalServerError, match="down"):
        embed(gpt(fake_openai, max_retries=2), "x")
    assert fake_openai.calls() == 3
    embed(gpt(fake_openai), "x")


def test_openai_delay_times_out(fake_openai: FakeOpenAI) -> None:
    fake_openai.delay_next(1.0)
    with pytest.raises(openai.APITimeoutError):
        embed(gpt(fake_openai, timeout=0.2, max_retries=0), "slow")
    [v] = embed(gpt(fake_openai, timeout=0.2, max_retries=0), "fast")
    assert len(v) == 64


def test_openai_reset(fake_openai: FakeOpenAI) -> None:
    fake_openai.alias("a", "b", 1.0)
    fake_openai.fail_next(500)
    fake_openai.reset()
    a, b = embed(gpt(fake_openai, max_retries=0), ["a", "b"])
    assert a != b
    assert fake_openai.calls() == 1


def test_openai_fixture_sets_base_url_env(fake_openai: FakeOpenAI) -> None:
    client = openai.OpenAI(api_key="k")  # no base_url: OPENAI_BASE_URL
    embed(client, "via env")
    assert fake_openai.inputs() == ["via env"]
    assert fake_openai.env()["OPENAI_BASE_URL"] == fake_openai.base_url


def test_shared_openai_fixture_is_reset(fake_openai_shared: FakeOpenAI) -> None:
    assert fake_openai_shared.calls() == 0
    embed(openai.OpenAI(api_key="k"), "shared")
    assert fake_openai_shared.inputs() == ["shared"]
