"""The embedded vector index: in-process, exact cosine search with numpy.

For the local server and the tests. One matrix per (dataset, kind), rebuilt
lazily after writes; always filtered by user and dataset because the data of
each dataset lives under its own key.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from ..geo_math import haversine_km
from ..models import DatasetKey
from .port import KINDS, GeoHit, Hit, Kind, SearchRequest, VectorItem


@dataclass
class _Table:
    vectors: dict[int, np.ndarray] = field(default_factory=dict)
    coords: dict[int, tuple[float, float]] = field(default_factory=dict)
    _ids: np.ndarray | None = None
    _matrix: np.ndarray | None = None

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
                ids, mat = t.matrix()
                q = _unit(req.vector)
                if mat.shape[1] != q.shape[0]:
                    out.append([])
                    continue
                scores = mat @ q
                order = np.argsort(-scores, kind="stable")[: req.k]
                out.append(
                    [
                        Hit(int(ids[i]), float(scores[i]))
                        for i in order
                        if float(scores[i]) >= req.min_score
                    ]
                )
            return out

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

    def count(self, key: DatasetKey, kind: Kind) -> int:
        with self._lock:
            t = self._tables.get((key.pk, kind))
            return len(t.vectors) if t else 0
