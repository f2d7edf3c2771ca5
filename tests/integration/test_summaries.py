"""Entity summaries kept current (issue 44), on both stores through the real
HTTP stack: a remember that changes Alice's facts marks her summary stale and
a background job rewrites it with one batched `summarize_entity` call; 50
entities changed by one batch cost ceil(50 / N) calls; a query about Alice
gives the model her summary; summaries off cost no call; the call records
show the stage and its cost. And preferences and standing instructions: one
remembered in an early session reaches the context of a later question on
its topic that shares none of its words."""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Client, Harness
from fakes.anthropic_server import FakeAnthropic
from fakes.extraction import prompt_text
from fakes.openai_server import FakeOpenAI

N = 4  # GB_SUMMARY_BATCH in these tests
PRICES = {"claude-haiku-5-5": [1_000_000, 2_000_000], "text-embedding-3-small": [1_000_000, 0]}
ALICE_ACME = {
    "entities": [
        {"name": "Alice", "type": "person", "description": "engineer"},
        {"name": "Acme", "type": "organization"},
    ],
    "edges": [
        {
            "source": "Alice",
            "target": "Acme",
            "relation": "works_at",
            "description": "Alice works at Acme.",
        }
    ],
}


def summaries_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A model that summarizes each entity it is given, citing its facts."""
    out = []
    for block in re.findall(r"<entity>(.*?)</entity>", prompt_text(body), re.S):
        head = re.search(r"\[entity (\d+)\] ([^(:\n]+)", block)
        assert head is not None
        edges = [int(x) for x in re.findall(r"\[edge (\d+)\]", block)]
        name = head.group(2).strip()
        out.append({"id": int(head.group(1)), "summary": f"SUMMARY-OF-{name}", "edges": edges})
    return {"summaries": out}


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def gb_env() -> dict[str, str]:
    return {"GB_SUMMARIES": "on", "GB_SUMMARY_BATCH": str(N), "GB_PRICES": json.dumps(PRICES)}


@pytest.fixture
def served(
    store: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    fake_anthropic_shared: FakeAnthropic,
    fake_openai_shared: FakeOpenAI,
    gb_env: dict[str, str],
) -> Iterator[Harness]:
    fake_anthropic_shared.default("summarize_entity", summaries_reply)
    if store == "dynamodb":
        yield request.getfixturevalue("gb")
        return
    from gligabao import wiring
    from gligabao.local.server import make_server

    env = {
        "GB_LOCAL": "1",
        "GB_DATA": str(tmp_path / "gligabao.db"),
        "ANTHROPIC_API_KEY": "test-anthropic-key",
        "OPENAI_API_KEY": "test-openai-key",
        "GB_EMBEDDING_DIMENSION": "64",
        "GB_LLM_MAX_RETRIES": "0",
        "POWERTOOLS_METRICS_NAMESPACE": "gligabao-test",
        **gb_env,
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for k in ("GB_DYNAMODB_ENDPOINT", "GB_OPENSEARCH_URL", "GB_REMEMBER_QUEUE_URL"):
        monkeypatch.delenv(k, raising=False)
    wiring.reset()
    wiring.database()
    server = make_server("127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield Harness(
            Client(f"http://127.0.0.1:{server.server_address[1]}"),
            fake_anthropic_shared,
            fake_openai_shared,
            "",
        )
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        wiring.reset()


def entity(gb: Harness, eid: int, user: str = "u1") -> dict[str, Any]:
    r = gb.client.get(f"/v1/gb/entities/{eid}?user_id={user}")
    assert r.status == 200, r.body
    return dict(r.body)


def wait_for(check: Any, what: str, timeout_s: float = 180.0) -> Any:
    """Poll until ``check()`` is truthy (the job runs on a background thread;
    the bound is generous: a loaded machine, not a timing assertion)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def summary_inferences(gb: Harness, user: str = "u1") -> list[dict[str, Any]]:
    r = gb.client.get(f"/v1/gb/inferences?user_id={user}&limit=200")
    assert r.status == 200, r.body
    return [i for i in r.body["inferences"] if i["stage"] == "summarize_entity"]


def settled(gb: Harness, user: str = "u1", dataset: str = "main") -> None:
    """No summary job left: nothing stale, and the calls stable a while."""
    from gligabao import wiring
    from gligabao.models import DatasetKey

    notes = wiring.notes_store()
    wait_for(lambda: notes.stale_count(DatasetKey(user, dataset), 1) == 0, "no stale entity")
    before, still = -1, 0
    while still < 3:
        now = gb.llm.calls("summarize_entity")
        still = still + 1 if now == before else 0
        before = now
        time.sleep(0.3)


