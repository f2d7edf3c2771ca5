"""The vector index in the embedded SQLite file: unit vectors as float32
BLOBs, searched exactly (brute-force cosine) with numpy.

Why not sqlite-vec: it is a loadable extension, and Python's ``sqlite3`` can
only load one when the interpreter was built with extension loading; the
python.org-style builds this project runs on (and uv's) are not
(``enable_load_extension`` is missing), so the default would not start on a
fresh clone. Brute force is exact, and numpy over a cached matrix answers a
100k x 384 search in a few milliseconds (bench/sqlite_store.py prints it).

Hybrid requests (``text`` set) also rank the passages' words with SQLite's
own FTS5 BM25 (one table per dataset, ``sqlite.db.words_table``, Porter
stems) and fuse the two rankings by reciprocal rank.

The file holds the truth; each process keeps one matrix per (dataset, kind)
in memory (:mod:`..knn`: exact up to 20k rows, a one-bit-code first pass with
exact rescoring above) and reads only the rows written since (``seq`` grows
with every write, also another process's). A search first reads, in one
statement, the dataset's epoch, each searched kind's highest ``seq`` and
whether its words table exists; rows are read only when a ``seq`` moved.
Deleting a dataset bumps its epoch, which makes every process reload it.
"""

from __future__ import annotations

import functools
import math
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

import numpy as np

from ...geo_math import haversine_km
from ...models import DatasetKey
from ...oneway import one_way
from ...sqlite.db import Database, create_words, sqlite_errors, words_table
from ...sqlite.words import informative, passages, phrase, term_rows
from ...text import query_terms
from ..knn import VectorTable, one_blas_thread, unit
from ..port import GeoHit, Hit, Kind, SearchRequest, VectorItem, hybrid

P = ParamSpec("P")
R = TypeVar("R")
KM_PER_DEGREE_LAT = 111.2
COUNTED_TERMS = 4096  # terms' passage counts kept per dataset (a question has at most 12)
# The last searches by words kept (their rankings, by dataset, stamp and
# MATCH): a query's second round asks the first round's terms again when the
# question has 12 terms already (the names it adds are past text.query_terms'
# cap: 5 of BEAM's 17 at 1M tokens, 2.7 ms each; docs/performance.md); its
# ranking is the first's, cut to its k. Eight: a few queries' two rounds.
RANKINGS_KEPT = 8


def epoch_key(key: DatasetKey) -> str:
    """A dataset's epoch outlives an erase of its user (a reader must still
    see that the vectors it cached are gone): kept under a one-way hash."""
    return one_way("vectors", key.pk)


def _bump(conn: sqlite3.Connection, key: DatasetKey) -> None:
    conn.execute(
        "INSERT INTO vector_epochs (pk, epoch) VALUES (?, 1) "
        "ON CONFLICT (pk) DO UPDATE SET epoch = epoch + 1",
        (epoch_key(key),),
    )


@dataclass
class _Cached:
    epoch: int = -1
    seq: int = 0
    table: VectorTable = field(default_factory=VectorTable)


@dataclass
class _Counted:
    """A dataset's passages as its searches by words last counted them."""

    stamp: tuple[int, int]  # the dataset's epoch and its passages' highest seq
    total: int
    rows: dict[str, int] = field(default_factory=dict)  # passages holding each term


def _words(conn: sqlite3.Connection, key: DatasetKey) -> str | None:
    """The dataset's words table, None before its first passage."""
    table = words_table(key.pk)
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = ? AND type = 'table'", (table,)
    ).fetchone()
    return table if found else None


@functools.cache
def _state_sql(kinds: tuple[str, ...]) -> str:
    """The epoch, whether the words table exists, and the highest seq of each
    kind (the index's last entry, not a scan), in one statement."""
    tops = "".join(", (SELECT max(seq) FROM vectors WHERE pk = ? AND kind = ?)" for _ in kinds)
    return (
        "SELECT (SELECT epoch FROM vector_epochs WHERE pk = ?), "
        "(SELECT count(*) FROM sqlite_master WHERE name = ? AND type = 'table')" + tops
    )


