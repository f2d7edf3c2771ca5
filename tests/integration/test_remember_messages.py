"""remember with ``messages`` (a chat window, one extraction call) and with
``"extract": false`` (passages only, no LLM call): issue 32."""

from __future__ import annotations

from typing import Any

import pytest
from remember_helpers import assert_nothing_written, ent, extract_prompt, extraction, fact

from conftest import Harness
from gligabao.models import DatasetKey


def key() -> DatasetKey:
    return DatasetKey("u1", "main")


def msg(role: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, **extra}


CHAT = [
    msg("user", "I moved to Lyon last week.", name="Dana", created_at="2025-03-01T09:00:00Z"),
    msg("assistant", "Nice! How do you like it?", created_at="2025-03-01T09:00:05Z"),
    msg("user", "I love it. I also started at Acme.", name="Dana"),
]


def post(gb: Harness, body: dict[str, Any], **kw: Any) -> Any:
    return gb.client.post("/v1/gb/remember", {"user_id": "u1", **body}, **kw)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"text": "Hi.", "messages": [msg("user", "Hi.")]}, "exactly one"),
        ({}, "exactly one"),
        ({"messages": []}, "messages"),
        ({"messages": [msg("user", "x")] * 101}, "messages"),
        ({"messages": "Hi."}, "messages"),
        ({"messages": [msg("robot", "Hi.")]}, "role"),
        ({"messages": [{"content": "Hi."}]}, "role"),
        ({"messages": [msg("user", "")]}, "content"),
        ({"messages": [msg("user", "   ")]}, "content"),
        ({"messages": [msg("user", 5)]}, "content"),
        ({"messages": [msg("user", "Hi.", name="")]}, "name"),
        ({"messages": [msg("user", "Hi.", name="Dana\n")]}, "name"),
        ({"messages": [msg("user", "Hi.", created_at="yesterday")]}, "created_at"),
        ({"messages": [msg("user", "Hi.", created_at="2025-03-01")]}, "created_at"),
        ({"messages": [msg("user", "Hi.", mood="happy")]}, "mood"),
        ({"messages": [msg("user", "Hi.")], "speaker": "Dana"}, "speaker"),
        ({"text": "Hi.", "extract": "no"}, "extract"),
    ],
)
def test_a_bad_messages_field_is_400_and_nothing_is_written(
    gb: Harness, body: dict[str, Any], field: str
) -> None:
    r = post(gb, body)
    assert r.status == 400, r.body
    assert field in r.body["error"], r.body
    assert gb.llm.calls() == 0
    assert_nothing_written(gb)


def test_messages_over_the_body_limit_are_413_and_nothing_is_written(gb: Harness) -> None:
    r = post(gb, {"messages": [msg("user", "x" * 700)] * 100})
    assert r.status == 413, r.body
    assert_nothing_written(gb)


def test_each_message_is_its_own_text_with_its_speaker_and_time(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        {
            **extraction(
                [ent("Dana", "person"), ent("Lyon", "city"), ent("Acme", "organization")],
                [fact("Dana", "Lyon", "lives_in"), fact("Dana", "Acme", "works_at")],
            ),
        },
    )
    r = post(gb, {"messages": CHAT, "session_id": "s1", "reference_time": "2025-03-02T10:00:00Z"})
    assert r.status == 200, r.body
    out = r.body
    assert out["artifacts"] == [1, 2, 3] and out["artifact_id"] == 1
    arts = gb.graph.get_artifacts(key(), [1, 2, 3])
    assert [arts[i].text for i in (1, 2, 3)] == [m["content"] for m in CHAT]
    assert [arts[i].speaker for i in (1, 2, 3)] == ["Dana", "assistant", "Dana"]
    # its own time, else the request's reference_time
    assert [arts[i].reference_time for i in (1, 2, 3)] == [
        "2025-03-01T09:00:00Z",
        "2025-03-01T09:00:05Z",
        "2025-03-02T10:00:00Z",
    ]
    assert all(arts[i].session_id == "s1" and arts[i].parent_id is None for i in (1, 2, 3))
    # one extraction call for the window, which shows every message
    assert gb.llm.calls("extract") == 1
    prompt = extract_prompt(gb)
    assert "[message 0] 2025-03-01T09:00:00Z Dana: I moved to Lyon last week." in prompt
    assert "[message 1] 2025-03-01T09:00:05Z assistant: Nice!" in prompt
    assert "[message 2] 2025-03-02T10:00:00Z Dana: I love it." in prompt
    assert {e["name"] for e in out["entities"]} == {"Dana", "Lyon", "Acme"}
    assert len(out["edges"]) == 2
    # every message is a passage of its own
    assert gb.vectors.count(key(), "chunks") == 3


