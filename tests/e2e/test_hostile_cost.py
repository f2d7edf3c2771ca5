"""Inputs bounded by what they cost, against `gligabao serve` on its local
embedder: a question past the model's window (512 of its tokens), or past
its cap of 4,000 characters, is a 400 that names the limit, answered before
anything is embedded (no inference row, no call record); one within both is
served."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from rawhttp import exchange, post_json

from fakes.anthropic_server import FakeAnthropic
from served import ServedCounting


@pytest.fixture(scope="module")
def local(fake_anthropic_session: FakeAnthropic) -> Iterator[ServedCounting]:
    s = ServedCounting({**fake_anthropic_session.env(), "GB_EMBEDDING_PROVIDER": "local"})
    yield s
    s.stop()


@pytest.mark.parametrize("path", ["/v1/gb/search", "/v1/gb/query"])
def test_a_question_past_the_embedders_window_is_a_400_naming_it(
    local: ServedCounting, path: str
) -> None:
    stored = exchange(
        local.port,
        post_json("/v1/gb/remember", {"user_id": "u1", "text": "Alice.", "extract": False}),
    )
    assert stored.status == 200, stored.raw
    before = local.row_counts()
    question = "where does alice work " * 180  # 3,960 characters: some 900 tokens
    answer = exchange(local.port, post_json(path, {"user_id": "u1", "query": question}))
    assert answer.status == 400, answer.raw
    assert "limit of 512 tokens" in answer.json["error"]
    assert local.row_counts() == before  # nothing embedded, nothing recorded


@pytest.mark.parametrize("path", ["/v1/gb/search", "/v1/gb/query"])
def test_a_question_past_its_character_cap_is_a_400_naming_it(
    local: ServedCounting, path: str
) -> None:
    """The extra cap in characters (the OpenAPI document's maxLength), for
    every embedder: 9,000 words are refused by it before any token is counted."""
    before = local.row_counts()
    question = "where does alice work " * 2000  # 44,000 characters
    answer = exchange(local.port, post_json(path, {"user_id": "u1", "query": question}))
    assert answer.status == 400, answer.raw
    assert "at most 4000 characters" in answer.json["error"]
    assert answer.headers.get("x-gb-call-id"), answer.headers
    assert local.row_counts() == before


def test_a_question_within_the_window_is_served(local: ServedCounting) -> None:
    exchange(
        local.port,
        post_json("/v1/gb/remember", {"user_id": "u1", "text": "Alice.", "extract": False}),
    )
    body = {"user_id": "u1", "query": "where does alice work " * 50}
    answer = exchange(local.port, post_json("/v1/gb/search", body))
    assert answer.status == 200, json.loads(answer.raw)
