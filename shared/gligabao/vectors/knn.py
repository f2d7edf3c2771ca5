"""One in-memory vector table (a dataset's vectors of one kind) and its
nearest-neighbour search, for the indexes that search in process (the SQLite
store's, the in-process one's).

Up to ``EXACT_UP_TO`` rows the search is exact: one matrix-vector product.
Past that the product reads the whole matrix (100k x 384 float32 is 150 MB:
12 ms on a busy 2-core machine, most of a query), so a first pass ranks the
rows by the Hamming distance of one-bit codes (the sign of each coordinate of
the vector minus the table's mean, 48 bytes a row at 384 dimensions), and the
best ``max(CANDIDATES, OVERSAMPLE * k)`` of them are scored exactly; their
exact cosines decide the ``k`` returned. The codes of a unit vector keep its
angle to another (the share of differing bits estimates it), so a vector well
above the others' cosine is in the candidates; what can be lost is the order
among near-ties at the bottom of the candidates (bench/vector_recall.py
measures it). Centering first keeps the bits informative when every vector
shares a common direction, as a sentence model's do.

The codes are kept word-major (one contiguous row of 64-bit words per
word position, a column per vector): the first pass is then a few XORs and
popcounts over contiguous arrays, about three times faster than over the
row-major (n, words) array at 100k rows (1.4 -> 0.5 ms on this machine).

The table grows in place (capacity doubling), so a write does not copy it.

The products run on one BLAS thread (:func:`one_blas_thread`). OpenBLAS
splits a matrix-vector product of more than ~9k entries across every core;
the product at 10k x 384 is 0.6 ms on one thread, but the helper threads
must be woken, and on a busy machine each waits for a time slice: 20-25 ms
a product here at a load of 8 (bench/vector_search.py, docs/performance.md),
which made a 10k-fact search 30 times slower than a 1k one. One thread
computes the same dot products (each row's by the same kernel): the same
scores to the bit.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import numpy as np

EXACT_UP_TO = 20_000
CANDIDATES = 400
OVERSAMPLE = 20


@functools.cache
def _blas() -> Any:
    """The BLAS libraries numpy loaded (threadpoolctl finds them: ~15 ms, at
    the first search rather than at import); None without threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # (an environment without the local extra's full set)
        return None
    return ThreadpoolController().select(user_api="blas")


def one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """BLAS limited to one thread while the block runs, then as it was. The
    limit is the process's: a caller holds a lock around it, so that two
    searches do not restore each other's setting."""
    blas = _blas()
    return contextlib.nullcontext() if blas is None else blas.limit(limits=1)


