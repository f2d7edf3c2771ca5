"""A process killed inside SQLite's commit transaction: a child process opens
the file, commits one remember (acknowledged), then starts a second one and
SIGKILLs itself at a named statement of it (after its artifacts and entities,
before its edges or links). The parent reopens the file: the first write is
whole, nothing of the second is there, and the store keeps working."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gligabao.graph.sqlite.store import SqliteGraphStore
from gligabao.models import DatasetKey, Edge, Entity, GraphWrite
from gligabao.sqlite.db import Database

KEY = DatasetKey("u1", "main")

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from gligabao.graph.sqlite.store import SqliteGraphStore
    from gligabao.models import Artifact, DatasetKey, Edge, Entity, GraphWrite
    from gligabao.sqlite.db import Database

    db = Database(sys.argv[1])
    store = SqliteGraphStore(db)
    key = DatasetKey("u1", "main")
    store.ensure_dataset(key)
    store.allocate_ids(key, 4, 2, 2)
    t = "2024-01-01T00:00:00Z"
    store.commit(key, GraphWrite(
        artifacts=[Artifact(1, "Alice knows Bob.", t, t)],
        new_entities=[Entity(1, "Alice", "person", "", t, t), Entity(2, "Bob", "person", "", t, t)],
        new_edges=[Edge(1, 1, 2, "knows", created_at=t)],
        entity_links=[(1, 1), (2, 1)], edge_links=[(1, 1)],
    ))
    print("acknowledged", flush=True)

    def crash(statement):
        if statement.startswith(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)

    with db.connect() as conn:  # the pool's one connection: commit takes it next
        conn.set_trace_callback(crash)
    store.commit(key, GraphWrite(
        artifacts=[Artifact(2, "Carol works at Acme.", t, t)],
        new_entities=[Entity(3, "Carol", "person", "", t, t), Entity(4, "Acme", "org", "", t, t)],
        new_edges=[Edge(2, 3, 4, "works_at", created_at=t)],
        entity_links=[(3, 2), (4, 2)], edge_links=[(2, 2)],
    ))
    print("not reached", flush=True)
    """
)


@pytest.mark.parametrize("point", ["INSERT OR REPLACE INTO edges", "INSERT OR IGNORE INTO links"])
def test_a_kill_inside_commit_leaves_the_acknowledged_write_whole_and_nothing_else(
    tmp_path: Path, point: str
) -> None:
    path = tmp_path / "gligabao.db"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), point],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert done.stdout.split() == ["acknowledged"]
    db = Database(path)
    store = SqliteGraphStore(db)
    try:
        ds = store.get_dataset(KEY)
        assert ds is not None and (ds.entities, ds.edges, ds.artifacts) == (2, 1, 1)
        assert sorted(store.get_entities(KEY, [1, 2, 3, 4])) == [1, 2]
        assert sorted(store.get_edges(KEY, [1, 2])) == [1]
        assert sorted(store.get_artifacts(KEY, [1, 2])) == [1]
        assert store.keyword_hits(KEY, ["carol", "acme"], 5) == []
        assert store.entity_artifacts(KEY, 3) == [] and store.edge_artifacts(KEY, 2) == []
        assert store.edge_artifacts(KEY, 1) == [1]
        # the file is not locked or damaged: the next remember goes through
        t = "2024-01-02T00:00:00Z"
        store.commit(
            KEY,
            GraphWrite(
                new_entities=[Entity(3, "Carol", "person", "", t, t)],
                new_edges=[Edge(2, 3, 1, "knows", created_at=t)],
            ),
        )
        assert [e.id for e in store.live_edges_around(KEY, [1], 10)] == [2, 1]
    finally:
        db.close()


def test_a_file_of_another_schema_version_is_refused_with_a_way_out(tmp_path: Path) -> None:
    import sqlite3

    from gligabao.sqlite.db import SCHEMA_VERSION, SchemaMismatch

    path = tmp_path / "gligabao.db"
    Database(path).close()  # a fresh file gets the current version
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    Database(path).close()  # and opens again
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SchemaMismatch, match="gligabao export"):
        Database(path)
    older = tmp_path / "older.db"  # a file from before versions: tables, version 0
    with sqlite3.connect(older) as conn:
        conn.execute("CREATE TABLE entities (pk TEXT)")
    with pytest.raises(SchemaMismatch):
        Database(older)


def test_a_version_2_file_is_upgraded_in_place_keeping_its_texts(tmp_path: Path) -> None:
    """Version 3 added artifacts.speaker, version 4 one words table per
    dataset: a version-2 file gains the column (its texts have no speaker)
    and its passages' words move, instead of the file being refused."""
    import sqlite3

    from gligabao.sqlite.db import SCHEMA, SCHEMA_VERSION, words_table

    path = tmp_path / "v2.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            SCHEMA.replace(
                "call_id TEXT, summary TEXT, speaker TEXT,", "call_id TEXT, summary TEXT,"
            ).replace(" attributes TEXT, attribute_history TEXT,", "")
        )
        conn.execute(  # what versions 2 and 3 kept: every dataset's words in one table
            "CREATE VIRTUAL TABLE passage_words USING fts5(pk UNINDEXED, id UNINDEXED, text, "
            "tokenize = 'porter unicode61')"
        )
        conn.execute("INSERT INTO passage_words VALUES ('u#main', 1, 'old text')")
        conn.execute(
            "INSERT INTO artifacts (pk, id, text, created_at, reference_time) "
            "VALUES ('u#main', 1, 'old text', 't', 't')"
        )
        conn.execute("PRAGMA user_version = 2")
    Database(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
        row = conn.execute("SELECT text, speaker FROM artifacts WHERE id = 1").fetchone()
        words = conn.execute(f"SELECT rowid, text FROM {words_table('u#main')}").fetchall()
    assert row == ("old text", None)
    assert words == [(1, "old text")]
