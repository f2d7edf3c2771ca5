"""Upgrades of an older SQLite file in place, one a schema version (the
versions are listed beside ``SCHEMA_VERSION`` in db.py): each adds what the
file lacks, inside the opening transaction (tests/unit/test_sqlite_crash.py,
tests/unit/test_sqlite_upgrade.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from .words import create_words, words_table


def _add_speaker(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE artifacts ADD COLUMN speaker TEXT")


def _split_passage_words(conn: sqlite3.Connection) -> None:
    """Version 3 kept every dataset's passage words in one table: move them."""
    if not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'passage_words' AND type = 'table'"
    ).fetchone():
        return
    made: set[str] = set()
    for pk, row_id, text in conn.execute("SELECT pk, id, text FROM passage_words").fetchall():
        table = words_table(pk)
        if table not in made:
            create_words(conn, table)
            made.add(table)
        conn.execute(f"INSERT OR REPLACE INTO {table} (rowid, text) VALUES (?, ?)", (row_id, text))
    conn.execute("DROP TABLE passage_words")


def _add_attributes(conn: sqlite3.Connection) -> None:
    """Version 5: an entity's declared attributes and their history (JSON)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(entities)")}
    for column in ("attributes", "attribute_history"):
        if column not in have:  # (a file rebuilt by hand may have them)
            conn.execute(f"ALTER TABLE entities ADD COLUMN {column} TEXT")


def _add_generation(conn: sqlite3.Connection) -> None:
    """Each dataset a generation of its own (``Dataset.generation``)."""
    cols = {r[1] for r in conn.execute("PRAGMA table_info(datasets)").fetchall()}
    if "generation" not in cols:
        conn.execute("ALTER TABLE datasets ADD COLUMN generation TEXT")
    conn.execute("UPDATE datasets SET generation = lower(hex(randomblob(16)))")


def _add_edge_attributes(conn: sqlite3.Connection) -> None:
    """Version 7: a declared edge type's attribute values (JSON)."""
    if "attributes" not in {r[1] for r in conn.execute("PRAGMA table_info(edges)")}:
        conn.execute("ALTER TABLE edges ADD COLUMN attributes TEXT")


# Upgrades in place, inside the opening transaction: from a version to the
# next, what adds what it lacks (tests/unit/test_sqlite_crash.py).
UPGRADES: dict[int, Callable[[sqlite3.Connection], None]] = {
    2: _add_speaker,
    3: _split_passage_words,
    4: _add_attributes,
    5: _add_generation,
    6: _add_edge_attributes,
}
