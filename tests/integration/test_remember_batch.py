"""POST /v1/gb/remember/batch (issue 32): 202 and a call whose record shows
the progress; texts applied in the order of their time, several per LLM
call; a rerun with the same key skips what is committed."""

from __future__ import annotations

from typing import Any

import pytest
from batch_helpers import conversation, facts, use_world, wait
from remember_helpers import assert_nothing_written

from conftest import Harness
from gligabao.models import DatasetKey

PATH = "/v1/gb/remember/batch"


def post(gb: Harness, body: dict[str, Any], **kw: Any) -> Any:
    return gb.client.post(PATH, {"user_id": "u1", **body}, **kw)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "items"),
        ({"items": []}, "items"),
        ({"items": "Dana lives in Lyon."}, "items"),
        ({"items": [5]}, "items.0"),
        ({"items": [{"text": ""}]}, "text"),
        ({"items": [{"text": "  "}]}, "text"),
        ({"items": [{"text": "x", "role": "user"}]}, "role"),
        ({"items": [{"text": "x", "reference_time": "yesterday"}]}, "reference_time"),
        ({"items": [{"text": "x", "speaker": ""}]}, "speaker"),
        ({"items": [{"text": "x", "extract": "no"}]}, "extract"),
        ({"items": [{"text": "x", "session_id": 7}]}, "session_id"),
        ({"items": [{"content": "x"}]}, "role"),
        ({"items": [{"role": "robot", "content": "x"}]}, "role"),
        ({"items": [{"role": "user", "content": "x", "created_at": "2025-01-01"}]}, "created_at"),
        ({"items": [{"role": "user", "content": "x", "speaker": "Dana"}]}, "speaker"),
        ({"items": [{"text": "x"}], "reference_time": "soon"}, "reference_time"),
        ({"items": [{"text": "x"}], "reasoning": "max"}, "reasoning"),
        ({"items": [{"text": "x"}], "models": {"query": "m"}}, "models"),
        ({"items": [{"text": "x"}], "dataset": "no spaces"}, "dataset"),
        ({"items": [{"text": "x"}] * 1001}, "items"),
        ({"items": [{"text": "x"}], "mood": 1}, "mood"),
    ],
)
def test_a_bad_batch_is_400_and_nothing_is_written(
    gb: Harness, body: dict[str, Any], field: str
) -> None:
    r = post(gb, body)
    assert r.status == 400, r.body
    assert field in r.body["error"], r.body
    assert gb.llm.calls() == 0
    assert_nothing_written(gb)


def test_a_batch_over_the_body_limit_is_413_and_nothing_is_written(gb: Harness) -> None:
    r = post(gb, {"items": [{"text": "x" * 700}] * 100})
    assert r.status == 413, r.body
    assert gb.llm.calls() == 0
    assert_nothing_written(gb)


def test_an_empty_idempotency_key_is_400(gb: Harness) -> None:
    r = post(gb, {"items": [{"text": "x"}]}, headers={"Idempotency-Key": " "})
    assert r.status == 400, r.body
    assert_nothing_written(gb)


