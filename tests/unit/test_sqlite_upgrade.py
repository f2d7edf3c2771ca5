"""A version-3 file (every dataset's passage words in one FTS5 table) opens
as version 4: each dataset's words move to a table of its own, the hybrid
search finds them there, one dataset's never in another's, and a deleted
dataset's table goes with it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gligabao.models import DatasetKey
from gligabao.sqlite.db import SCHEMA_VERSION, Database, words_table
from gligabao.vectors.port import SearchRequest, VectorItem
from gligabao.vectors.sqlite.store import SqliteVectorIndex


def names_in(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}


def test_a_version_3_file_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "gligabao.db"
    alice, bob = DatasetKey("alice", "main"), DatasetKey("bob", "main")
    db = Database(path)
    index = SqliteVectorIndex(db)
    for key, text in ((alice, "sailing in Brittany"), (bob, "sailing lessons in Kiel")):
        index.upsert(key, "chunks", [VectorItem(1, [1.0, 0.0], text=text)])
    db.close()
    # Back to what version 3 wrote: one shared table, rows keyed by pk.
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE VIRTUAL TABLE passage_words USING fts5(pk UNINDEXED, id UNINDEXED, text, "
            "tokenize = 'porter unicode61')"
        )
        for key in (alice, bob):
            conn.execute(
                f"INSERT INTO passage_words SELECT ?, rowid, text FROM {words_table(key.pk)}",
                (key.pk,),
            )
            conn.execute(f"DROP TABLE {words_table(key.pk)}")
        conn.execute("PRAGMA user_version = 3")
    assert words_table(alice.pk) not in names_in(path)

    db = Database(path)
    try:
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
        names = names_in(path)
        assert "passage_words" not in names
        assert {words_table(alice.pk), words_table(bob.pk)} <= names
        index = SqliteVectorIndex(db)
        q = SearchRequest("chunks", [0.0, 1.0], 5, 0.99, text="Brittany")  # words only
        assert [h.id for h in index.search(alice, [q])[0]] == [1]
        assert index.search(bob, [q])[0] == []  # Bob's passage lacks the word
        index.delete(bob, "chunks", [1])
        q = SearchRequest("chunks", [0.0, 1.0], 5, 0.99, text="sailing")
        assert index.search(bob, [q])[0] == [] and [h.id for h in index.search(alice, [q])[0]] == [
            1
        ]
        index.delete_dataset(alice)
        names = names_in(path)
        assert words_table(alice.pk) not in names and words_table(bob.pk) in names
    finally:
        db.close()


def test_a_dataset_without_passages_searches_no_words(tmp_path: Path) -> None:
    db = Database(tmp_path / "gligabao.db")
    try:
        index = SqliteVectorIndex(db)
        q = SearchRequest("chunks", [0.0, 1.0], 5, 0.0, text="anything")
        assert index.search(DatasetKey("carol", "main"), [q])[0] == []
        index.delete(DatasetKey("carol", "main"), "chunks", [1])  # nothing to delete: no error
    finally:
        db.close()


def test_a_version_4_file_gives_each_dataset_a_generation(tmp_path: Path) -> None:
    """Version 5 added datasets.generation (a remember commits only into the
    dataset it read, issue 46): a version-4 file's datasets each get one."""
    from gligabao.sqlite.db import SCHEMA

    path = tmp_path / "v4.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA.replace("deleted_at TEXT, generation TEXT,", "deleted_at TEXT,"))
        conn.executemany(
            "INSERT INTO datasets (user_id, name, created_at) VALUES (?, 'main', 't')",
            [("alice",), ("bob",)],
        )
        conn.execute("PRAGMA user_version = 4")
    Database(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
        found = [r[0] for r in conn.execute("SELECT generation FROM datasets")]
    assert len(found) == 2 and all(found) and len(set(found)) == 2, found


def test_a_version_6_file_gains_the_edges_attributes(tmp_path: Path) -> None:
    """Version 7 added edges.attributes (a declared edge type's values, issue
    47): a version-6 file's edges read with none, and new ones keep theirs."""
    from gligabao.graph.sqlite.store import SqliteGraphStore
    from gligabao.models import Edge, GraphWrite
    from gligabao.sqlite.db import SCHEMA

    path = tmp_path / "v6.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA.replace("expired_at TEXT, attributes TEXT,", "expired_at TEXT,"))
        conn.execute(
            "INSERT INTO datasets (user_id, name, created_at, generation) "
            "VALUES ('alice', 'main', 't', 'g')"
        )
        conn.execute(
            "INSERT INTO edges (pk, id, source_id, target_id, relation, description, created_at) "
            "VALUES (?, 1, 1, 2, 'works_at', '', 't')",
            (DatasetKey("alice", "main").pk,),
        )
        conn.execute("PRAGMA user_version = 6")
    db = Database(path)
    try:
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
        store = SqliteGraphStore(db)
        key = DatasetKey("alice", "main")
        assert store.get_edges(key, [1])[1].attributes == {}
        typed = Edge(2, 1, 2, "OWNS_ACCOUNT", created_at="t", attributes={"share": 0.5})
        store.commit(key, GraphWrite(txn="t1", now="t", new_edges=[typed]))
        assert store.get_edges(key, [2])[2].attributes == {"share": 0.5}
    finally:
        db.close()
