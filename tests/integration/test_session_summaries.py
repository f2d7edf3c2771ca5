"""Session summaries (issue 44), on both stores through the real HTTP stack
with the fake model: a session ends by a gap in time (GB_SESSION_GAP_MINUTES
between a text and its session's last one) or by ``close_session``; one
batched ``summarize_session`` call writes the ended sessions' summaries, each
stored as a passage that ``search`` finds (kind ``session_summary``); the
summary is forgotten with the session's last text; summaries off cost no
call; ``close_session`` without a session is a 400 that writes nothing."""

from __future__ import annotations

import math
import re
import time
from typing import Any

import pytest
from test_summaries import N, gb_env, served, store, wait_for

from conftest import Harness
from fakes.extraction import prompt_text

__all__ = ["gb_env", "served", "store"]  # the fixtures, shared with test_summaries

STAGE = "summarize_session"
DAY = "2026-03-0{}T10:{:02d}:00Z"


def sessions_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A model that summarizes each session it is given by its texts' words."""
    out = []
    for sid, block in re.findall(r'<session id="([^"]+)">(.*?)</session>', prompt_text(body), re.S):
        words = re.findall(r"\[text \d+\] \([^)]*\) (?:[^:\n]+: )?([^\n]*)", block)
        out.append({"id": sid, "summary": f"RECAP-{sid}: " + " / ".join(words)})
    return {"sessions": out}


@pytest.fixture
def gb(served: Harness) -> Harness:
    served.llm.default(STAGE, sessions_reply)
    return served


def say(gb: Harness, text: str, session: str, at: str, **extra: Any) -> int:
    out = gb.remember(text, session_id=session, reference_time=at, extract=False, **extra)
    return int(out["artifacts"][0])


def recaps(gb: Harness, query: str = "recap of the session") -> list[dict[str, Any]]:
    r = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": query})
    assert r.status == 200, r.body
    return [p for p in r.body["passages"] if p.get("kind") == "session_summary"]


def settled(gb: Harness) -> None:
    from gligabao import wiring
    from gligabao.models import DatasetKey

    notes = wiring.notes_store()
    wait_for(lambda: notes.ended_count(DatasetKey("u1", "main"), 1) == 0, "no ended session")
    before, still = -1, 0
    while still < 3:
        now = gb.llm.calls(STAGE)
        still = still + 1 if now == before else 0
        before = now
        time.sleep(0.3)


def test_a_gap_ends_a_session_and_its_summary_is_a_passage(gb: Harness) -> None:
    say(gb, "We planned the trip to Lisbon for May.", "s1", DAY.format(1, 0))
    say(gb, "Booked the hotel near the river.", "s1", DAY.format(1, 5))
    assert gb.llm.calls(STAGE) == 0  # no gap yet: the session is open
    # A text two days later (the gap is 30 minutes by default) ends s1.
    say(gb, "Started reading a novel.", "s2", DAY.format(3, 0))
    found = wait_for(lambda: recaps(gb), "s1's summary in search")
    settled(gb)
    assert gb.llm.calls(STAGE) == 1
    assert len(found) == 1
    text = found[0]["text"]
    assert "RECAP-s1" in text and "Lisbon" in text and "hotel" in text
    assert "novel" not in text  # s2 is still open
    sent = prompt_text(gb.llm.requests_for(STAGE)[-1])
    assert '<session id="s1">' in sent and "s2" not in sent
    rows = gb.client.get("/v1/gb/inferences?user_id=u1&limit=50").body["inferences"]
    assert [r for r in rows if r["stage"] == STAGE and r["cost_usd"] > 0]


