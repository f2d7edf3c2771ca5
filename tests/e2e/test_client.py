"""End to end: the Python client against a running `gligabao serve`, every
method, and a remember retried through the 409 of its own first attempt."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from gligabao.api.schemas import (
    AcceptedOut,
    BatchProgressOut,
    CallOut,
    DatasetsOut,
    InferencesOut,
    QueryOut,
    RememberOut,
    SearchOut,
)
from gligabao.client import ApiError, Client, Retry
from served import ALICE_AT_ACME as EXTRACT
from served import Served

EXTRACT_BOB = {"entities": [{"name": "Bob", "type": "person"}], "edges": []}


@pytest.fixture(scope="module")
def served(
    fake_anthropic_session: FakeAnthropic, fake_openai_session: FakeOpenAI
) -> Iterator[Served]:
    # Its own embedded DynamoDB: a dataset delete batches keys the way only
    # an in-process moto accepts (issue 20), and this test deletes one.
    env = {**fake_anthropic_session.env(), **fake_openai_session.env()}
    s = Served({**env, "GB_EMBEDDING_DIMENSION": "64", "GB_LLM_MAX_RETRIES": "0"})
    yield s
    s.stop()


@pytest.fixture
def llm(fake_anthropic_shared: FakeAnthropic, fake_openai_shared: FakeOpenAI) -> FakeAnthropic:
    return fake_anthropic_shared


def test_every_method_against_a_running_server(served: Served, llm: FakeAnthropic) -> None:
    gb = Client(served.client.base, user_id="client-user")
    llm.script("extract", EXTRACT)
    remembered = gb.remember("Alice works at Acme.", session_id="s1")
    assert isinstance(remembered, RememberOut)
    assert remembered.session_id == "s1"
    assert [e.name for e in remembered.entities] == ["Alice", "Acme"]

    found = gb.search("Where does Alice work?")
    assert isinstance(found, SearchOut)
    assert [e.relation for e in found.edges] == ["works_at"]
    assert found.context_tokens > 0

    llm.script("query", {"answer": "At Acme.", "entities": [], "edges": [1], "passages": []})
    answered = gb.query("Where does Alice work?", session_id="s1")
    assert isinstance(answered, QueryOut)
    assert answered.answer == "At Acme."
    assert [e.id for e in answered.evidence.edges] == [1]

    listed = gb.datasets()
    assert isinstance(listed, DatasetsOut)
    assert [(d.name, d.edges) for d in listed.datasets] == [("main", 1)]

    rows = gb.inferences(session_id="s1", limit=50)
    assert isinstance(rows, InferencesOut)
    assert {r.stage for r in rows.inferences} >= {"extract", "query"}
    first = gb.inferences(limit=1)
    assert len(first.inferences) == 1 and first.next
    assert gb.inferences(limit=1, cursor=first.next).inferences[0].id != first.inferences[0].id

    call = gb.call(rows.inferences[0].call_id)
    assert isinstance(call, CallOut)
    assert call.status == "ok"

    # Queued: answered 202 with the call to poll, whose result is the remember's.
    llm.script("extract", EXTRACT_BOB)
    accepted = gb.remember("Bob joined.", dataset="other", respond_async=True)
    assert isinstance(accepted, AcceptedOut)
    deadline = time.monotonic() + 60
    while (polled := gb.call(accepted.call_id)).status in ("accepted", "running"):
        assert time.monotonic() < deadline, polled
        time.sleep(0.2)
    assert polled.status == "ok"
    assert isinstance(polled.result, RememberOut) and polled.result.entities[0].name == "Bob"

    # A batch: always queued; the call's result is its progress, then its totals.
    llm.script("extract", EXTRACT_BOB)
    items = [
        {"text": "Bob joined.", "reference_time": "2025-01-02T00:00:00Z"},
        {"role": "user", "content": "Hi Bob.", "created_at": "2025-01-01T00:00:00Z"},
    ]
    accepted = gb.remember_batch(items, dataset="other", idempotency_key="batch-1")
    assert isinstance(accepted, AcceptedOut)
    while (polled := gb.call(accepted.call_id)).status in ("accepted", "running"):
        assert time.monotonic() < deadline, polled
        time.sleep(0.2)
    assert polled.status == "ok", polled
    assert isinstance(polled.result, BatchProgressOut)
    assert (polled.result.texts, polled.result.done, polled.result.llm_calls) == (2, 2, 1)

    gb.delete_dataset("other")
    assert [d.name for d in gb.datasets().datasets] == ["main"]

    with pytest.raises(ApiError) as err:
        gb.call("no-such-call")
    assert err.value.status == 404
    assert "not found" in err.value.message
    assert err.value.call_id
    with pytest.raises(ApiError) as err:
        gb.delete_dataset("other")
    assert err.value.status == 404

    # erase the user: 202 with the call, whose record says it finished
    erased = gb.erase_user()
    assert erased.status == "ok" and erased.removed.datasets == 1, erased
    done = gb.call(erased.call_id)
    assert done.type == "erase" and done.status == "ok"
    assert gb.datasets().datasets == []
    with pytest.raises(ApiError) as err:
        gb.erase_user("a\u0001b")
    assert err.value.status == 400


def test_the_client_remembers_chat_messages(served: Served, llm: FakeAnthropic) -> None:
    gb = Client(served.client.base, user_id="client-chat", dataset="chat")
    llm.script("extract", EXTRACT)
    extractions = llm.calls("extract")
    done = gb.remember(
        messages=[
            {"role": "user", "name": "Alice", "content": "I work at Acme now."},
            {"role": "assistant", "content": "Noted: Acme."},
        ],
        session_id="s9",
    )
    assert isinstance(done, RememberOut)
    assert len(done.artifacts) == 2
    assert llm.calls("extract") == extractions + 1
    with pytest.raises(ApiError) as both:
        gb.remember("a text", messages=[{"role": "user", "content": "and messages"}])
    assert both.value.status == 400


def test_a_remember_retried_through_a_409_returns_the_first_attempts_result(
    served: Served, llm: FakeAnthropic, caplog: pytest.LogCaptureFixture
) -> None:
    """The first attempt is slow (its extraction waits 2 s); the second, with
    the same key, meets 409 until the first is done, then gets its result."""
    user = "retry-user"
    llm.delay_next(2.0, "extract")
    llm.script("extract", EXTRACT)
    first: dict[str, Any] = {}

    def slow() -> None:
        first["out"] = Client(served.client.base, user_id=user).remember(
            "Alice works at Acme.", idempotency_key="k-409"
        )

    thread = threading.Thread(target=slow)
    thread.start()
    deadline = time.monotonic() + 30
    while not llm.requests_for("extract"):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    caplog.set_level(logging.INFO, logger="gligabao.client")
    retrying = Client(
        served.client.base, user_id=user, retry=Retry(attempts=20, base_s=0.2, max_s=0.5)
    )
    second = retrying.remember("Alice works at Acme.", idempotency_key="k-409")
    thread.join(timeout=60)

    assert second == first["out"]
    assert any(": 409 " in r.getMessage() for r in caplog.records), caplog.records
    assert llm.calls("extract") == 1
    [dataset] = retrying.datasets().datasets
    assert (dataset.artifacts, dataset.edges) == (1, 1)


def test_the_client_corrects_forgets_and_audits_facts(served: Served, llm: FakeAnthropic) -> None:
    """Issue 44's methods: correct, forget_fact, conflicts, merges."""
    gb = Client(served.client.base, user_id="fixer")
    llm.script("extract", EXTRACT)
    gb.remember("Alice works at Acme.")
    llm.script("extract", EXTRACT_BOB)
    gb.remember("Bob joined.")
    edge = gb.entity(1).facts[0].id
    fixed = gb.correct(edge, target="Bob", reason="a typo")
    assert fixed.edge.target == "Bob" and fixed.edge.correction is not None
    assert fixed.edge.correction.reason == "a typo"
    assert fixed.replaced.expired_at is not None
    history = gb.edge(fixed.edge.id)
    assert history.edge.correction is not None and history.replaced[0].edge.id == edge
    assert gb.conflicts().conflicts == []
    llm.script("extract", {"entities": [{"name": "Alice", "type": "person"}], "edges": []})
    gb.remember("Alice again.")
    merges = gb.merges(1)
    assert [(m.names, m.match) for m in merges.merges] == [(["Alice"], "same name")]
    undone = gb.forget_fact(fixed.edge.id)
    assert undone.restored.edges == [edge]
    with pytest.raises(ApiError) as err:
        gb.forget_fact(fixed.edge.id)
    assert err.value.status == 404
    gb.erase_user()
