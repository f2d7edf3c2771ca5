"""The OpenSearch index bodies of the vector kinds, per engine, and how an
engine's k-NN score maps back to a cosine. No I/O: bootstrap, the deploy's
custom resource and `gligabao bootstrap --dry-run` all print or send these."""

from __future__ import annotations

from typing import Any

from .port import KINDS, Kind

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