def test_without_an_llm_key_extracting_items_is_503_and_passages_work(
    gb: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gligabao import wiring

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    wiring.reset()
    r = post(gb, {"items": [{"text": "Dana lives in Lyon."}]})
    assert r.status == 503 and '"extract": false' in r.body["error"], r.body
    assert_nothing_written(gb)
    r = post(gb, {"items": [{"text": "Dana lives in Lyon.", "extract": False}]})
    assert r.status == 202, r.body
    assert wait(gb, r.call_id)["status"] == "ok"
    assert len(list(gb.graph.iter_artifacts(DatasetKey("u1", "main")))) == 1


def test_a_batch_is_202_and_its_call_shows_the_progress(gb: Harness) -> None:
    use_world(gb)
    items = conversation(30)
    r = post(gb, {"items": items[::-1]})  # given newest first: applied oldest first
    assert r.status == 202, r.body
    assert r.headers["Location"] == f"/v1/gb/calls/{r.call_id}"
    done = wait(gb, r.call_id)
    assert done["status"] == "ok", done
    res = done["result"]
    assert (res["texts"], res["done"], res["failed"], res["skipped"]) == (30, 30, 0, 0)
    assert res["llm_calls"] == gb.llm.calls() and res["input_tokens"] > 0
    assert res["cost_usd"] >= 0 and res["pieces"] >= 1
    # several texts per extraction call: at most one LLM call per 5 texts here
    assert gb.llm.calls("extract") == 1 and gb.llm.calls() <= 30 / 5
    arts = sorted(gb.graph.iter_artifacts(DatasetKey("u1", "main")), key=lambda a: a.id)
    assert [a.reference_time for a in arts] == sorted(a.reference_time for a in arts)
    assert [a.text for a in arts] == [i["text"] for i in items]
    assert {a.speaker for a in arts} == {"Dana"} and {a.session_id for a in arts} == {"s1"}


def test_bulk_gives_the_same_live_and_superseded_facts_as_one_at_a_time(gb: Harness) -> None:
    use_world(gb)
    items = conversation(30)
    for it in items:
        r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "dataset": "one", **it})
        assert r.status == 200, r.body
    one_calls = gb.llm.calls()
    r = post(gb, {"dataset": "bulk", "items": items})
    assert wait(gb, r.call_id)["status"] == "ok"
    bulk_calls = gb.llm.calls() - one_calls
    one, bulk = facts(gb, dataset="one"), facts(gb, dataset="bulk")
    assert one["superseded"], one  # the conversation does supersede facts
    assert bulk == one
    assert bulk_calls < one_calls / 4, (bulk_calls, one_calls)


def test_messages_and_defaults_of_the_request(gb: Harness) -> None:
    use_world(gb)
    items = [
        {
            "role": "user",
            "name": "Dana",
            "content": "Dana lives in Lyon.",
            "created_at": "2025-01-02T10:00:00Z",
        },
        {"role": "assistant", "content": "Lovely."},
    ]
    r = post(gb, {"items": items, "session_id": "chat", "reference_time": "2025-01-03T00:00:00Z"})
    assert wait(gb, r.call_id)["status"] == "ok"
    arts = sorted(gb.graph.iter_artifacts(DatasetKey("u1", "main")), key=lambda a: a.id)
    assert [(a.speaker, a.reference_time, a.session_id) for a in arts] == [
        ("Dana", "2025-01-02T10:00:00Z", "chat"),
        ("assistant", "2025-01-03T00:00:00Z", "chat"),
    ]


