"""A failing SQLite statement is a 502 that names the store and the kind of
failure; the exception itself (class, message, table names) stays in the log
detail, as for DynamoDB. The failure is real: a table of the file is gone."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gligabao.errors import UpstreamError
from gligabao.graph.sqlite.store import SqliteGraphStore
from gligabao.models import DatasetKey
from gligabao.records.sqlite.store import SqliteRecordStore
from gligabao.sqlite.db import Database
from gligabao.vectors.sqlite.store import SqliteVectorIndex

KEY = DatasetKey("u1", "main")


def _drop(path: Path, table: str) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute(f"DROP TABLE {table}")
        conn.commit()
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("table", "call", "message"),
    [
        (
            "datasets",
            lambda db: SqliteGraphStore(db).list_datasets("u1"),
            "graph store list_datasets failed: a database error",
        ),
        (
            "inferences",
            lambda db: SqliteRecordStore(db).list_inferences(
                "u1", dataset=None, session_id=None, call_id=None, limit=5, cursor=None
            ),
            "record store list_inferences failed: a database error",
        ),
        (
            "vectors",
            lambda db: SqliteVectorIndex(db).count(KEY, "entities"),
            "vector index count failed: a database error",
        ),
    ],
)
def test_a_sqlite_failure_names_the_store_not_the_exception(
    tmp_path: Path, table: str, call: Callable[[Database], Any], message: str
) -> None:
    path = tmp_path / "gligabao.db"
    db = Database(path)
    with db.connect() as conn:  # the schema exists, with the table
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
    _drop(path, table)
    with pytest.raises(UpstreamError) as err:
        call(db)
    assert str(err.value) == message
    assert err.value.status == 502
    assert "OperationalError" in err.value.detail and table in err.value.detail
    assert "no such table" not in str(err.value) and "Error" not in str(err.value)
