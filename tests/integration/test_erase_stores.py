"""Nothing comes back, store by store (issue 27), after a forget and after
an erase: the local server's SQLite file (every table, read with sqlite3),
and the OpenSearch node (every index searched, beside DynamoDB on moto).
The DynamoDB tables, with both vector stores, are scanned in test_erase.py;
the SQLite file's bytes after a clean stop in tests/e2e/test_forget_bytes.py."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path

import pytest
from erase_helpers import (
    FORGOTTEN_NEEDLES,
    USER,
    assert_api_returns_nothing,
    assert_other_user_kept,
    erase,
    populate,
    traces,
)
from test_sqlite_server import db_path, gb_sqlite

from conftest import Harness

__all__ = ["db_path", "gb_sqlite"]  # the SQLite server's fixtures, shared
# The full-text index's segments keep a deleted passage's words until they
# are merged, which a clean stop does (the bytes test checks the file then).
SEGMENTS = ("passage_words_data", "passage_words_idx")


def _sqlite_tables(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {
            n: repr(conn.execute(f'SELECT * FROM "{n}"').fetchall())
            for n in names
            if n not in SEGMENTS
        }


def test_nothing_of_an_erased_user_is_in_the_sqlite_file(gb_sqlite: Harness, db_path: Path) -> None:
    gb = gb_sqlite
    populate(gb)
    for table, raw in _sqlite_tables(db_path).items():
        assert traces(raw, FORGOTTEN_NEEDLES) == [], table
    assert traces("".join(_sqlite_tables(db_path).values()))  # the scan sees the user
    out = erase(gb)
    assert out["removed"]["datasets"] == 2 and out["removed"]["idempotency"] == 1, out
    for table, raw in _sqlite_tables(db_path).items():
        assert traces(raw) == [], (table, traces(raw))
    assert_api_returns_nothing(gb)
    assert_other_user_kept(gb)


@pytest.fixture
def gb_env(request: pytest.FixtureRequest) -> dict[str, str]:
    if request.node.name.startswith("test_nothing_of_an_erased_user_is_in_opensearch"):
        url = request.getfixturevalue("opensearch_url")
        return {
            "GB_OPENSEARCH_URL": url,
            "GB_OPENSEARCH_INDEX_PREFIX": f"gber-{uuid.uuid4().hex[:8]}",
        }
    return {}


def test_nothing_of_an_erased_user_is_in_opensearch(gb: Harness, gb_env: dict[str, str]) -> None:
    from opensearchpy import OpenSearch

    from gligabao import wiring

    index = wiring.vector_index()
    index.bootstrap()  # type: ignore[attr-defined]
    client = OpenSearch(hosts=[gb_env["GB_OPENSEARCH_URL"]])
    pattern = f"{gb_env['GB_OPENSEARCH_INDEX_PREFIX']}*"

    def documents() -> str:
        client.indices.refresh(index=pattern)
        hits = client.search(index=pattern, body={"query": {"match_all": {}}, "size": 1000})
        return json.dumps(hits["hits"]["hits"])

    try:
        populate(gb)
        assert traces(documents(), FORGOTTEN_NEEDLES) == []
        assert USER in documents()  # the user's vectors were there
        erase(gb)
        assert traces(documents()) == []
        assert "bob-keeps" in documents()
        for table in ("entities", "edges", "artifacts", "links", "terms", "calls", "inferences"):
            assert traces(json.dumps(gb.scan(table))) == [], table
        assert_api_returns_nothing(gb)
        assert_other_user_kept(gb)
    finally:
        client.indices.delete(index=pattern)