def test_a_changed_entity_is_summarized_by_one_batched_call(served: Harness) -> None:
    gb = served
    gb.llm.script("extract", ALICE_ACME)
    out = gb.remember("Alice works at Acme.")
    alice = next(e["id"] for e in out["entities"] if e["name"] == "Alice")
    edge = out["edges"][0]["id"]

    got = wait_for(lambda: (e := entity(gb, alice))["summary"] and e, "Alice's summary")
    assert got["summary"] == "SUMMARY-OF-Alice"
    assert got["summary_stale"] is False
    assert got["summary_updated_at"]
    assert got["summary_edges"] == [edge]
    settled(gb)
    # Alice and Acme changed together: one call wrote both.
    assert gb.llm.calls("summarize_entity") == 1
    rows = wait_for(lambda: summary_inferences(gb), "the summary's call record")
    assert len(rows) == 1 and rows[0]["status"] == "ok"
    assert rows[0]["cost_usd"] > 0

    # Her facts change: stale, then rewritten by the next job.
    gb.llm.script(
        "extract",
        {
            "entities": [{"name": "Alice", "type": "person"}, {"name": "Paris", "type": "place"}],
            "edges": [
                {
                    "source": "Alice",
                    "target": "Paris",
                    "relation": "lives_in",
                    "description": "Alice lives in Paris.",
                }
            ],
        },
    )
    gb.llm.default(
        "summarize_entity",
        lambda body: {
            "summaries": [
                {"id": s["id"], "summary": s["summary"] + " v2"}
                for s in summaries_reply(body)["summaries"]
            ]
        },
    )
    gb.remember("Alice lives in Paris.")
    wait_for(lambda: entity(gb, alice)["summary"].endswith("v2"), "Alice's new summary")
    settled(gb)
    assert gb.llm.calls("summarize_entity") == 2


def test_fifty_entities_cost_at_most_ceil_of_fifty_over_n_calls(served: Harness) -> None:
    gb = served
    people = [f"Person{i:02d}" for i in range(25)]
    ents: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    for p in people:  # 50 entities: a person and their city each
        ents += [{"name": p, "type": "person"}, {"name": f"City of {p}", "type": "place"}]
        edges.append(
            {"source": p, "target": f"City of {p}", "relation": "lives_in", "description": "x"}
        )
    # The batch's texts go to extraction as one window: one reply for all.
    gb.llm.script("extract", {"entities": ents, "edges": edges})
    items = [{"text": f"Text {i} about five people.", "extract": True} for i in range(5)]
    r = gb.client.post("/v1/gb/remember/batch", {"user_id": "u1", "items": items})
    assert r.status == 202, r.body
    batch = r.body["call_id"]
    wait_for(
        lambda: gb.client.get(f"/v1/gb/calls/{batch}?user_id=u1").body.get("status") == "ok",
        "the batch",
    )
    wait_for(lambda: gb.llm.calls("summarize_entity") > 0, "the summary job")
    settled(gb)
    assert 0 < gb.llm.calls("summarize_entity") <= math.ceil(50 / N)
    listing = gb.client.get("/v1/gb/entities?user_id=u1&limit=100").body["entities"]
    assert len(listing) == 50
    for e in listing[:3]:
        assert entity(gb, e["id"])["summary"] == f"SUMMARY-OF-{e['name']}"


def test_a_query_about_alice_gives_the_model_her_summary(served: Harness) -> None:
    gb = served
    gb.llm.script("extract", ALICE_ACME)
    out = gb.remember("Alice works at Acme.")
    alice = next(e["id"] for e in out["entities"] if e["name"] == "Alice")
    wait_for(lambda: entity(gb, alice)["summary"], "Alice's summary")
    gb.query("Where does Alice work?")
    sent = prompt_text(gb.llm.requests_for("query")[-1])
    assert "<notes>" in sent
    assert f"[summary of entity {alice} Alice] SUMMARY-OF-Alice" in sent


@pytest.mark.parametrize("gb_env", [{"GB_SUMMARIES": "off"}])
def test_summaries_off_cost_no_call(served: Harness) -> None:
    gb = served
    gb.llm.script("extract", ALICE_ACME)
    out = gb.remember("Alice works at Acme.")
    time.sleep(1.0)  # a job, were one queued, would have run by now
    assert gb.llm.calls("summarize_entity") == 0
    got = entity(gb, out["entities"][0]["id"])
    assert got["summary"] is None and got["summary_stale"] is True


