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
in memory and reads only the rows written since (``seq`` grows with every
write, also another process's), so a search costs one small SELECT. Deleting
a dataset bumps its epoch, which makes every process reload it.
"""

from __future__ import annotations

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
from ...text import query_terms
from ..port import GeoHit, Hit, Kind, SearchRequest, VectorItem, fuse

P = ParamSpec("P")
R = TypeVar("R")
KM_PER_DEGREE_LAT = 111.2


def _unit(vector: list[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


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
    ids: list[int] = field(default_factory=list)
    pos: dict[int, int] = field(default_factory=dict)
    rows: list[np.ndarray] = field(default_factory=list)
    matrix: np.ndarray | None = None


def _words(conn: sqlite3.Connection, key: DatasetKey) -> str | None:
    """The dataset's words table, None before its first passage."""
    table = words_table(key.pk)
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = ? AND type = 'table'", (table,)
    ).fetchone()
    return table if found else None


class SqliteVectorIndex:
    inline = False  # vectors apart from the rows: upserted before the commit

    def __init__(self, db: Database) -> None:
        self.db = db
        self._cache: dict[tuple[str, str], _Cached] = {}
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
                    (key.pk, kind, item.id, _unit(item.vector).tobytes(), item.lat, item.lon)
                    for item in items
                ],
            )
            texts = [(item.id, item.text) for item in items if item.text is not None]
            if kind == "chunks" and texts:
                table = words_table(key.pk)
                create_words(conn, table)
                # by rowid (the passage's ID): a replaced passage is found
                # without a scan
                conn.executemany(f"INSERT OR REPLACE INTO {table} (rowid, text) VALUES (?, ?)", texts)

    def _fresh(self, conn: sqlite3.Connection, key: DatasetKey, kind: str) -> _Cached:
        """The cached matrix of (dataset, kind), brought up to date."""
        row = conn.execute(
            "SELECT epoch FROM vector_epochs WHERE pk = ?", (epoch_key(key),)
        ).fetchone()
        epoch = row[0] if row else 0
        c = self._cache.get((key.pk, kind))
        if c is None or c.epoch != epoch:
            c = self._cache[(key.pk, kind)] = _Cached(epoch=epoch)
        new = conn.execute(
            "SELECT seq, id, vec FROM vectors WHERE pk = ? AND kind = ? AND seq > ? ORDER BY seq",
            (key.pk, kind, c.seq),
        ).fetchall()
        for seq, row_id, blob in new:
            vec = np.frombuffer(blob, dtype=np.float32)
            if row_id in c.pos:
                c.rows[c.pos[row_id]] = vec
            else:
                c.pos[row_id] = len(c.ids)
                c.ids.append(row_id)
                c.rows.append(vec)
            c.seq = seq
        if new or c.matrix is None:
            dims = {r.shape[0] for r in c.rows}
            c.matrix = np.stack(c.rows) if len(dims) == 1 else None
        return c

    @sqlite_errors("vector index search")
    def search(self, key: DatasetKey, requests: list[SearchRequest]) -> list[list[Hit]]:
        self.requests += 1
        out: list[list[Hit]] = []
        with self._lock, self.db.read() as conn:
            for req in requests:
                hits = self._knn(conn, key, req)
                if req.text is not None and req.kind == "chunks":
                    lexical = self._lexical(conn, key, req.text, req.k)
                    hits = fuse([[h.id for h in hits], lexical], req.k)
                out.append(hits)
        return out

    @staticmethod
    def _lexical(conn: sqlite3.Connection, key: DatasetKey, text: str, k: int) -> list[int]:
        """Passage IDs by BM25 (best first) for any of the text's terms."""
        terms = query_terms(text)
        if not terms or k <= 0:
            return []
        table = _words(conn, key)
        if table is None:
            return []  # no passage written yet
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        rows = conn.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? "
            f"ORDER BY bm25({table}), rowid LIMIT ?",
            (match, k),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def _knn(self, conn: sqlite3.Connection, key: DatasetKey, req: SearchRequest) -> list[Hit]:
        c = self._fresh(conn, key, req.kind)
        q = _unit(req.vector)
        if c.matrix is None or c.matrix.shape[1] != q.shape[0]:
            return []
        scores = c.matrix @ q
        if req.k < scores.shape[0]:  # the best k first, then only those sorted
            top = np.argpartition(-scores, req.k)[: req.k]
            order = top[np.argsort(-scores[top], kind="stable")]
        else:
            order = np.argsort(-scores, kind="stable")
        return [
            Hit(int(c.ids[i]), float(scores[i])) for i in order if float(scores[i]) >= req.min_score
        ]

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
