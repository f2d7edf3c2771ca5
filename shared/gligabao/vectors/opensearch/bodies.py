"""The JSON bodies the OpenSearch adapter (``store.py``) sends, and how
an engine's k-NN score maps back to a cosine. No I/O: bootstrap, the deploy's
custom resource and `gligabao bootstrap --dry-run` all print or send the index
bodies; every query body is filtered to one dataset (:func:`tenant`).

Layout: four multi-tenant indexes, ``{prefix}-entities``, ``-edges``,
``-chunks`` and ``-summaries`` (not one index per dataset: a domain has a shard
budget, a Serverless collection an index budget). Each document carries
``user_id``, ``dataset``, ``pk`` (DatasetKey.pk, the tenant filter), ``row_id``
(the graph row) and ``vector``; entities also ``location`` (geo_point), chunks
``text`` (the passage, for BM25).

Vector field: ``knn_vector`` with HNSW (m=16, ef_construction=128); the
engine is chosen by the target (:func:`default_engine`), and
``gligabao bootstrap --dry-run`` prints the exact bodies:

- ``faiss`` on Serverless (``aoss``): vector collections are documented to
  take Faiss HNSW mappings. Space ``innerproduct`` on vectors normalized to
  unit length before they are written and searched, which is the cosine, on
  every Faiss version. Faiss HNSW also applies the tenant filter inside the
  graph traversal (efficient filtering, 2.9 and later).
- ``lucene`` on a node without Faiss (``es``: the test node built from Maven
  Central has no native libraries, and every managed domain has Lucene):
  space ``cosinesimil``, the filter applied inside the HNSW traversal too.

Either way the k-NN clause carries the tenant filter, so a search returns
exactly k hits of the dataset, never fewer because other tenants took the top
k (:func:`knn_body`); :func:`cosine_of` turns the engine's score back into
the cosine.
"""

from __future__ import annotations

from typing import Any

from ..port import KINDS, Kind

HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128
ENGINES = ("lucene", "faiss")
# The space of each engine: cosine itself, or the inner product of unit vectors.
SPACES = {"lucene": "cosinesimil", "faiss": "innerproduct"}
# The passage text of the chunks index, for the lexical half of hybrid search
# (BM25, standard analyzer: the language analyzers live in a module that a
# bare node, like the test node, does not load).
TEXT_PROPERTY: dict[str, Any] = {"text": {"type": "text"}}


def default_engine(service: str) -> str:
    """Faiss on Serverless (what its vector collections take), Lucene elsewhere
    (no native library needed, so it runs on any node with the k-NN plugin)."""
    return "faiss" if service == "aoss" else "lucene"


def mapping(kind: Kind, dimension: int, engine: str = "lucene") -> dict[str, Any]:
    """The index body (settings and mappings) of one kind."""
    if engine not in ENGINES:
        raise ValueError(f"vector engine must be one of {ENGINES}, not {engine!r}")
    properties: dict[str, Any] = {
        "user_id": {"type": "keyword"},
        "dataset": {"type": "keyword"},
        "pk": {"type": "keyword"},
        "row_id": {"type": "long"},
        "vector": {
            "type": "knn_vector",
            "dimension": dimension,
            "method": {
                "name": "hnsw",
                "engine": engine,
                "space_type": SPACES[engine],
                "parameters": {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
            },
        },
    }
    if kind == "entities":
        properties["location"] = {"type": "geo_point"}
    if kind == "chunks":
        properties.update(TEXT_PROPERTY)
    return {
        "settings": {"index": {"knn": True}},
        "mappings": {"dynamic": "strict", "properties": properties},
    }


def index_bodies(prefix: str, dimension: int, engine: str) -> dict[str, dict[str, Any]]:
    """Index name -> body, for every kind (what bootstrap and the deploy create)."""
    return {f"{prefix}-{kind}": mapping(kind, dimension, engine) for kind in KINDS}


def cosine_of(score: float, engine: str) -> float:
    """The cosine behind an OpenSearch k-NN score. cosinesimil scores
    (1 + cos) / 2; innerproduct (of unit vectors, so ip = cos) scores ip + 1
    when ip >= 0 and 1 / (1 - ip) below."""
    if engine == "lucene":
        return 2.0 * score - 1.0
    return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score


MAX_K = 10_000  # OpenSearch's max k and index.max_result_window


def tenant(pk: str) -> dict[str, Any]:
    """The filter clause that keeps a query inside one dataset."""
    return {"term": {"pk": pk}}


def dataset_query(pk: str) -> dict[str, Any]:
    """Every document of the dataset (count, delete by query)."""
    return {"query": tenant(pk)}


def knn_body(pk: str, vector: list[float], k: int) -> dict[str, Any]:
    """k-NN with the tenant filter inside the clause: applied during the HNSW
    traversal, so k hits of the dataset come back, never fewer."""
    knn = {"vector": vector, "k": k, "filter": {"bool": {"filter": [tenant(pk)]}}}
    return {"size": k, "_source": ["row_id"], "query": {"knn": {"vector": knn}}}


def match_body(pk: str, text: str, size: int) -> dict[str, Any]:
    """BM25 on the passages' text: the lexical half of a hybrid search."""
    match = {"bool": {"filter": [tenant(pk)], "must": [{"match": {"text": text}}]}}
    return {"size": size, "_source": ["row_id"], "query": match}


def rows_body(pk: str, row_ids: list[int]) -> dict[str, Any]:
    """The documents of these rows, IDs only (Serverless: a row's auto IDs)."""
    return {
        "size": min(MAX_K, 4 * len(row_ids)),
        "_source": False,
        "query": {"bool": {"filter": [tenant(pk), {"terms": {"row_id": row_ids}}]}},
    }


def nearby_body(pk: str, lat: float, lon: float, radius_km: float, size: int) -> dict[str, Any]:
    """Entities within ``radius_km`` of a point, nearest first (ties by row)."""
    point = {"lat": lat, "lon": lon}
    return {
        "size": min(size, MAX_K),
        "_source": ["row_id"],
        "query": {
            "bool": {
                "filter": [
                    tenant(pk),
                    {"geo_distance": {"distance": f"{radius_km}km", "location": point}},
                ]
            }
        },
        "sort": [
            {
                "_geo_distance": {
                    "location": point,
                    "order": "asc",
                    "unit": "km",
                    "distance_type": "arc",
                }
            },
            {"row_id": "asc"},
        ],
    }


def page_body(pk: str, first_row: int, size: int) -> dict[str, Any]:
    """One page of the dataset's documents in row order, from ``first_row``
    on (inclusive: a row may have several documents on Serverless)."""
    return {
        "size": size,
        "_source": ["row_id"],
        "sort": [{"row_id": "asc"}],
        "query": {"bool": {"filter": [tenant(pk), {"range": {"row_id": {"gte": first_row}}}]}},
    }
