"""The Anthropic adapter asks for structured replies through tool use (no
extended thinking) and reads a tool-use block or JSON text, through the real
SDK to the fake Messages API."""

from __future__ import annotations

import json

import pytest

from fakes.anthropic_server import FakeAnthropic
from gligabao.ai import prompts
from gligabao.ai.anthropic_llm import REPLY_TOOL, AnthropicLLM
from gligabao.ai.jsonreply import parse_json_object
from gligabao.ai.port import LLMRequest


@pytest.fixture
def llm(fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> AnthropicLLM:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    return AnthropicLLM("test-key", max_retries=0)


def request(stage: str, reasoning: str = "none", schema: bool = True) -> LLMRequest:
    system = {"summarize": prompts.SUMMARIZE_SYSTEM, "invalidate": prompts.INVALIDATE_SYSTEM}
    return LLMRequest(
        stage,
        system[stage],
        "<chunk>text</chunk>",
        "claude-test",
        reasoning,
        512,
        prompts.SCHEMAS[stage] if schema else None,
    )


def test_a_schema_without_thinking_is_a_forced_tool(
    llm: AnthropicLLM, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script(
        "invalidate", {"invalidated": [], "duplicates": [{"edge_id": 3, "of": 0}]}
    )
    reply = llm.complete(request("invalidate"))
    body = fake_anthropic.requests_for("invalidate")[0].body
    assert body["tool_choice"] == {"type": "tool", "name": REPLY_TOOL}
    assert body["tools"][0]["input_schema"] == prompts.INVALIDATE_SCHEMA
    assert parse_json_object(reply.text)["duplicates"] == [{"edge_id": 3, "of": 0}]


def test_thinking_asks_for_json_text(llm: AnthropicLLM, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script("summarize", {"summary": "s"})
    reply = llm.complete(request("summarize", reasoning="low"))
    body = fake_anthropic.requests_for("summarize")[0].body
    assert "tools" not in body and "tool_choice" not in body
    assert body["thinking"]["type"] == "enabled"
    assert json.loads(reply.text) == {"summary": "s"}


def test_no_schema_no_tool(llm: AnthropicLLM, fake_anthropic: FakeAnthropic) -> None:
    llm.complete(request("summarize", schema=False))
    assert "tools" not in fake_anthropic.requests_for("summarize")[0].body


def test_a_text_reply_to_a_forced_tool_is_read(
    llm: AnthropicLLM, fake_anthropic: FakeAnthropic
) -> None:
    # a provider that ignores the schema and answers with fenced JSON text
    fake_anthropic.script("summarize", '```json\n{"summary": "from text"}\n```')
    reply = llm.complete(request("summarize"))
    assert parse_json_object(reply.text) == {"summary": "from text"}


@pytest.mark.parametrize("stage", sorted(prompts.SCHEMAS))
def test_every_stage_has_an_object_schema_naming_its_keys(stage: str) -> None:
    schema = prompts.SCHEMAS[stage]
    assert schema["type"] == "object"
    system = {
        "extract": prompts.EXTRACT_SYSTEM,
        "invalidate": prompts.INVALIDATE_SYSTEM,
        "summarize": prompts.SUMMARIZE_SYSTEM,
        "summarize_entity": prompts.SUMMARIZE_ENTITY_SYSTEM,
        "summarize_session": prompts.SUMMARIZE_SESSION_SYSTEM,
        "query": prompts.QUERY_SYSTEM,
        "detect_geo": prompts.DETECT_GEO_SYSTEM,
    }[stage]
    assert f"[stage: {stage}]" in system
    for key in schema["required"]:
        assert f'"{key}"' in system  # the text reply names the same keys
