"""Work bounded by its request, against `gligabao serve` on its SQLite file,
its embedder a real HTTP fake on loopback that holds its answer until the
test lets it go:

- past ``GB_REQUEST_TIMEOUT`` a remember's embedding work ends as a JSON 504
  with a call id, and nothing is written (no text, entity or vector);
- a client that disconnects while its remember or query waits on the
  embedder (a raw socket that sends the request, then closes): the call
  stops at its next stage boundary: the LLM is never called, nothing is
  written, and the call record says why.

Every wait is bounded; nothing asserts a duration. The DynamoDB side (the
Lambda handler's remaining time, the local server on moto):
tests/integration/test_deadline_remember.py."""

from __future__ import annotations

import contextlib
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from rawhttp import connect, exchange, post_json

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import EMBEDDINGS_PATHS, FakeOpenAI
from served import ALICE_AT_ACME, AT_ACME, ServedCounting

RECORDS = ("calls", "inferences")  # what a refused call still writes: its record
WAIT_S = 30.0


class HeldOpenAI(FakeOpenAI):
    """The embeddings fake, holding every request while ``hold`` is on."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.open = threading.Event()
        self.open.set()

    def _delay_for(self, req: Any) -> float | None:
        if req.path in EMBEDDINGS_PATHS:
            self.open.wait(WAIT_S)
        return super()._delay_for(req)


@pytest.fixture(scope="module")
def fakes() -> Iterator[tuple[FakeAnthropic, HeldOpenAI]]:
    llm, emb = FakeAnthropic().start(), HeldOpenAI().start()
    llm.default("extract", ALICE_AT_ACME).default("query", AT_ACME)
    yield llm, emb
    emb.open.set()
    llm.stop()
    emb.stop()


def _serve(fakes: tuple[FakeAnthropic, HeldOpenAI], **env: str) -> ServedCounting:
    llm, emb = fakes
    return ServedCounting(
        {**llm.env(), **emb.env("sk-fake"), "GB_EMBEDDING_PROVIDER": "openai", **env}
    )


@pytest.fixture(scope="module")
def quick(fakes: tuple[FakeAnthropic, HeldOpenAI]) -> Iterator[ServedCounting]:
    s = _serve(fakes, GB_REQUEST_TIMEOUT="1")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def patient(fakes: tuple[FakeAnthropic, HeldOpenAI]) -> Iterator[ServedCounting]:
    s = _serve(fakes)  # the default request timeout (120 s): never reached here
    yield s
    s.stop()


def _content(served: ServedCounting) -> dict[str, int]:
    return {k: v for k, v in served.row_counts().items() if k not in RECORDS}


def _until(what: str, done: Callable[[], bool]) -> None:
    end = time.monotonic() + WAIT_S
    while not done():
        assert time.monotonic() < end, f"still waiting for {what}"
        time.sleep(0.02)


def _statuses(served: ServedCounting, user: str, type_: str) -> list[str]:
    """The statuses of a user's calls of one type, oldest first (the call
    record of a request whose client left: no answer carried its id)."""
    with contextlib.closing(sqlite3.connect(served.data, timeout=30)) as db:
        rows = db.execute(
            "SELECT status FROM calls WHERE user_id = ? AND type = ? ORDER BY started_at, rowid",
            (user, type_),
        )
        return [r[0] for r in rows]


def _browse_is_empty(served: ServedCounting, user: str) -> None:
    for path in (f"/v1/gb/artifacts?user_id={user}", f"/v1/gb/entities?user_id={user}"):
        r = served.client.get(path)
        assert r.status in (200, 404), r.body
        if r.status == 200:
            assert [v for v in r.body.values() if isinstance(v, list)] == [[]], r.body


def test_a_remember_past_the_request_timeout_is_a_json_504_with_nothing_written(
    quick: ServedCounting, fakes: tuple[FakeAnthropic, HeldOpenAI]
) -> None:
    llm, emb = fakes
    before, extracts = _content(quick), llm.calls("extract")
    emb.open.clear()  # the embedder answers only once the 504 is in
    try:
        body = {"user_id": "slow", "text": "Alice works at Acme.", "extract": False}
        key = {"Idempotency-Key": "slow-1"}
        answer = exchange(quick.port, post_json("/v1/gb/remember", body, **key))
    finally:
        emb.open.set()
    assert answer.status == 504, answer.raw
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers.get("x-gb-call-id"), answer.headers
    assert "time budget ran out" in answer.json["error"]
    assert _content(quick) == before  # the idempotency table too: the key is free
    assert llm.calls("extract") == extracts
    _browse_is_empty(quick, "slow")


def _send_then_leave(served: ServedCounting, emb: HeldOpenAI, path: str, body: Any) -> None:
    """Send the request on a raw socket while the embedder holds; once the
    embedder has it, close the socket, wait until the server has closed its
    side (it saw the client go), then let the embedder answer, and wait for
    the call's record (the call is over)."""
    calls, records = emb.calls(), served.row_counts()["calls"]
    emb.open.clear()
    try:
        sock = connect(served.port)
        sock.sendall(post_json(path, body))
        _until("the embeddings request", lambda: emb.calls() > calls)
        sock.shutdown(socket.SHUT_WR)  # the client is done: its side closes
        assert sock.recv(65536) == b""  # the server closed its side too, answering nothing
        sock.close()
    finally:
        emb.open.set()
    _until("the call record", lambda: served.row_counts()["calls"] > records)


