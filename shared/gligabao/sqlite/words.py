"""The passages' words: one FTS5 table per dataset (the lexical half of the
local hybrid search), named from the dataset's key."""

from __future__ import annotations

import hashlib
import sqlite3

WORDS_PREFIX = "words_"


def words_table(pk: str) -> str:
    """The FTS5 table of one dataset's passage words (the lexical half of the
    hybrid search: BM25, Porter stems; the rowid is the passage's ID). One per
    dataset, so that a search reads and ranks that dataset's passages only:
    in one shared table a MATCH collects every user's matching rows before
    the dataset's are picked out, and BM25's statistics count them all."""
    return WORDS_PREFIX + hashlib.sha256(pk.encode()).hexdigest()[:24]


def create_words(conn: sqlite3.Connection, table: str) -> None:
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5("
        "text, tokenize = 'porter unicode61')"
    )


def words_tables(conn: sqlite3.Connection) -> list[str]:
    """Every dataset's words table (not FTS5's shadow tables)."""
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ? "
        "AND sql LIKE 'CREATE VIRTUAL TABLE%'",
        (WORDS_PREFIX + "%",),
    ).fetchall()
    return [r[0] for r in rows]