class SqliteVectorIndex:
    inline = False  # vectors apart from the rows: upserted before the commit

    def __init__(self, db: Database) -> None:
        self.db = db
        self._cache: dict[tuple[str, str], _Cached] = {}
        self._counted: dict[str, _Counted] = {}  # by dataset
        self._ranked: dict[tuple[str, tuple[int, int], str], tuple[int, list[int]]] = {}
        self._lock = threading.Lock()
        self.requests = 0

    @sqlite_errors("vector index upsert")
    def upsert(self, key: DatasetKey, kind: Kind, items: list[VectorItem]) -> None:
        if not items:
            return
        self.requests += 1
        with self.db.write() as conn:
            # REPLACE deletes the old row and inserts a new one: a new seq,
            # which is how other readers learn that the vector changed.
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (pk, kind, id, vec, lat, lon) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (key.pk, kind, item.id, unit(item.vector).tobytes(), item.lat, item.lon)
                    for item in items
                ],
            )
            texts = [(item.id, item.text) for item in items if item.text is not None]
            if kind == "chunks" and texts:
                table = words_table(key.pk)
                create_words(conn, table)
                # by rowid (the passage's ID): a replaced passage is found
                # without a scan
                conn.executemany(
                    f"INSERT OR REPLACE INTO {table} (rowid, text) VALUES (?, ?)", texts
                )

    def _fresh(
        self, conn: sqlite3.Connection, key: DatasetKey, kind: str, epoch: int, top: int | None
    ) -> _Cached:
        """The cached table of (dataset, kind), brought up to date: rows are
        read only when the kind's highest seq is past the cached one."""
        c = self._cache.get((key.pk, kind))
        if c is None or c.epoch != epoch:
            c = self._cache[(key.pk, kind)] = _Cached(epoch=epoch)
        if top is None or top <= c.seq:
            return c
        new = self._since(conn, key, kind, c.seq)
        if new and c.table.dim is not None and any(len(b) != 4 * c.table.dim for *_, b in new):
            # Vectors of another dimension (a new embedding model, being
            # reindexed): reload the rows as they are now.
            c = self._cache[(key.pk, kind)] = _Cached(epoch=epoch)
            new = self._since(conn, key, kind, 0)
        if new:
            dims = {len(blob) for _, _, blob in new}
            if len(dims) == 1:  # one block (a replaced ID keeps its row)
                vecs = np.frombuffer(b"".join(b for _, _, b in new), dtype=np.float32)
                c.table.set_many([r for _, r, _ in new], vecs.reshape(len(new), -1))
            else:
                for _, row_id, blob in new:
                    c.table.set(row_id, np.frombuffer(blob, dtype=np.float32))
            c.seq = new[-1][0]
        return c

    @staticmethod
    def _since(
        conn: sqlite3.Connection, key: DatasetKey, kind: str, seq: int
    ) -> list[tuple[int, int, bytes]]:
        return conn.execute(
            "SELECT seq, id, vec FROM vectors WHERE pk = ? AND kind = ? AND seq > ? ORDER BY seq",
            (key.pk, kind, seq),
        ).fetchall()

    @sqlite_errors("vector index search")
    def search(self, key: DatasetKey, requests: list[SearchRequest]) -> list[list[Hit]]:
        self.requests += 1
        out: list[list[Hit]] = []
        kinds = tuple(dict.fromkeys(r.kind for r in requests))
        units: dict[int, np.ndarray] = {}  # the question's unit vector, once for all kinds
        with self._lock, one_blas_thread(), self.db.read() as conn:
            epoch, words, *tops = conn.execute(
                _state_sql(kinds),
                (epoch_key(key), words_table(key.pk), *(x for k in kinds for x in (key.pk, k))),
            ).fetchone()
            top = dict(zip(kinds, tops, strict=True))
            for req in requests:
                c = self._fresh(conn, key, req.kind, epoch or 0, top[req.kind])
                q = units.get(id(req.vector))
                if q is None:
                    q = units[id(req.vector)] = unit(req.vector)
                hits = [Hit(i, s) for i, s in c.table.search(q, req.k, req.min_score)]
                if req.text is not None and req.kind == "chunks":
                    stamp = (epoch or 0, top[req.kind] or 0)
                    lexical = self._lexical(conn, key, stamp, req.text, req.k) if words else []
                    hits = hybrid([h.id for h in hits], lexical, req.k)
                out.append(hits)
        return out

    def _rows_of(
        self, conn: sqlite3.Connection, key: DatasetKey, stamp: tuple[int, int], terms: list[str]
    ) -> _Counted:
        """How many passages hold each term, and how many there are: counted
        once while the dataset's passages stay as they are (``stamp``: its
        epoch, which a delete moves, and the highest seq of its passages'
        vectors, which a write moves)."""
        c = self._counted.get(key.pk)
        if c is None or c.stamp != stamp or len(c.rows) > COUNTED_TERMS:
            c = self._counted[key.pk] = _Counted(stamp, passages(conn, words_table(key.pk)))
        missing = [t for t in terms if t not in c.rows]
        if missing:
            c.rows.update(term_rows(conn, words_table(key.pk), missing))
        return c

    def _lexical(
        self, conn: sqlite3.Connection, key: DatasetKey, stamp: tuple[int, int], text: str, k: int
    ) -> list[int]:
        """Passage IDs by BM25 (best first) for any of the text's informative
        terms (``sqlite.words.informative``: a term most passages hold costs
        the most rows and adds no score)."""
        terms = query_terms(text)
        if not terms or k <= 0:
            return []
        table = words_table(key.pk)  # (the caller checked that it exists)
        counted = self._rows_of(conn, key, stamp, terms)
        match = " OR ".join(phrase(t) for t in informative(terms, counted.rows, counted.total))
        # (bm25, rowid) orders every row: the best k are the first k of any
        # longer ranking of the same MATCH over the same rows.
        mark = (key.pk, stamp, match)
        kept = self._ranked.get(mark)
        if kept is not None and (k <= kept[0] or len(kept[1]) < kept[0]):
            return kept[1][:k]
        rows = conn.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? "
            f"ORDER BY bm25({table}), rowid LIMIT ?",
            (match, k),
        ).fetchall()
        ranking = [int(r[0]) for r in rows]
        if len(self._ranked) >= RANKINGS_KEPT:
            self._ranked.pop(next(iter(self._ranked)))
        self._ranked[mark] = (k, ranking)
        return ranking

    @sqlite_errors("vector index nearby")
    def nearby(
        self, key: DatasetKey, lat: float, lon: float, radius_km: float, limit: int
    ) -> list[GeoHit]:
        self.requests += 1
        # A latitude band narrows the rows; the haversine decides.
        band = radius_km / KM_PER_DEGREE_LAT + 1e-6
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT id, lat, lon FROM vectors WHERE pk = ? AND kind = 'entities' "
                "AND lat IS NOT NULL AND lon IS NOT NULL AND lat BETWEEN ? AND ?",
                (key.pk, lat - band, lat + band),
            ).fetchall()
        hits = [
            GeoHit(row_id, d)
            for row_id, elat, elon in rows
            if (d := haversine_km(lat, lon, elat, elon)) <= radius_km and not math.isnan(d)
        ]
        hits.sort(key=lambda h: (h.distance_km, h.id))
        return hits[:limit]

    @sqlite_errors("vector index delete_dataset")
    def delete_dataset(self, key: DatasetKey) -> None:
        self.requests += 1
        with self.db.write() as conn:
            conn.execute("DELETE FROM vectors WHERE pk = ?", (key.pk,))
            conn.execute(f"DROP TABLE IF EXISTS {words_table(key.pk)}")
            # (a file written before the epochs were hashed: its row named the user)
            conn.execute("DELETE FROM vector_epochs WHERE pk = ?", (key.pk,))
            _bump(conn, key)

    @sqlite_errors("vector index delete")
    def delete(self, key: DatasetKey, kind: Kind, ids: list[int]) -> int:
        wanted = sorted(set(ids))
        if not wanted:
            return 0
        self.requests += 1
        with self.db.write() as conn:
            gone = conn.executemany(
                "DELETE FROM vectors WHERE pk = ? AND kind = ? AND id = ?",
                [(key.pk, kind, i) for i in wanted],
            ).rowcount
            if kind == "chunks" and (table := _words(conn, key)) is not None:
                conn.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(i,) for i in wanted])
                # FTS5 only marks a deleted row's terms in its index segments;
                # merging them drops the terms, so a forgotten word leaves no
                # trace in the file (tests/integration/test_erase_stores.py).
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
            # The cached matrices only learn of additions (by seq): a new
            # epoch makes every reader rebuild without the removed rows.
            _bump(conn, key)
        return int(gone)

    @sqlite_errors("vector index count")
    def count(self, key: DatasetKey, kind: Kind) -> int:
        with self.db.connect() as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM vectors WHERE pk = ? AND kind = ?", (key.pk, kind)
            ).fetchone()
        return int(row[0])

    def with_vectors(self, key: DatasetKey, kind: Kind, ids: list[int]) -> set[int]:
        return set()  # a separate index: reindex rebuilds it whole
