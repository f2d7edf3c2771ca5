"""The vector index port. Derived data only: every hit is resolved through
the graph store, and the index can be rebuilt from it (`gligabao reindex`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ..models import DatasetKey, GraphWrite
from ..models import VectorItem as VectorItem

Kind = Literal["entities", "edges", "chunks", "summaries"]
KINDS: tuple[Kind, ...] = ("entities", "edges", "chunks", "summaries")


@dataclass(frozen=True)
class SearchRequest:
    kind: Kind
    vector: list[float]
    k: int
    min_score: float  # cosine similarity, -1..1 (the vector side only)
    # When set: a hybrid search, BM25 on the stored texts (``VectorItem.text``)
    # beside the k-NN search, the two rankings fused by reciprocal rank.
    text: str | None = None
    # Edges: live facts only, where the store keeps the state in the index
    # (``dynamodb``); others return superseded ones too and the caller, which
    # reads every hit back, drops them.
    live: bool = False


@dataclass(frozen=True)
class Hit:
    id: int
    score: float  # cosine similarity; for a hybrid request, the fused RRF score


RRF_K = 60  # the usual constant of reciprocal rank fusion (Cormack et al. 2009)
# A hybrid search counts its k-NN ranking 1.5 times its BM25 ranking. A
# passage said by someone is embedded with its sentences
# (memory/passage_vectors.py), and on the real conversations of LoCoMo its
# vector ranking alone then holds more of the evidence than its words' (the 80
# best: 0.92 against 0.86 turn by turn, 0.98 against 0.96 by windows); equal
# weights let the weaker ranking push evidence out of the pool
# (docs/retrieval.md, "The vectors' weight").
VECTOR_WEIGHT = 1.5


def hybrid(vector_ids: list[int], word_ids: list[int], k: int) -> list[Hit]:
    """A hybrid request's hits: reciprocal rank fusion of its k-NN and BM25
    rankings (best first), each giving weight / (RRF_K + rank) to its IDs
    (rank from 1; the k-NN ranking's weight :data:`VECTOR_WEIGHT`, BM25's 1);
    best fused score first, ties by ID; at most k."""
    score: dict[int, float] = {}
    for weight, ranking in ((VECTOR_WEIGHT, vector_ids), (1.0, word_ids)):
        for rank, row_id in enumerate(ranking, start=1):
            score[row_id] = score.get(row_id, 0.0) + weight / (RRF_K + rank)
    order = sorted(score, key=lambda i: (-score[i], i))
    return [Hit(i, score[i]) for i in order[:k]]


@dataclass(frozen=True)
class GeoHit:
    id: int
    distance_km: float


class VectorIndex(Protocol):
    # True when the vectors are attributes of the graph's rows, written by the
    # graph store's commit (``GraphWrite.vectors``) rather than upserted first.
    inline: bool

    def upsert(self, key: DatasetKey, kind: Kind, items: list[VectorItem]) -> None:
        """Write vectors (bulk). Raises UpstreamError on failure."""

    def search(self, key: DatasetKey, requests: list[SearchRequest]) -> list[list[Hit]]:
        """Run several k-NN searches, always filtered to the dataset, in one
        round trip where the backend allows; one list of hits per request,
        best first, only hits with score >= min_score. A request with
        ``text`` is hybrid: its BM25 and k-NN rankings are fused (:func:`hybrid`)
        in the same round trip. A vector of another dimension, or an empty
        one, matches nothing: a hybrid request with ``[]`` is a search by its
        words alone."""

    def nearby(
        self, key: DatasetKey, lat: float, lon: float, radius_km: float, limit: int
    ) -> list[GeoHit]:
        """Entities with coordinates within ``radius_km`` of a point, nearest
        first."""

    def delete_dataset(self, key: DatasetKey) -> None:
        """Remove every vector of the dataset, all kinds."""

    def delete(self, key: DatasetKey, kind: Kind, ids: list[int]) -> int:
        """Remove the vectors (and stored texts) of these rows of one kind;
        how many were there. Rows without a vector are skipped."""

    def count(self, key: DatasetKey, kind: Kind) -> int:
        """How many vectors of a kind the dataset has (tests, reindex)."""

    def with_vectors(self, key: DatasetKey, kind: Kind, ids: list[int]) -> set[int]:
        """Which of these rows already have a vector of the kind, where the
        store can tell at the cost of a read (reindex embeds only the others);
        empty when it cannot (reindex then embeds them all)."""


def write_first(index: VectorIndex, key: DatasetKey, write: GraphWrite) -> None:
    """The vectors of a write, for a store that keeps them apart from the
    rows: upserted before the commit (a vector whose row never lands is never
    resolved: every hit is read back, and IDs are never reused). A store that
    keeps them on the rows (``inline``) gets them from the commit itself."""
    if index.inline:
        return
    for kind, items in write.vectors.items():
        if items:
            index.upsert(key, kind, items)  # type: ignore[arg-type]
