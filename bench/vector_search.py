"""Exact k-NN in one SQLite file: float32 BLOBs searched with numpy (what
``SqliteVectorIndex`` does) against sqlite-vec's ``vec0`` table, at 1k, 10k
and 100k vectors of one dataset.

    python -m bench.vector_search [--sizes 1000,10000,100000] [--dim 384]

Needs numpy, and for the sqlite-vec side the ``sqlite-vec`` wheel and a Python
whose ``sqlite3`` can load extensions (this project's pyenv build cannot:
there the sqlite-vec side is skipped and says why). Self-contained: it does not
import gligabao, so any such Python runs it, e.g. a throwaway venv on the
system Python with ``pip install sqlite-vec numpy``.

Per size: the time to write the vectors, the first search in a fresh process
(numpy: reading the BLOBs into a matrix; vec0: nothing to load), and the
median of later searches (k=20, one query vector). Printed, never asserted.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    out: np.ndarray = m / np.linalg.norm(m, axis=1, keepdims=True)
    return out


def timed(fn: object, rounds: int = 30) -> tuple[float, float]:
    """(first call ms, median of the next ``rounds`` ms)."""
    assert callable(fn)
    t0 = time.perf_counter()
    fn()
    first = (time.perf_counter() - t0) * 1000
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return first, statistics.median(times)


def numpy_side(path: Path, vecs: np.ndarray, q: np.ndarray) -> tuple[float, float, float, list[int]]:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE v (pk TEXT, kind TEXT, id INTEGER, vec BLOB)")
    t0 = time.perf_counter()
    with conn:
        conn.executemany(
            "INSERT INTO v VALUES ('u', 'edges', ?, ?)",
            ((i + 1, row.tobytes()) for i, row in enumerate(vecs)),
        )
    write_s = time.perf_counter() - t0
    cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def search() -> list[int]:
        if "m" not in cache:
            rows = conn.execute("SELECT id, vec FROM v WHERE pk = 'u' AND kind = 'edges'").fetchall()
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            cache["m"] = (ids, np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows]))
        ids, m = cache["m"]
        scores = m @ q
        top = np.argpartition(-scores, 20)[:20]
        return [int(ids[i]) for i in top[np.argsort(-scores[top])]]

    first, median = timed(search)
    best = search()
    conn.close()
    return write_s, first, median, best


def vec_side(path: Path, vecs: np.ndarray, q: np.ndarray) -> tuple[float, float, float, list[int]]:
    import sqlite_vec  # type: ignore[import-not-found]

    conn = sqlite3.connect(path)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    dim = vecs.shape[1]
    conn.execute(
        f"CREATE VIRTUAL TABLE v USING vec0(pk TEXT partition key, embedding float[{dim}] "
        "distance_metric=cosine)"
    )
    t0 = time.perf_counter()
    with conn:
        conn.executemany(
            "INSERT INTO v (rowid, pk, embedding) VALUES (?, 'u', ?)",
            ((i + 1, row.tobytes()) for i, row in enumerate(vecs)),
        )
    write_s = time.perf_counter() - t0

    def search() -> list[int]:
        rows = conn.execute(
            "SELECT rowid FROM v WHERE embedding MATCH ? AND k = 20 AND pk = 'u' "
            "ORDER BY distance",
            (q.tobytes(),),
        ).fetchall()
        return [int(r[0]) for r in rows]

    first, median = timed(search)
    best = search()
    conn.close()
    return write_s, first, median, best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--dim", type=int, default=384)
    args = ap.parse_args()
    probe = sqlite3.connect(":memory:")
    can_load = hasattr(probe, "enable_load_extension")
    try:
        import sqlite_vec  # noqa: F401
    except ImportError:
        can_load = False
    print(f"SQLite {sqlite3.sqlite_version}; sqlite-vec usable here: {can_load}")
    q = unit_rows(1, args.dim, 7)[0]
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            vecs = unit_rows(n, args.dim, n)
            w, first, med, best = numpy_side(Path(tmp) / f"np-{n}.db", vecs, q)
            print(
                f"{n:>7} x {args.dim}  numpy BLOBs: write {w:6.2f} s, first search {first:8.1f} ms, "
                f"then {med:7.2f} ms"
            )
            if can_load:
                w, first, med, best_vec = vec_side(Path(tmp) / f"vec-{n}.db", vecs, q)
                same = best_vec == best
                print(
                    f"{n:>7} x {args.dim}  sqlite-vec:  write {w:6.2f} s, first search "
                    f"{first:8.1f} ms, then {med:7.2f} ms (same top 20: {same})"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
