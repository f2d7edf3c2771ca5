"""The Serverless ("aoss") mode of the OpenSearch adapter, on the real node:
deleting a dataset removes every one of its vectors, however many, even
though deleted documents stay searchable until the next refresh (Serverless
refreshes on its own schedule; the adapter never asks it to)."""

from __future__ import annotations

import uuid

from opensearchpy import OpenSearch

from gligabao.models import DatasetKey
from gligabao.vectors.opensearch.store import OpenSearchVectorIndex
from gligabao.vectors.port import KINDS, VectorItem

DIM = 8


def _vec(i: int) -> list[float]:
    v = [0.0] * DIM
    v[i % DIM] = 1.0
    v[(i + 1) % DIM] = 0.5
    return v


def test_aoss_delete_removes_more_than_a_thousand_vectors(opensearch_url: str) -> None:
    prefix = f"gbaossdel-{uuid.uuid4().hex[:8]}"
    # writes searchable at once for the set-up; the delete runs without any
    # refresh, as on Serverless
    loader = OpenSearchVectorIndex(
        opensearch_url,
        dimension=DIM,
        service="aoss",
        index_prefix=prefix,
        refresh=True,
        engine="lucene",  # the test node has no Faiss libraries
    )
    adapter = OpenSearchVectorIndex(
        opensearch_url,
        dimension=DIM,
        service="aoss",
        index_prefix=prefix,
        refresh=False,
        engine="lucene",
    )
    raw = OpenSearch(opensearch_url)
    loader.bootstrap()
    try:
        doomed = DatasetKey("aoss-user", "doomed")
        kept = DatasetKey("aoss-user", "kept")
        n = 2600
        for start in range(1, n + 1, 200):
            items = [VectorItem(i, _vec(i)) for i in range(start, min(start + 200, n + 1))]
            loader.upsert(doomed, "entities", items)
        loader.upsert(doomed, "edges", [VectorItem(i, _vec(i)) for i in range(1, 1201)])
        loader.upsert(kept, "entities", [VectorItem(i, _vec(i)) for i in range(1, 4)])
        assert loader.count(doomed, "entities") == n

        adapter.delete_dataset(doomed)

        raw.indices.refresh(index=",".join(adapter.index_name(k) for k in KINDS))
        assert [adapter.count(doomed, k) for k in KINDS] == [0] * len(KINDS)
        assert adapter.count(kept, "entities") == 3
    finally:
        loader.drop_indexes()
