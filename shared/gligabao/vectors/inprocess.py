"""The embedded vector index: in-process, exact cosine search with numpy,
and BM25 (the ``bm25s`` library, English stop words and Snowball stemming) on
the stored texts for hybrid requests.

For the local server and the tests. One matrix (and one BM25 index) per
(dataset, kind), rebuilt lazily after writes; always filtered by user and
dataset because the data of each dataset lives under its own key.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import bm25s
import numpy as np
import Stemmer

from ..geo_math import haversine_km
from ..models import DatasetKey
from .port import KINDS, GeoHit, Hit, Kind, SearchRequest, VectorItem, hybrid

_STEMMER = Stemmer.Stemmer("english")


def _tokens(texts: list[str]) -> list[list[str]]:
    out = bm25s.tokenize(
        texts, stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False
    )
    return out  # type: ignore[no-any-return]


@dataclass
class _Table:
    vectors: dict[int, np.ndarray] = field(default_factory=dict)
    coords: dict[int, tuple[float, float]] = field(default_factory=dict)
    texts: dict[int, str] = field(default_factory=dict)
    _ids: np.ndarray | None = None
    _matrix: np.ndarray | None = None
    _bm25: tuple[list[int], Any] | None = None

    def lexical(self, text: str, k: int) -> list[int]:
        """IDs of the stored texts by BM25 score, best first; only texts
        sharing a term with ``text``."""
        if not self.texts:
            return []
        if self._bm25 is None:
            ids = list(self.texts)
            corpus = _tokens([self.texts[i] for i in ids])
            retriever = None
            if any(corpus):  # bm25s cannot index a corpus without a single term
                retriever = bm25s.BM25()
                retriever.index(corpus, show_progress=False)
            self._bm25 = (ids, retriever)
        ids, retriever = self._bm25
        if retriever is None:
            return []
        query = _tokens([text])
        if not query[0]:
            return []
        docs, scores = retriever.retrieve(
            query, k=min(k, len(ids)), show_progress=False, n_threads=1
        )
        return [ids[int(d)] for d, sc in zip(docs[0], scores[0], strict=True) if float(sc) > 0]

    def matrix(self) -> tuple[np.ndarray, np.ndarray]:
        if self._matrix is None or self._ids is None:
            ids = np.fromiter(self.vectors.keys(), dtype=np.int64, count=len(self.vectors))
            mat = (
                np.stack(list(self.vectors.values()))
                if self.vectors
                else np.zeros((0, 1), dtype=np.float32)
            )
            self._ids, self._matrix = ids, mat
        return self._ids, self._matrix


def _unit(vector: list[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


class MemoryVectorIndex:
    inline = False  # vectors apart from the rows: upserted before the commit

    def __init__(self) -> None:
        self._tables: dict[tuple[str, str], _Table] = {}
        self._lock = threading.Lock()
        self.requests = 0  # round trips, for the benchmarks

    def _table(self, key: DatasetKey, kind: str) -> _Table:
        return self._tables.setdefault((key.pk, kind), _Table())

    def upsert(self, key: DatasetKey, kind: Kind, items: list[VectorItem]) -> None:
        if not items:
            return
        with self._lock:
            self.requests += 1
            t = self._table(key, kind)
            for item in items:
                t.vectors[item.id] = _unit(item.vector)
                if item.lat is not None and item.lon is not None:
                    t.coords[item.id] = (item.lat, item.lon)
                if item.text is not None:
                    t.texts[item.id] = item.text
                    t._bm25 = None
            t._matrix = t._ids = None

    def search(self, key: DatasetKey, requests: list[SearchRequest]) -> list[list[Hit]]:
        with self._lock:
            self.requests += 1
            out: list[list[Hit]] = []
            for req in requests:
                t = self._tables.get((key.pk, req.kind))
                if t is None or not t.vectors:
                    out.append([])
                    continue
                hits = self._knn(t, req)
                if req.text is not None:
                    lexical = t.lexical(req.text, req.k)
                    hits = hybrid([h.id for h in hits], lexical, req.k)
                out.append(hits)
            return out

    @staticmethod
    def _knn(t: _Table, req: SearchRequest) -> list[Hit]:
        ids, mat = t.matrix()
        q = _unit(req.vector)
        if mat.shape[1] != q.shape[0]:
            return []
        scores = mat @ q
        order = np.argsort(-scores, kind="stable")[: req.k]
        return [
            Hit(int(ids[i]), float(scores[i])) for i in order if float(scores[i]) >= req.min_score
        ]

    def nearby(
        self, key: DatasetKey, lat: float, lon: float, radius_km: float, limit: int
    ) -> list[GeoHit]:
        with self._lock:
            self.requests += 1
            t = self._tables.get((key.pk, "entities"))
            if t is None:
                return []
            hits = [
                GeoHit(eid, d)
                for eid, (elat, elon) in t.coords.items()
                if (d := haversine_km(lat, lon, elat, elon)) <= radius_km
            ]
            hits.sort(key=lambda h: (h.distance_km, h.id))
            return hits[:limit]

    def delete_dataset(self, key: DatasetKey) -> None:
        with self._lock:
            self.requests += 1
            for kind in KINDS:
                self._tables.pop((key.pk, kind), None)

    def delete(self, key: DatasetKey, kind: Kind, ids: list[int]) -> int:
        with self._lock:
            self.requests += 1
            t = self._tables.get((key.pk, kind))
            if t is None:
                return 0
            gone = 0
            for row_id in set(ids):
                gone += t.vectors.pop(row_id, None) is not None
                t.coords.pop(row_id, None)
                if t.texts.pop(row_id, None) is not None:
                    t._bm25 = None
            t._matrix = t._ids = None
            return gone

    def count(self, key: DatasetKey, kind: Kind) -> int:
        with self._lock:
            t = self._tables.get((key.pk, kind))
            return len(t.vectors) if t else 0

    def with_vectors(self, key: DatasetKey, kind: Kind, ids: list[int]) -> set[int]:
        return set()  # a separate index: reindex rebuilds it whole
