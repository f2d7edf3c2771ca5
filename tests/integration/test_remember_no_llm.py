"""remember without an LLM configured: 503, and nothing written
(spec: remember.md, Configuration)."""

from __future__ import annotations

import pytest
from remember_helpers import assert_nothing_written

from conftest import Harness


@pytest.fixture
def gb_env() -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": ""}  # an empty value unsets it


def test_remember_is_503_and_writes_nothing(gb: Harness) -> None:
    r = gb.client.post(
        "/v1/gb/remember",
        {"user_id": "u1", "text": "Alice works at Acme.", "session_id": "s1"},
        headers={"Idempotency-Key": "k1"},
    )
    assert r.status == 503, r.body
    assert set(r.body) == {"error"} and "ANTHROPIC_API_KEY" in r.body["error"]
    assert r.call_id
    assert gb.llm.calls() == 0
    assert gb.emb.calls() == 0
    assert_nothing_written(gb)
    assert gb.scan("idempotency") == []


def test_requests_are_still_validated_first(gb: Harness) -> None:
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1"})
    assert r.status == 400, r.body


def test_the_server_still_serves_what_needs_no_llm(gb: Harness) -> None:
    r = gb.client.get("/v1/gb/datasets?user_id=u1")
    assert r.status == 200 and r.body == {"datasets": []}
