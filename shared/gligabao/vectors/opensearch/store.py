"""The OpenSearch vector index: k-NN on a managed domain ("es") or a Serverless
vector collection ("aoss").

The indexes (layout, vector field, engines) and every JSON body sent are in
``bodies.py``; the client and its retries in ``transport.py``; the node, the
index names and bootstrap in ``indexes.py``; the searches in ``search.py``; the
writes and deletes in ``writes.py``. This module puts them together.

Indexes are created by the deploy (a CloudFormation custom resource) or by
``gligabao bootstrap``, never implicitly: before its first write of a kind,
the writer checks that the index exists, once per process, and refuses
(VectorIndexMissing, 503) rather than letting a bulk request create an index
with a plain float field instead of a k-NN vector.

IDs: on a managed domain the document ID is ``f"{pk}:{row_id}"``, so writing a
row again overwrites it. Serverless vector collections refuse custom IDs, so
there documents get auto IDs and a row written twice has two documents:
:meth:`upsert` first looks the row's existing documents up and deletes them in
the same bulk request (one extra round trip), and :meth:`search` dedupes by
``row_id`` keeping the best score and over-fetches 2k to make up for
duplicates that a race or the collection's refresh delay left behind.

Deleting a dataset: ``_delete_by_query`` on a managed domain; Serverless has
no delete-by-query, so there the adapter pages through the dataset's document
IDs and bulk-deletes them.

Freshness: with ``refresh=True`` writes are searchable when the call returns
(the bulk request asks for a refresh: for the tests). Serverless refreshes on
its own schedule (about a second); leave ``refresh`` off there.

Round trips (``self.requests`` counts every HTTP request, retries included):
upsert 1 (aoss: 2; plus 1 the first time a process writes a kind), search 1
for any number of requests (a hybrid request, ``text`` set, adds a ``match``
body to the same ``_msearch``), nearby 1, count 1, delete_dataset 1 (aoss: 2
per page of 1000 documents, plus 1 per index), bootstrap 5.
Failures raise UpstreamError; 429 and 5xx (whole request or bulk items) and
connection errors are retried with exponential backoff first.
"""

from __future__ import annotations

from ...config import Settings
from ...models import DatasetKey
from ..port import Kind
from .search import Searches
from .writes import Writes


class OpenSearchVectorIndex(Searches, Writes):
    inline = False  # vectors apart from the rows: upserted before the commit

    @classmethod
    def from_settings(
        cls, settings: Settings, *, dimension: int, refresh: bool = False
    ) -> OpenSearchVectorIndex:
        return cls(
            settings.opensearch_url,
            dimension=dimension,
            service=settings.opensearch_service,
            region=settings.region,
            index_prefix=settings.opensearch_index_prefix,
            refresh=refresh,
        )

    def with_vectors(self, key: DatasetKey, kind: Kind, ids: list[int]) -> set[int]:
        return set()  # a separate index: reindex rebuilds it whole
