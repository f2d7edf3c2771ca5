"""One contract, two transports: every route ``gligabao.Memory`` offers,
called through the HTTP client against the local server in this process
(real HTTP on loopback, a SQLite file) and through ``Memory`` (no server).
Both answer with the same response models and refuse with the same
statuses; a refused call writes nothing (the file's rows are counted)."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from gligabao.api.schemas import (
    AcceptedOut,
    ArtifactDetailOut,
    ArtifactsOut,
    BatchProgressOut,
    CallOut,
    DatasetsOut,
    EdgeDetailOut,
    EntitiesOut,
    EntityDetailOut,
    ErasedOut,
    ForgottenOut,
    InferencesOut,
    QueryOut,
    RememberOut,
    SearchOut,
)
from gligabao.client import ApiError, Client, Retry
from gligabao.errors import GbError
from served import ALICE_AT_ACME, AT_ACME

USER = "alice"
REFUSED = (ApiError, GbError)  # the client's and the library's: both carry .status


@dataclass
class Transport:
    gb: Any  # Client or Memory: the same methods
    path: str  # the SQLite file under it

    def rows(self) -> dict[str, int]:
        with contextlib.closing(sqlite3.connect(self.path, timeout=30)) as db:
            names = [
                r[0]
                for r in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%words%' "
                    "AND name NOT IN ('calls', 'inferences')"
                )
            ]
            return {n: db.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}

    def finished(self, call_id: str) -> CallOut:
        """The call once it has ended (over HTTP the queue runs it on a thread;
        the library has run it before answering)."""
        deadline = time.monotonic() + 60
        while (polled := self.gb.call(call_id)).status in ("accepted", "running"):
            assert time.monotonic() < deadline, polled
            time.sleep(0.1)
        return polled  # type: ignore[no-any-return]


def _env(monkeypatch: pytest.MonkeyPatch, llm: FakeAnthropic, emb: FakeOpenAI) -> None:
    for k, v in {
        **llm.env(),
        **emb.env(),
        "GB_EMBEDDING_DIMENSION": "64",
        "GB_LLM_MAX_RETRIES": "0",
    }.items():
        monkeypatch.setenv(k, v)
    for k in ("GB_DYNAMODB_ENDPOINT", "GB_REMEMBER_QUEUE_URL", "GB_DEV_API_KEY"):
        monkeypatch.delenv(k, raising=False)


@contextlib.contextmanager
def _http(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Transport]:
    from gligabao import wiring
    from gligabao.local.server import make_server

    data = str(tmp_path / "served.db")
    monkeypatch.setenv("GB_LOCAL", "1")
    monkeypatch.setenv("GB_DATA", data)
    wiring.reset()
    server = make_server("127.0.0.1", 0, quiet=True)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        # no retries: a 5xx is what the library raises, once
        yield Transport(Client(url, user_id=USER, retry=Retry(attempts=1)), data)
    finally:
        server.shutdown()
        server.server_close()
        wiring.reset()


@contextlib.contextmanager
def _library() -> Iterator[Transport]:
    from gligabao import Memory

    with Memory(user_id=USER) as gb:  # in RAM: the file of a Memory()
        yield Transport(gb, gb.path)


@pytest.fixture(params=["http", "memory"])
def api(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    fake_anthropic_shared: FakeAnthropic,
    fake_openai_shared: FakeOpenAI,
) -> Iterator[Transport]:
    _env(monkeypatch, fake_anthropic_shared, fake_openai_shared)
    opened = _http(monkeypatch, tmp_path) if request.param == "http" else _library()
    with opened as transport:
        yield transport


@pytest.fixture
def llm(fake_anthropic_shared: FakeAnthropic) -> FakeAnthropic:
    return fake_anthropic_shared


def refused(status: int, api: Transport, call: Any, *args: Any, **kw: Any) -> str:
    """``call`` is refused with ``status`` and writes nothing; its message."""
    before = api.rows()
    with pytest.raises(REFUSED) as err:
        call(*args, **kw)
    assert err.value.status == status, err.value
    assert api.rows() == before
    return str(err.value.message)


def test_remember_search_query_and_the_records(api: Transport, llm: FakeAnthropic) -> None:
    gb = api.gb
    llm.script("extract", ALICE_AT_ACME)
    remembered = gb.remember("Alice works at Acme.", session_id="s1")
    assert isinstance(remembered, RememberOut)
    assert [e.name for e in remembered.entities] == ["Alice", "Acme"]

    found = gb.search("Where does Alice work?")
    assert isinstance(found, SearchOut)
    assert [e.relation for e in found.edges] == ["works_at"]

    llm.script("query", AT_ACME)
    answered = gb.query("Where does Alice work?", session_id="s1")
    assert isinstance(answered, QueryOut)
    assert answered.answer == "At Acme." and [e.id for e in answered.evidence.edges] == [1]

    listed = gb.datasets()
    assert isinstance(listed, DatasetsOut)
    assert [(d.name, d.edges) for d in listed.datasets] == [("main", 1)]
    rows = gb.inferences(session_id="s1", limit=50)
    assert isinstance(rows, InferencesOut)
    assert {r.stage for r in rows.inferences} >= {"extract", "query"}
    call = gb.call(rows.inferences[0].call_id)
    assert isinstance(call, CallOut) and call.status == "ok"


def test_the_same_idempotency_key_replays_the_first_answer(
    api: Transport, llm: FakeAnthropic
) -> None:
    llm.script("extract", ALICE_AT_ACME)
    first = api.gb.remember("Alice works at Acme.", idempotency_key="k1")
    again = api.gb.remember("Alice works at Acme.", idempotency_key="k1")
    assert again == first
    assert llm.calls("extract") == 1


def test_queued_work_ends_in_its_call_record(api: Transport, llm: FakeAnthropic) -> None:
    gb = api.gb
    llm.script("extract", ALICE_AT_ACME)
    accepted = gb.remember("Alice works at Acme.", dataset="other", respond_async=True)
    assert isinstance(accepted, AcceptedOut)
    polled = api.finished(accepted.call_id)
    assert polled.status == "ok" and isinstance(polled.result, RememberOut)

    items = [
        {"text": "Bob joined.", "reference_time": "2025-01-02T00:00:00Z", "extract": False},
        {"role": "user", "content": "Hi Bob.", "created_at": "2025-01-01T00:00:00Z"},
    ]
    llm.script("extract", {"entities": [{"name": "Bob", "type": "person"}], "edges": []})
    batch = gb.remember_batch(items, dataset="other", idempotency_key="batch-1")
    assert isinstance(batch, AcceptedOut)
    done = api.finished(batch.call_id)
    assert done.status == "ok", done
    assert isinstance(done.result, BatchProgressOut)
    assert (done.result.texts, done.result.done) == (2, 2)


def test_browse_and_forget(api: Transport, llm: FakeAnthropic) -> None:
    gb = api.gb
    llm.script("extract", ALICE_AT_ACME)
    remembered = gb.remember("Alice works at Acme.", session_id="s1")
    page = gb.entities(limit=1)
    assert isinstance(page, EntitiesOut) and len(page.entities) == 1 and page.next_cursor
    rest = gb.entities(limit=1, cursor=page.next_cursor)
    assert {page.entities[0].name, rest.entities[0].name} == {"Alice", "Acme"}
    assert [e.name for e in gb.entities(q="Alice").entities] == ["Alice"]
    alice = gb.entity(page.entities[0].id)
    assert isinstance(alice, EntityDetailOut)
    # by type (issue 47): the entities of one type, an entity's facts of one relation
    assert [e.name for e in gb.entities(type="Person").entities] == ["Alice"]
    assert gb.entity(alice.entity.id, edge_type="likes").facts == []
    assert isinstance(gb.edge(remembered.edges[0].id), EdgeDetailOut)
    texts = gb.artifacts(session_id="s1")
    assert isinstance(texts, ArtifactsOut) and len(texts.artifacts) == 1
    text_id = texts.artifacts[0].id
    assert isinstance(gb.artifact(text_id), ArtifactDetailOut)

    forgotten = gb.forget(text_id)
    assert isinstance(forgotten, ForgottenOut)
    assert gb.artifacts().artifacts == []
    refused(404, api, gb.forget, text_id)
    refused(404, api, gb.artifact, text_id)


def test_datasets_delete_and_erase(api: Transport, llm: FakeAnthropic) -> None:
    gb = api.gb
    llm.script("extract", ALICE_AT_ACME)
    gb.remember("Alice works at Acme.", dataset="other")
    gb.delete_dataset("other")
    assert gb.datasets().datasets == []
    refused(404, api, gb.delete_dataset, "other")

    gb.remember("Alice works at Acme.", extract=False)
    erased = gb.erase_user()
    assert isinstance(erased, ErasedOut)
    assert erased.status == "ok" and erased.removed.datasets == 1
    assert gb.call(erased.call_id).type == "erase"
    assert gb.datasets().datasets == []


def test_every_refusal_has_the_apis_status_and_writes_nothing(
    api: Transport, llm: FakeAnthropic
) -> None:
    gb = api.gb
    gb.remember("Alice works at Acme.", extract=False)  # something to not change
    # 400: the request models and the query parameters, as the API reads them
    refused(400, api, gb.remember, "")
    refused(400, api, gb.remember, "a text", messages=[{"role": "user", "content": "and"}])
    refused(400, api, gb.remember, "a text", reasoning="extreme")
    refused(400, api, gb.remember_batch, [])
    refused(400, api, gb.query, "")
    refused(400, api, gb.search, "x", max_context_tokens=-1)
    refused(400, api, gb.entities, limit=0)
    refused(400, api, gb.entities, cursor="not a cursor")
    refused(400, api, gb.entities, type="")
    refused(400, api, gb.entity, 1, edge_type="x" * 65)
    refused(400, api, gb.artifacts, limit=100_000)
    refused(400, api, gb.entity, 0)
    refused(400, api, gb.erase_user, "a\u0001b")
    refused(400, api, gb.delete_dataset, "no/such")
    refused(400, api, gb.inferences, limit=0)
    # 404: what is not there
    refused(404, api, gb.entity, 99)
    refused(404, api, gb.edge, 99)
    refused(404, api, gb.artifact, 99)
    refused(404, api, gb.call, "no-such-call")


def test_a_failed_upstream_is_a_502_and_writes_nothing(api: Transport, llm: FakeAnthropic) -> None:
    api.gb.remember("Bob is here.", extract=False)  # something to not change
    llm.fail_next(400, stage="extract")
    message = refused(502, api, api.gb.remember, "Alice works at Acme.")
    assert "LLM" in message or "extract" in message.lower()


@pytest.mark.parametrize("transport", ["http", "memory"])
def test_an_llm_without_its_key_is_a_503_and_writes_nothing(
    transport: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    fake_anthropic_shared: FakeAnthropic,
    fake_openai_shared: FakeOpenAI,
) -> None:
    _env(monkeypatch, fake_anthropic_shared, fake_openai_shared)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("GB_LLM_PROVIDER", "anthropic")
    opened = _http(monkeypatch, tmp_path) if transport == "http" else _library()
    with opened as api:
        api.gb.remember("Bob is here.", extract=False)  # no LLM needed: stored
        message = refused(503, api, api.gb.remember, "Alice works at Acme.")
        assert "ANTHROPIC_API_KEY" in message
        refused(503, api, api.gb.query, "Where does Alice work?")
