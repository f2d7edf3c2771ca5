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


# A question's term held by more than this share of a dataset's passages is
# left out of its search by words while a rarer term remains. FTS5's BM25
# gives a term in half the rows or more an IDF of about nothing
# (log((N - n + 0.5) / (n + 0.5)) <= 0, clamped to 1e-6): it adds no score,
# yet its rows are the ones the search reads and scores: BEAM 100K, 0.55 to
# 0.31 ms a search, every BEAM scale question's evidence the same at 100K and
# 1M. Lower shares cut more and moved the results both ways (0.3: 100K recall
# 0.317 to 0.339, 1M 0.400 to 0.396; docs/performance.md, "A million tokens").
COMMON_SHARE = 0.5
# ... and only in a dataset of at least this many passages. In a small one the
# cut saves nothing worth having, and a term's rows still count there: the
# search by words is fused by rank (``vectors.port.hybrid``), so a passage
# matched only by a common term keeps a rank even at a BM25 score of ~0.
# BEAM 100K holds ~450 passages, its 1M ~3,300 (where the cut is wanted).
COMMON_MIN_PASSAGES = 1000


def phrase(term: str) -> str:
    """A term as an FTS5 phrase (quoted: its characters are not syntax)."""
    return '"' + term.replace('"', '""') + '"'


def informative(
    terms: list[str], rows: dict[str, int], total: int, share: float = COMMON_SHARE
) -> list[str]:
    """The terms a search by words needs (``rows``: how many passages hold
    each; ``total``: how many there are): those held by at most ``share`` of
    them, or all of them when none is (a question of common words only is
    still searched by them) or when the dataset is small
    (``COMMON_MIN_PASSAGES``). A term no passage holds finds nothing either way."""
    if total < COMMON_MIN_PASSAGES:
        return terms
    rare = [t for t in terms if 0 < rows.get(t, 0) <= share * total]
    return rare or terms


def term_rows(conn: sqlite3.Connection, table: str, terms: list[str]) -> dict[str, int]:
    """How many passages hold each term (stemmed as the table stems it)."""
    sql = f"SELECT count(*) FROM {table} WHERE {table} MATCH ?"
    return {t: int(conn.execute(sql, (phrase(t),)).fetchone()[0]) for t in terms}


def passages(conn: sqlite3.Connection, table: str) -> int:
    """How many passages the table holds (FTS5's docsize table has one row
    each: a count of the table itself would read every text)."""
    return int(conn.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0])