def test_a_failed_piece_is_counted_and_a_rerun_with_the_key_does_only_it(
    gb: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gligabao import wiring

    monkeypatch.setenv("GB_BATCH_WINDOW_TEXTS", "10")
    wiring.reset()
    use_world(gb)
    # two windows, two extraction calls; the second fails for good
    items = conversation(10) + [
        {
            **it,
            "session_id": "s2",
            "text": it["text"].replace("Dana", "Sam"),
            "reference_time": it["reference_time"].replace("-01-", "-02-"),
        }
        for it in conversation(10)
    ]
    gb.llm.script("extract", {"entities": [], "edges": []})  # (the first window's)
    gb.llm.fail_next(400, stage="extract")
    headers = {"Idempotency-Key": "import-1"}
    r = post(gb, {"items": items}, headers=headers)
    res = wait(gb, r.call_id)["result"]
    assert (res["done"], res["failed"]) == (10, 10), res
    assert "400" in res["errors"][0]
    key = DatasetKey("u1", "main")
    assert len(list(gb.graph.iter_artifacts(key))) == 10
    extracts = gb.llm.calls("extract")
    r = post(gb, {"items": items}, headers=headers)
    res = wait(gb, r.call_id)["result"]
    assert (res["skipped"], res["done"], res["failed"]) == (10, 20, 0), res
    assert gb.llm.calls("extract") == extracts + 1  # only the second window's
    assert len(list(gb.graph.iter_artifacts(key))) == 20
    # a third run has nothing left to do
    r = post(gb, {"items": items}, headers=headers)
    res = wait(gb, r.call_id)["result"]
    assert (res["skipped"], res["done"]) == (20, 20) and gb.llm.calls("extract") == extracts + 1


def test_interleaved_sessions_share_a_window_and_keep_their_sessions(gb: Harness) -> None:
    use_world(gb)
    items = [
        {
            "text": f"Turn {d} of {s}.",
            "session_id": s,
            "reference_time": f"2025-01-{d:02d}T0{n}:00:00Z",
        }
        for d in range(1, 11)
        for n, s in enumerate(("a", "b"))
    ]
    r = post(gb, {"items": items})
    assert wait(gb, r.call_id)["status"] == "ok"
    assert gb.llm.calls("extract") == 1
    arts = sorted(gb.graph.iter_artifacts(DatasetKey("u1", "main")), key=lambda a: a.id)
    assert [(a.text, a.session_id) for a in arts] == [(i["text"], i["session_id"]) for i in items]


def test_short_of_time_a_batch_stops_before_a_window_and_runs_again(gb: Harness) -> None:
    from gligabao import deadline, wiring
    from gligabao.handlers.remember_worker import process_job
    from gligabao.queue.port import RetryLater
    from gligabao.records.model import new_call

    use_world(gb)
    accepted = new_call("c-time", "remember_batch", "u1", "main", None)
    accepted.status = "accepted"  # as the route saves it before queueing the job
    wiring.record_store().save_call(accepted)
    job = {
        "kind": "remember_batch",
        "call_id": "c-time",
        "key": "k",
        "reference_time": "2025-02-01T00:00:00Z",
        "request": {"user_id": "u1", "items": conversation(5)},
    }
    with deadline.budget(60), pytest.raises(RetryLater):  # under the 120 s a window may need
        process_job(job, final_attempt=False)
    assert_nothing_written(gb)
    call = gb.client.get("/v1/gb/calls/c-time?user_id=u1").body
    assert call["status"].startswith("retrying: the batch stopped with 5 texts to go"), call
    assert process_job(job, final_attempt=False)  # the redelivery, with time
    call = gb.client.get("/v1/gb/calls/c-time?user_id=u1").body
    assert call["status"] == "ok" and call["result"]["done"] == 5, call


def _stored(gb: Harness, dataset: str) -> list[tuple[Any, ...]]:
    """The dataset's texts and windows: text, speaker, session, time, and
    the position of its parent (windows of one reply point at it)."""
    arts = sorted(gb.graph.iter_artifacts(DatasetKey("u1", dataset)), key=lambda a: a.id)
    at = {a.id: n for n, a in enumerate(arts)}
    return [(a.text, a.speaker, a.session_id, a.reference_time, at.get(a.parent_id)) for a in arts]


def test_without_extraction_a_batch_stores_what_remember_stores_one_by_one(gb: Harness) -> None:
    # A long reply (sections and a list, well past a passage's 200 tokens)
    # between two short turns: remembered alone it is searched by windows.
    reply = "\n\n".join(
        f"## Step {n}\n\n"
        + " ".join(f"Point {n}.{k} about packing the tent and stove." for k in range(12))
        for n in range(1, 5)
    )
    items = [
        {"text": "How do I pack for a week of hiking?", "speaker": "user"},
        {"text": reply, "speaker": "assistant"},
        {"text": "Thanks, I will pack the stove first.", "speaker": "user"},
    ]
    items = [
        {
            **it,
            "session_id": "s1",
            "reference_time": f"2025-01-0{n + 1}T10:00:00Z",
            "extract": False,
        }
        for n, it in enumerate(items)
    ]
    for it in items:
        r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "dataset": "one", **it})
        assert r.status == 200, r.body
    r = post(gb, {"dataset": "bulk", "items": items})
    done = wait(gb, r.call_id)
    assert done["status"] == "ok", done
    assert (done["result"]["done"], done["result"]["failed"]) == (3, 0)
    one, bulk = _stored(gb, "one"), _stored(gb, "bulk")
    assert sum(1 for row in one if row[4] is not None) >= 2  # the reply's windows
    assert bulk == one
    assert gb.llm.calls() == 0
    query = {"user_id": "u1", "query": "what goes first when packing the stove?"}
    found = {
        ds: [
            p["text"]
            for p in gb.client.post("/v1/gb/search", {**query, "dataset": ds}).body["passages"]
        ]
        for ds in ("one", "bulk")
    }
    assert found["bulk"] == found["one"] and found["one"]
