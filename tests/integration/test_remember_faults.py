"""remember when an upstream fails: 502, nothing written, and a retry that
completes the work (spec: remember.md, Conventions and Idempotency)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from remember_helpers import (
    assert_nothing_written,
    ent,
    extraction,
    fact,
    key,
    snapshot,
    works_at,
)

from conftest import Harness

TEXT = "Alice works at Acme."


def _llm_500(gb: Harness) -> None:
    gb.llm.fail_next(500)


def _llm_overloaded(gb: Harness) -> None:
    gb.llm.fail_next(529, stage="extract")


def _truncated(gb: Harness) -> None:
    gb.llm.truncate_next(stage="extract")


def _truncated_valid_json(gb: Harness) -> None:
    gb.llm.truncate_next(stage="extract", cut=False)  # stopped at the limit: still unusable


def _prose(gb: Harness) -> None:
    gb.llm.script("extract", "Sorry, I cannot extract anything from this text.")


def _wrong_json(gb: Harness) -> None:
    gb.llm.script("extract", {"facts": []})


def _empty(gb: Harness) -> None:
    gb.llm.empty_next(stage="extract")


def _emb_500(gb: Harness) -> None:
    gb.emb.fail_next(500)


def _emb_500_second_request(gb: Harness) -> None:
    # The first request embeds the text; the second the new names and facts.
    # An alias cycle on a name fails only the request that carries it.
    gb.emb.alias("Alice", "Alice (cycle)", 0.5)
    gb.emb.alias("Alice (cycle)", "Alice", 0.5)


FAULTS: dict[str, Callable[[Harness], None]] = {
    "llm_500": _llm_500,
    "llm_529": _llm_overloaded,
    "truncated": _truncated,
    "truncated_valid_json": _truncated_valid_json,
    "unparsable": _prose,
    "no_lists": _wrong_json,
    "empty": _empty,
    "embeddings_500": _emb_500,
    "embeddings_500_names": _emb_500_second_request,
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_first_call_fails_whole_then_the_retry_completes(gb: Harness, fault: str) -> None:
    gb.llm.default("extract", works_at())
    FAULTS[fault](gb)
    headers = {"Idempotency-Key": "retry-me"}
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": TEXT}, headers=headers)
    assert r.status == 502, (fault, r.status, r.body)
    assert set(r.body) == {"error"} and r.body["error"]
    assert r.call_id
    assert_nothing_written(gb)  # the datasets table too: this was the first call
    call = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1")
    assert call.status == 200 and call.body["status"] != "ok"

    gb.emb.reset()  # drop the alias cycle, keep the LLM's default
    again = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": TEXT}, headers=headers)
    assert again.status == 200, again.body
    assert again.body["artifact_id"] >= 1
    assert [e["name"] for e in again.body["entities"]] == ["Alice", "Acme"]
    assert [e["created"] for e in again.body["entities"]] == [True, True]
    assert len(gb.scan("entities")) == 2
    assert len(gb.scan("edges")) == 1
    assert len(gb.scan("artifacts")) == 1
    assert gb.vectors.count(key(), "entities") == 2
    # the key now replays the completed call
    third = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": TEXT}, headers=headers)
    assert third.body == again.body


@pytest.mark.parametrize("stage", ["extract", "invalidate"])
def test_a_later_call_that_fails_changes_nothing(gb: Harness, stage: str) -> None:
    gb.llm.script("extract", works_at(person_desc="engineer"))
    gb.remember(TEXT)
    before = snapshot(gb)
    extracted = extraction(
        [ent("Alice", "person", "moved on"), ent("Globex", "organization")],
        [fact("Alice", "Globex", "works_at")],
    )
    gb.llm.script("extract", extracted)
    gb.llm.fail_next(500, stage=stage)
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice joined Globex."})
    assert r.status == 502, r.body
    assert snapshot(gb) == before

    gb.llm.script("extract", extracted)
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    out = gb.remember("Alice joined Globex.")
    assert [i["id"] for i in out["invalidated"]] == [1]
    assert out["entities"][0]["description"] == "engineer; moved on"
    assert [e.id for e in gb.graph.live_edges_around(key(), [1], 100)] == [2]
    assert out["artifact_id"] > 1


def test_unparsable_invalidate_reply_is_502(gb: Harness) -> None:
    gb.llm.script("extract", works_at())
    gb.remember(TEXT)
    before = snapshot(gb)
    gb.llm.script("extract", works_at("Alice", "Globex"))
    gb.llm.script("invalidate", "not json")
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice joined Globex."})
    assert r.status == 502, r.body
    assert snapshot(gb) == before


def test_failed_inferences_are_recorded(gb: Harness) -> None:
    gb.llm.script("extract", "no json here")
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": TEXT})
    assert r.status == 502
    infs = gb.client.get(f"/v1/gb/inferences?user_id=u1&call_id={r.call_id}").body["inferences"]
    extract = [i for i in infs if i["stage"] == "extract"]
    assert len(extract) == 1 and extract[0]["status"] != "ok"
    assert extract[0]["input_tokens"] > 0