def test_a_dataset_turns_summaries_off(served: Harness) -> None:
    from gligabao import wiring
    from gligabao.models import DatasetKey

    gb = served
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.", dataset="quiet")  # the dataset exists
    settled(gb, dataset="quiet")
    calls = gb.llm.calls("summarize_entity")
    wiring.notes_store().set_options(DatasetKey("u1", "quiet"), {"summaries": False})
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme again.", dataset="quiet")
    time.sleep(1.0)
    assert gb.llm.calls("summarize_entity") == calls


PRIVACY = {
    "entities": [
        {"name": "user", "type": "person"},
        {"name": "data privacy answers", "type": "concept"},
    ],
    "edges": [
        {
            "source": "user",
            "target": "data privacy answers",
            "relation": "wants_included",
            "description": "Always include encryption details when I ask about data privacy.",
            "kind": "instruction",
            "topic": "data privacy",
        }
    ],
}
BALANCED = {
    "entities": [{"name": "user", "type": "person"}, {"name": "AI hiring", "type": "concept"}],
    "edges": [
        {
            "source": "user",
            "target": "AI hiring",
            "relation": "prefers",
            "description": "I prefer a balanced approach to AI in hiring.",
            "kind": "preference",
            "topic": "hiring with AI",
        }
    ],
}


def test_preferences_reach_a_later_question_that_shares_none_of_their_words(
    served: Harness,
) -> None:
    gb = served
    gb.llm.script("extract", PRIVACY).script("extract", BALANCED)
    gb.remember("Always include encryption details when I ask about data privacy.", session_id="s1")
    gb.remember("I prefer a balanced approach to AI in hiring.", session_id="s1")
    # Many later texts, none of them about either topic.
    for i in range(6):
        gb.llm.script("extract", {"entities": [], "edges": []})
        gb.remember(f"Weekend note {i}: went hiking and cooked pasta.", session_id="s2")
    gb.query("How should I keep my online accounts safe?", session_id="s3")
    sent = prompt_text(gb.llm.requests_for("query")[-1])
    assert "[instruction, edge" in sent
    assert "Always include encryption details" in sent
    assert "[preference, edge" in sent
    r = gb.client.post(
        "/v1/gb/search", {"user_id": "u1", "query": "What about screening candidates?"}
    )
    assert r.status == 200, r.body
    kinds = {n["kind"] for n in r.body["notes"]}
    assert {"preference", "instruction"} <= kinds
    # The speaker's entity is the user's profile: their preferences listed.
    user = gb.client.get("/v1/gb/entities?user_id=u1&q=user").body["entities"][0]
    prefs = entity(gb, user["id"])["preferences"]
    assert {p["kind"] for p in prefs} == {"preference", "instruction"}


def test_without_extraction_a_standing_statement_is_kept_by_the_rule(served: Harness) -> None:
    gb = served
    gb.remember(
        "From now on, always give me distances in metric units.", extract=False, speaker="user"
    )
    gb.remember("Sure, I will use kilometres.", extract=False, speaker="assistant")
    for i in range(5):
        gb.remember(f"We talked about pasta recipe number {i}.", extract=False, speaker="user")
    r = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": "How far is Lyon from Paris?"})
    assert r.status == 200, r.body
    notes = r.body.get("notes", [])
    assert [n["text"] for n in notes] == ["From now on, always give me distances in metric units."]
    assert gb.llm.calls() == 0


def test_a_summary_written_before_its_mark_is_cleared_reads_current(
    gb: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DynamoDB writes a summary, then clears its stale mark (a crash between
    leaves the mark, never loses one). A reader in that window sees the
    summary current; a mark made after the job took the entity keeps it
    stale."""
    from gligabao import wiring
    from gligabao.memory.summaries import stamp
    from gligabao.models import DatasetKey
    from gligabao.notes import dynamodb as notes_dynamodb
    from gligabao.notes.port import Summary

    notes, key = wiring.notes_store(), DatasetKey("u1", "main")
    notes.mark_stale(key, [7], stamp())
    taken_at = stamp()
    monkeypatch.setattr(notes_dynamodb, "_clear_mark", lambda mark, taken_at: None)
    notes.put_summaries(key, [Summary(7, "Seven.", updated_at=taken_at)], taken_at)
    assert notes.stale_count(key, 5) == 1  # the mark is still there
    got = notes.get_summaries(key, [7])[7]
    assert (got.text, got.public()["summary_stale"]) == ("Seven.", False)

    notes.mark_stale(key, [7], stamp())  # its facts changed after the job took it
    assert notes.get_summaries(key, [7])[7].public()["summary_stale"] is True
