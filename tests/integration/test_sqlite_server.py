"""The API on the local server's default store (one SQLite file), through the
real HTTP stack in this process: remember and query, idempotent and async
remembers, records, dataset deletion, and a bad request that writes nothing.
The DynamoDB path has the rest of the integration suite; the adapters
themselves share the contract suites in tests/contract."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Client, Harness
from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from gligabao.models import DatasetKey

EXTRACT = {
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
ANSWER = {"answer": "At Acme.", "entities": [], "edges": [1], "passages": []}
TABLES = ("entities", "terms", "names", "facts", "edges", "artifacts", "links", "vectors")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "gligabao.db"


@pytest.fixture
def gb_sqlite(
    monkeypatch: pytest.MonkeyPatch,
    db_path: Path,
    fake_anthropic_shared: FakeAnthropic,
    fake_openai_shared: FakeOpenAI,
) -> Iterator[Harness]:
    from gligabao import wiring
    from gligabao.local.server import make_server

    env = {
        "GB_LOCAL": "1",
        "GB_DATA": str(db_path),
        "ANTHROPIC_API_KEY": "test-anthropic-key",
        "OPENAI_API_KEY": "test-openai-key",
        "GB_EMBEDDING_DIMENSION": "64",
        "GB_LLM_MAX_RETRIES": "0",
        "POWERTOOLS_METRICS_NAMESPACE": "gligabao-test",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for k in ("GB_DYNAMODB_ENDPOINT", "GB_OPENSEARCH_URL", "GB_REMEMBER_QUEUE_URL"):
        monkeypatch.delenv(k, raising=False)
    wiring.reset()
    assert wiring.settings().store == "sqlite"
    wiring.database()  # as `gligabao serve` does: the file exists from the start
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


def rows(path: Path, table: str, pk: str | None = None) -> int:
    with sqlite3.connect(path) as conn:
        if pk is None:
            return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        return int(conn.execute(f"SELECT COUNT(*) FROM {table} WHERE pk = ?", (pk,)).fetchone()[0])


def test_remember_query_records_and_listing_on_the_file(gb_sqlite: Harness, db_path: Path) -> None:
    gb = gb_sqlite
    gb.llm.script("extract", EXTRACT)
    out = gb.remember("Alice works at Acme.", session_id="s1")
    assert [e["name"] for e in out["entities"]] == ["Alice", "Acme"]
    pk = DatasetKey("u1", "main").pk
    assert rows(db_path, "entities", pk) == 2 and rows(db_path, "edges", pk) == 1
    assert rows(db_path, "vectors", pk) >= 3  # 2 entities, 1 edge
    gb.llm.script("query", ANSWER)
    q = gb.query("Where does Alice work?")
    assert q["answer"] == "At Acme."
    assert [e["id"] for e in q["evidence"]["edges"]] == [1]
    assert "Alice(1) --works_at--> Acme(2)" in str(gb.llm.requests_for("query")[-1])
    listed = gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"]
    assert [(d["name"], d["entities"], d["edges"], d["artifacts"]) for d in listed] == [
        ("main", 2, 1, 1)
    ]
    infs = gb.client.get("/v1/gb/inferences?user_id=u1").body["inferences"]
    assert {i["stage"] for i in infs} >= {"extract", "query"}
    call = gb.client.get(f"/v1/gb/calls/{infs[0]['call_id']}?user_id=u1")
    assert call.status == 200 and call.body["steps"]


def test_an_idempotent_remember_replays_without_writing(gb_sqlite: Harness, db_path: Path) -> None:
    gb = gb_sqlite
    gb.llm.script("extract", EXTRACT)
    body = {"user_id": "u1", "text": "Alice works at Acme."}
    first = gb.client.post("/v1/gb/remember", body, headers={"Idempotency-Key": "k-1"})
    assert first.status == 200, first.body
    counts = {t: rows(db_path, t) for t in TABLES}
    again = gb.client.post("/v1/gb/remember", body, headers={"Idempotency-Key": "k-1"})
    assert again.status == 200 and again.body == first.body
    assert {t: rows(db_path, t) for t in TABLES} == counts
    assert gb.llm.calls("extract") == 1


def test_an_async_remember_completes_and_its_call_is_stored(gb_sqlite: Harness) -> None:
    gb = gb_sqlite
    gb.llm.script("extract", EXTRACT)
    r = gb.client.post(
        "/v1/gb/remember",
        {"user_id": "u1", "text": "Alice works at Acme."},
        headers={"Prefer": "respond-async"},
    )
    assert r.status == 202, r.body
    deadline = time.monotonic() + 30
    body: Any = None
    while time.monotonic() < deadline:
        body = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1").body
        if body["status"] not in ("accepted", "running"):
            break
        time.sleep(0.05)
    assert body["status"] == "ok", body
    assert [e["name"] for e in body["result"]["entities"]] == ["Alice", "Acme"]


def test_delete_dataset_empties_the_file_of_it_and_nothing_else(
    gb_sqlite: Harness, db_path: Path
) -> None:
    gb = gb_sqlite
    for user in ("u1", "u2"):
        gb.llm.script("extract", EXTRACT)
        gb.remember("Alice works at Acme.", user=user)
    u1, u2 = DatasetKey("u1", "main").pk, DatasetKey("u2", "main").pk
    kept = {t: rows(db_path, t, u2) for t in TABLES}
    assert all(kept[t] > 0 for t in ("entities", "terms", "names", "edges", "vectors"))
    assert gb.client.delete("/v1/gb/datasets/main?user_id=u1").status == 204
    assert {t: rows(db_path, t, u1) for t in TABLES} == dict.fromkeys(TABLES, 0)
    assert {t: rows(db_path, t, u2) for t in TABLES} == kept
    assert gb.client.get("/v1/gb/inferences?user_id=u1").body["inferences"] == []
    assert gb.client.get("/v1/gb/inferences?user_id=u2").body["inferences"]
    assert gb.client.get("/v1/gb/datasets?user_id=u1").body == {"datasets": []}


def test_a_bad_remember_is_400_and_writes_nothing(gb_sqlite: Harness, db_path: Path) -> None:
    r = gb_sqlite.client.post("/v1/gb/remember", {"user_id": "u1", "text": ""})
    assert r.status == 400, r.body
    r = gb_sqlite.client.post(
        "/v1/gb/remember", {"user_id": "u1", "text": "x", "dataset": "bad name!"}
    )
    assert r.status == 400, r.body
    assert rows(db_path, "datasets") == 0
    assert all(rows(db_path, t) == 0 for t in TABLES)