def test_a_fact_placed_in_a_message_takes_its_time_and_provenance(gb: Harness) -> None:
    reply = extraction(
        [ent("Dana", "person"), ent("Lyon", "city"), ent("Acme", "organization")],
        [fact("Dana", "Lyon", "lives_in"), fact("Dana", "Acme", "works_at")],
    )
    reply["edges"][0]["message"] = 0
    reply["edges"][1]["message"] = 2
    gb.llm.script("extract", reply)
    r = post(gb, {"messages": CHAT, "reference_time": "2025-03-02T10:00:00Z"})
    assert r.status == 200, r.body
    edges = {e["relation"]: e for e in r.body["edges"]}
    assert edges["lives_in"]["valid_at"] == "2025-03-01T09:00:00Z"
    assert edges["lives_in"]["artifact_id"] == 1
    assert edges["works_at"]["valid_at"] == "2025-03-02T10:00:00Z"
    assert edges["works_at"]["artifact_id"] == 3


def test_the_session_context_names_the_previous_speakers(gb: Harness) -> None:
    post(gb, {"messages": CHAT[:2], "session_id": "s1"})
    post(gb, {"messages": CHAT[2:], "session_id": "s1"})
    assert gb.llm.calls("extract") == 2
    block = extract_prompt(gb).split("<previous_messages>")[1].split("</previous_messages>")[0]
    assert "<message>Dana: I moved to Lyon last week.</message>" in block
    assert "<message>assistant: Nice! How do you like it?</message>" in block


def test_messages_are_idempotent(gb: Harness) -> None:
    first = post(gb, {"messages": CHAT}, headers={"Idempotency-Key": "k1"})
    again = post(gb, {"messages": CHAT}, headers={"Idempotency-Key": "k1"})
    assert first.status == again.status == 200
    assert again.body == first.body
    assert gb.llm.calls("extract") == 1
    assert len(gb.scan("artifacts")) == 3


def test_extract_false_stores_passages_without_an_llm_call(gb: Harness) -> None:
    r = post(gb, {"messages": CHAT, "session_id": "s1", "extract": False})
    assert r.status == 200, r.body
    assert r.body["artifacts"] == [1, 2, 3]
    assert r.body["entities"] == [] and r.body["edges"] == []
    assert gb.llm.calls() == 0
    assert gb.emb.calls() == 1  # the passages' vectors, one request
    arts = gb.graph.get_artifacts(key(), [1, 2, 3])
    assert [arts[i].speaker for i in (1, 2, 3)] == ["Dana", "assistant", "Dana"]
    assert gb.vectors.count(key(), "chunks") == 3
    assert gb.scan("entities") == [] and gb.scan("edges") == []
    t = post(gb, {"text": "Dana's cat is called Miso.", "speaker": "Dana", "extract": False})
    assert t.status == 200 and t.body["artifacts"] == [4]
    assert gb.graph.get_artifacts(key(), [4])[4].speaker == "Dana"
    assert gb.llm.calls() == 0
    # search finds the stored passage
    s = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": "What is the cat called?"})
    assert s.status == 200, s.body
    assert 4 in [p["artifact_id"] for p in s.body["passages"]]


class TestWithoutAnLLM:
    @pytest.fixture
    def gb_env(self) -> dict[str, str]:
        return {"ANTHROPIC_API_KEY": ""}

    def test_extract_false_works_and_the_503_says_so(self, gb: Harness) -> None:
        r = post(gb, {"messages": CHAT})
        assert r.status == 503, r.body
        assert "ANTHROPIC_API_KEY" in r.body["error"] and '"extract": false' in r.body["error"]
        assert_nothing_written(gb)
        ok = post(gb, {"text": "Dana lives in Lyon.", "extract": False})
        assert ok.status == 200, ok.body
        assert gb.llm.calls() == 0
        assert len(gb.scan("artifacts")) == 1