def unit(vector: list[float] | np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


class VectorTable:
    def __init__(self) -> None:
        self.ids: list[int] = []
        self.pos: dict[int, int] = {}
        self._m: np.ndarray | None = None
        self.mixed = False  # rows of different dimensions: no search
        self._codes: np.ndarray | None = None
        self._mean: np.ndarray | None = None
        self._mean_rows = 0  # rows when the mean was taken

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dim(self) -> int | None:
        return None if self._m is None else int(self._m.shape[1])

    @property
    def matrix(self) -> np.ndarray | None:
        return None if self._m is None or self.mixed else self._m[: len(self.ids)]

    def set(self, row_id: int, vec: np.ndarray) -> None:
        """Add or replace one unit vector."""
        if self._m is None:
            self._m = np.empty((16, vec.shape[0]), dtype=np.float32)
        if vec.shape[0] != self._m.shape[1]:
            self.mixed = True
            return
        i = self.pos.get(row_id)
        if i is None:
            i = len(self.ids)
            if i == self._m.shape[0]:
                self._m = _grown(self._m)
            self.pos[row_id] = i
            self.ids.append(row_id)
        self._m[i] = vec
        if self._codes is not None:
            if i == self._codes.shape[1]:
                self._codes = _grown(self._codes, axis=1)
            self._codes[:, i] = self._code(vec[None, :])[0]

    def set_many(self, row_ids: list[int], vecs: np.ndarray) -> None:
        """Add or replace many unit vectors (the rows of ``vecs``), in order."""
        if self._m is None and len(row_ids):
            self._m = np.empty((max(16, len(row_ids)), vecs.shape[1]), dtype=np.float32)
        fresh = len(set(row_ids)) == len(row_ids) and not any(i in self.pos for i in row_ids)
        if not fresh or self._m is None or vecs.shape[1] != self._m.shape[1]:
            for row_id, vec in zip(row_ids, vecs, strict=True):
                self.set(row_id, vec)
            return
        start, n = len(self.ids), len(row_ids)
        while start + n > self._m.shape[0]:
            self._m = _grown(self._m)
        self._m[start : start + n] = vecs
        self.pos.update((row_id, start + j) for j, row_id in enumerate(row_ids))
        self.ids.extend(row_ids)
        if self._codes is not None:
            while start + n > self._codes.shape[1]:
                self._codes = _grown(self._codes, axis=1)
            self._codes[:, start : start + n] = self._code(vecs).T

    def search(self, q: np.ndarray, k: int, min_score: float) -> list[tuple[int, float]]:
        m = self.matrix
        if m is None or m.shape[1] != q.shape[0] or k <= 0:
            return []
        if len(self.ids) > EXACT_UP_TO:
            cand = self._candidates(q, max(CANDIDATES, OVERSAMPLE * k))
            scores = m[cand] @ q
            order = np.argsort(-scores, kind="stable")[:k]
            pairs = zip(cand[order].tolist(), scores[order].tolist(), strict=True)
        else:
            scores = m @ q
            if k < scores.shape[0]:  # the best k first, then only those sorted
                top = np.argpartition(-scores, k)[:k]
                order = top[np.argsort(-scores[top], kind="stable")]
            else:
                order = np.argsort(-scores, kind="stable")
            pairs = zip(order.tolist(), scores[order].tolist(), strict=True)
        return [(self.ids[i], s) for i, s in pairs if s >= min_score]

    # --- the one-bit codes --------------------------------------------------------

    def _code(self, rows: np.ndarray) -> np.ndarray:
        """The rows' codes, row-major: (rows, words)."""
        assert self._mean is not None
        bits = np.packbits(rows - self._mean > 0, axis=1)
        pad = (-bits.shape[1]) % 8  # whole 64-bit words
        if pad:
            bits = np.pad(bits, ((0, 0), (0, pad)))
        return bits.view(np.uint64)

    def _candidates(self, q: np.ndarray, c: int) -> np.ndarray:
        n = len(self.ids)
        m = self._m[:n]  # type: ignore[index]
        if self._codes is None or n >= 2 * self._mean_rows:
            # (Re)centre on the table's mean when it has doubled since.
            self._mean = m.mean(axis=0)
            self._mean_rows = n
            codes = self._code(m)
            capacity = m.shape[0] if self._m is None else self._m.shape[0]
            self._codes = np.empty((codes.shape[1], capacity), dtype=np.uint64)
            self._codes[:, :n] = codes.T
        if c >= n:
            return np.arange(n)
        qc = self._code(q[None, :])[0]
        # The Hamming distance, one word position at a time (contiguous).
        dist = np.zeros(n, dtype=np.uint16)
        for j, word in enumerate(qc):
            dist += np.bitwise_count(self._codes[j, :n] ^ word)
        # Every row within the distance at which c rows are reached (a
        # histogram, not a partition of n: a few hundred rows more at most,
        # the ties at that distance, all scored exactly).
        reached = np.bincount(dist).cumsum()
        cand = np.flatnonzero(dist <= int(np.searchsorted(reached, c)))
        if len(cand) > 4 * c:  # a pile of ties (near-identical codes): the c nearest of them
            cand = np.sort(cand[np.argpartition(dist[cand], c)[:c]])
        return cand  # in row order: ties among equal cosines break as the exact search's


def _grown(a: np.ndarray, axis: int = 0) -> np.ndarray:
    """``a`` with twice its capacity along ``axis`` (the matrix's rows, the
    word-major codes' columns), its entries copied to the front."""
    shape = list(a.shape)
    shape[axis] *= 2
    out = np.empty(shape, dtype=a.dtype)
    out[(slice(None),) * axis + (slice(a.shape[axis]),)] = a
    return out
