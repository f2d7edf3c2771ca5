"""The writes and deletes of the OpenSearch adapter: upsert (the last write
of a row wins), delete rows, delete a dataset; how each works on a managed
domain and on Serverless is in ``store.py``.
"""

from __future__ import annotations

from typing import Any

from ...models import DatasetKey
from ..port import KINDS, Kind, VectorItem
from .bodies import dataset_query, page_body, rows_body
from .indexes import Indexes, norm
from .transport import BulkAction

PAGE = 1000  # documents per page when deleting on Serverless


class Writes(Indexes):
    """The writes and deletes of ``OpenSearchVectorIndex``."""

    def upsert(self, key: DatasetKey, kind: Kind, items: list[VectorItem]) -> None:
        # Last write of a row wins, as in the embedded index. Zero vectors have
        # no direction (cosinesimil refuses them): they match nothing, so they
        # are not stored.
        latest = {item.id: item for item in items}
        items = [item for item in latest.values() if norm(item.vector) > 0]
        if not items:
            return
        index = self.index_name(kind)
        self._require_index(kind)
        actions: list[BulkAction] = []
        if self.serverless:
            for doc_id in self._existing_ids(key, kind, [item.id for item in items]):
                actions.append(({"delete": {"_index": index, "_id": doc_id}}, None))
        for item in items:
            source: dict[str, Any] = {
                "user_id": key.user_id,
                "dataset": key.dataset,
                "pk": key.pk,
                "row_id": item.id,
                "vector": self._stored(item.vector),
            }
            if kind == "entities" and item.lat is not None and item.lon is not None:
                source["location"] = {"lat": item.lat, "lon": item.lon}
            if kind == "chunks" and item.text is not None:
                source["text"] = item.text
            meta: dict[str, Any] = {"_index": index}
            if not self.serverless:
                meta["_id"] = self._doc_id(key, item.id)
            actions.append(({"index": meta}, source))
        self._bulk(f"upsert {kind}", actions)

    def _existing_ids(self, key: DatasetKey, kind: Kind, row_ids: list[int]) -> list[str]:
        """Serverless only: the auto IDs of the documents of these rows."""
        index = self.index_name(kind)
        body = rows_body(key.pk, row_ids)
        response = self._transport.call(
            f"find rows in {index}",
            lambda: self._client.search(
                index=index, body=body, params={"ignore_unavailable": "true"}
            ),
        )
        return [hit["_id"] for hit in response["hits"]["hits"]]

    def delete_dataset(self, key: DatasetKey) -> None:
        indexes = ",".join(self.index_name(kind) for kind in KINDS)
        query = dataset_query(key.pk)
        if not self.serverless:
            params = {"conflicts": "proceed", "ignore_unavailable": "true"}
            if self.refresh:
                params["refresh"] = "true"
            self._transport.call(
                "delete dataset",
                lambda: self._client.delete_by_query(index=indexes, body=query, params=params),
            )
            return
        # Serverless has no delete_by_query: page through each index in
        # row_id order and bulk-delete. A deleted document stays searchable
        # until the next refresh, so paging from the start again would meet
        # the same page and stop early: each page starts at the last row_id
        # seen (``gte``: a row may have several documents, the duplicates of
        # Serverless), and documents already deleted are skipped.
        for kind in KINDS:
            index = self.index_name(kind)
            deleted: set[str] = set()
            last = 0
            while True:
                body = page_body(key.pk, last, PAGE)
                response = self._transport.call(
                    "delete dataset: list",
                    lambda body=body, index=index: self._client.search(  # type: ignore[misc]
                        index=index, body=body, params={"ignore_unavailable": "true"}
                    ),
                )
                hits = response["hits"]["hits"]
                fresh = [h for h in hits if h["_id"] not in deleted]
                if not fresh:
                    break
                self._bulk(
                    "delete dataset",
                    [({"delete": {"_index": index, "_id": h["_id"]}}, None) for h in fresh],
                )
                deleted.update(h["_id"] for h in fresh)
                last = max(int(h["_source"]["row_id"]) for h in hits)

    def delete(self, key: DatasetKey, kind: Kind, ids: list[int]) -> int:
        wanted = sorted(set(ids))
        if not wanted:
            return 0
        index = self.index_name(kind)
        if not self.serverless:
            body = {"query": rows_body(key.pk, wanted)["query"]}
            params = {"conflicts": "proceed", "ignore_unavailable": "true"}
            if self.refresh:
                params["refresh"] = "true"
            # delete_by_query finds what the last refresh made searchable: a
            # row written just before (not refreshed yet) would survive a forget.
            self._transport.call(
                f"refresh {index}",
                lambda: self._client.indices.refresh(index=index, ignore_unavailable=True),
            )
            response = self._transport.call(
                f"delete rows of {index}",
                lambda: self._client.delete_by_query(index=index, body=body, params=params),
            )
            return int(response.get("deleted", 0))
        # Serverless: no delete_by_query; the documents' auto IDs, then bulk.
        found = self._existing_ids(key, kind, wanted)
        if found:
            self._bulk(
                f"delete rows of {index}",
                [({"delete": {"_index": index, "_id": doc}}, None) for doc in found],
            )
        return len(found)
