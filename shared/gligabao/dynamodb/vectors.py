"""Where each kind of vector lives in the DynamoDB tables, and the vector
indexes that search it: one index per kind, the dataset's partition key
(``pk``) as HASH, so that a search never leaves the caller's dataset.

Edges carry ``vstate`` ("live" / "gone") as an INLINE_FILTER, so that a
search for similar facts finds live ones only; every vector row carries
``vt``, the time its vector was written (the read path covers the index's
replication lag with the newest rows: ``index.py``).

The declarations here are the single source: the tables' creation
(``dynamodb`` admin), template.yaml's test and the adapter read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

VECTOR_ATTR = "vec"
SUMMARY_ATTR = "svec"  # a chunk's summary, on the chunk's own row
STATE_ATTR = "vstate"  # edges: LIVE or GONE
LIVE, GONE = "live", "gone"
WRITTEN_AT = "vt"  # epoch seconds at which the row's vectors were written
DISTANCE = "COSINE"
TOPK_MAX = 100  # SearchVectors' TopK range is 1 to 100 (developer guide)


@dataclass(frozen=True)
class KindSpec:
    kind: str  # the port's kind, also the index's name
    table: str  # the short name of the table (``tables.py``)
    attribute: str
    filters: tuple[str, ...] = ()


KINDS: dict[str, KindSpec] = {
    "entities": KindSpec("entities", "entities", VECTOR_ATTR),
    "edges": KindSpec("edges", "edges", VECTOR_ATTR, (STATE_ATTR,)),
    "chunks": KindSpec("chunks", "artifacts", VECTOR_ATTR),
    "summaries": KindSpec("summaries", "artifacts", SUMMARY_ATTR),
}


def index_specs(dimension: Any) -> dict[str, list[dict[str, Any]]]:
    """Per table short name, its ``VectorIndexes`` (the API's and
    CloudFormation's shape; ``dimension`` may be a template expression)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for spec in KINDS.values():
        schema = [{"AttributeName": "pk", "SearchSchemaElementType": "HASH"}]
        schema += [
            {"AttributeName": f, "SearchSchemaElementType": "INLINE_FILTER"} for f in spec.filters
        ]
        out.setdefault(spec.table, []).append(
            {
                "IndexName": spec.kind,
                "VectorAttribute": {"AttributeName": spec.attribute},
                "Dimensions": dimension,
                "DistanceFunction": DISTANCE,
                "SearchSchema": schema,
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        )
    return out


def filter_definitions() -> dict[str, list[dict[str, str]]]:
    """Per table short name, the attribute definitions the search schemas
    add (the INLINE_FILTER attributes; ``pk`` is the table's key already)."""
    out: dict[str, list[dict[str, str]]] = {}
    for spec in KINDS.values():
        for f in spec.filters:
            out.setdefault(spec.table, []).append({"AttributeName": f, "AttributeType": "S"})
    return out


def require_search_vectors(client: Any) -> None:
    """Fail at cold start, with the reason, when the SDK predates DynamoDB's
    vector indexes (the Lambda runtime's bundled boto3 can be older than the
    API): the layer must ship a botocore that has ``SearchVectors``."""
    if not hasattr(client, "search_vectors"):
        import botocore

        raise RuntimeError(
            f"VectorStore=dynamodb needs DynamoDB's SearchVectors, which botocore "
            f"{botocore.__version__} lacks: ship botocore >= 1.44 (the layer pins it)"
        )
