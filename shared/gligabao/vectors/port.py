"""The vector index port. Derived data only: every hit is resolved through
the graph store, and the index can be rebuilt from it (`gligabao reindex`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ..models import DatasetKey

Kind = Literal["entities", "edges", "chunks", "summaries"]
KINDS: tuple[Kind, ...] = ("entities", "edges", "chunks", "summaries")


@dataclass(frozen=True)
class VectorItem:
    id: int  # the graph row ID (entity, edge, or the chunk's artifact ID)
    vector: list[float]
    lat: float | None = None  # entities with coordinates only
    lon: float | None = None


@dataclass(frozen=True)
class SearchRequest:
    kind: Kind
    vector: list[float]
    k: int
    min_score: float  # cosine similarity, -1..1


@dataclass(frozen=True)
class Hit:
    id: int
    score: float  # cosine similarity


@dataclass(frozen=True)
class GeoHit:
    id: int
    distance_km: float


class VectorIndex(Protocol):
    def upsert(self, key: DatasetKey, kind: Kind, items: list[VectorItem]) -> None:
        """Write vectors (bulk). Raises UpstreamError on failure."""

    def search(self, key: DatasetKey, requests: list[SearchRequest]) -> list[list[Hit]]:
        """Run several k-NN searches, always filtered to the dataset, in one
        round trip where the backend allows; one list of hits per request,
        best first, only hits with score >= min_score."""

    def nearby(
        self, key: DatasetKey, lat: float, lon: float, radius_km: float, limit: int
    ) -> list[GeoHit]:
        """Entities with coordinates within ``radius_km`` of a point, nearest
        first."""

    def delete_dataset(self, key: DatasetKey) -> None:
        """Remove every vector of the dataset, all kinds."""

    def count(self, key: DatasetKey, kind: Kind) -> int:
        """How many vectors of a kind the dataset has (tests, reindex)."""