def test_close_session_ends_it_and_forgetting_its_texts_forgets_the_summary(
    gb: Harness,
) -> None:
    a = say(gb, "Discussed the garden: plant tomatoes.", "s1", DAY.format(1, 0))
    b = say(gb, "And basil by the door.", "s1", DAY.format(1, 1), close_session=True)
    summary = wait_for(lambda: recaps(gb), "the closed session's summary")[0]["artifact_id"]
    settled(gb)
    assert gb.llm.calls(STAGE) == 1
    # One text forgotten: the session is summarized again without it (the
    # new summary replaces the old one).
    assert gb.client.delete(f"/v1/gb/artifacts/{a}?user_id=u1").status == 200
    wait_for(lambda: gb.llm.calls(STAGE) == 2, "the summary rewritten")
    settled(gb)
    assert gb.client.get(f"/v1/gb/artifacts/{summary}?user_id=u1").status == 404
    (now,) = recaps(gb, "basil garden")
    assert "basil" in now["text"] and "tomatoes" not in now["text"]
    # The session's last text forgotten: its summary goes with it.
    assert gb.client.delete(f"/v1/gb/artifacts/{b}?user_id=u1").status == 200
    assert gb.client.get(f"/v1/gb/artifacts/{now['artifact_id']}?user_id=u1").status == 404
    assert recaps(gb, "basil garden") == []


def test_ended_sessions_are_batched(gb: Harness) -> None:
    # Six sessions a day apart: each text ends the session before it.
    items = [
        {"text": f"Day {d} note about topic {d}.", "session_id": f"d{d}", "extract": False}
        | {"reference_time": DAY.format(d, 0)}
        for d in range(1, 7)
    ]
    r = gb.client.post("/v1/gb/remember/batch", {"user_id": "u1", "items": items})
    assert r.status == 202, r.body
    wait_for(lambda: gb.llm.calls(STAGE) > 0, "the summary job")
    settled(gb)
    assert 0 < gb.llm.calls(STAGE) <= math.ceil(5 / N)
    sent = "".join(prompt_text(b) for b in gb.llm.requests_for(STAGE))
    assert sorted(re.findall(r'<session id="(d\d)">', sent)) == [f"d{d}" for d in range(1, 6)]
    found = {p["text"].split(":")[0] for p in recaps(gb, "note about topic")}
    assert found and found <= {f"Summary of session d{d}" for d in range(1, 6)}


@pytest.mark.parametrize("gb_env", [{"GB_SUMMARIES": "off"}])
def test_summaries_off_cost_no_session_call(gb: Harness) -> None:
    say(gb, "A first thought.", "s1", DAY.format(1, 0), close_session=True)
    say(gb, "A later thought.", "s2", DAY.format(4, 0))
    time.sleep(1.0)  # a job, were one queued, would have run by now
    assert gb.llm.calls(STAGE) == 0
    assert recaps(gb) == []


def test_close_session_without_a_session_is_400_and_writes_nothing(gb: Harness) -> None:
    r = gb.client.post(
        "/v1/gb/remember",
        {"user_id": "u1", "text": "Hello.", "extract": False, "close_session": True},
    )
    assert r.status == 400, r.body
    assert gb.client.get("/v1/gb/artifacts?user_id=u1").body.get("artifacts", []) == []
    assert gb.llm.calls(STAGE) == 0


def test_a_session_dropped_under_the_job_leaves_no_mark(gb: Harness) -> None:
    """A session whose last text is forgotten while the summary job holds it
    (its notes dropped): the job's clearing of its ended mark writes nothing
    (on DynamoDB an update would create the mark again, due forever)."""
    from gligabao import wiring
    from gligabao.memory.summaries import stamp
    from gligabao.models import DatasetKey

    key = DatasetKey("u1", "main")
    say(gb, "Hello there.", "s-gone", DAY.format(1, 0), close_session=True)
    settled(gb)
    notes = wiring.notes_store()
    taken_at = stamp()
    notes.drop_session(key, "s-gone")
    notes.put_session_summary(key, "s-gone", None, taken_at)
    notes.put_session_summary(key, "never-seen", None, taken_at)
    assert notes.get_session(key, "s-gone") is None
    assert notes.get_session(key, "never-seen") is None
    assert notes.ended_count(key, 10) == 0