def test_a_remember_whose_client_left_stops_before_the_llm_and_writes_nothing(
    patient: ServedCounting, fakes: tuple[FakeAnthropic, HeldOpenAI]
) -> None:
    llm, emb = fakes
    before, extracts, embeds = _content(patient), llm.calls("extract"), emb.calls()
    body = {"user_id": "gone", "text": "Alice works at Acme."}
    _send_then_leave(patient, emb, "/v1/gb/remember", body)
    assert llm.calls("extract") == extracts  # the next stage never ran
    assert emb.calls() == embeds + 1  # nor the second embeddings request
    assert _content(patient) == before
    _browse_is_empty(patient, "gone")
    assert _statuses(patient, "gone", "remember") == [
        "the client disconnected before the extract LLM call"
    ]
    # the same remember with its client waiting is stored
    r = patient.client.post("/v1/gb/remember", body)
    assert r.status == 200, r.body
    assert llm.calls("extract") == extracts + 1


def test_a_query_whose_client_left_never_calls_the_llm(
    patient: ServedCounting, fakes: tuple[FakeAnthropic, HeldOpenAI]
) -> None:
    llm, emb = fakes
    seeded = patient.client.post(
        "/v1/gb/remember", {"user_id": "q", "text": "Alice works at Acme.", "extract": False}
    )
    assert seeded.status == 200, seeded.body
    body = {"user_id": "q", "query": "Where does Alice work?"}
    asked = patient.client.post("/v1/gb/query", body)
    assert asked.status == 200, asked.body  # with its client there, the LLM answers
    queries, before = llm.calls("query"), _content(patient)
    _send_then_leave(patient, emb, "/v1/gb/query", body)
    assert llm.calls("query") == queries
    assert _content(patient) == before
    assert "client disconnected" in _statuses(patient, "q", "query")[-1]


def test_a_search_whose_client_left_stops_after_its_embedding(
    patient: ServedCounting, fakes: tuple[FakeAnthropic, HeldOpenAI]
) -> None:
    _, emb = fakes
    seeded = patient.client.post(
        "/v1/gb/remember", {"user_id": "s", "text": "Alice works at Acme.", "extract": False}
    )
    assert seeded.status == 200, seeded.body
    body = {"user_id": "s", "query": "Where does Alice work?"}
    before = _content(patient)
    _send_then_leave(patient, emb, "/v1/gb/search", body)
    assert _content(patient) == before
    assert _statuses(patient, "s", "search") == ["the client disconnected before the scoring"]
