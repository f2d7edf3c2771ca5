"""The OpenSearch vector index: k-NN on a managed domain ("es") or a Serverless
vector collection ("aoss").

The indexes (layout, vector field, engines) and every JSON body sent are in
``bodies.py``; the client and its retries in
``transport.py``.

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

import json
import math
import time
from collections.abc import Callable, Iterable
from typing import Any

from ...config import Settings
from ...errors import UpstreamError, VectorIndexMissing
from ...models import DatasetKey
from ..port import KINDS, GeoHit, Hit, Kind, SearchRequest, VectorItem, fuse
from .bodies import (
    ENGINES,
    MAX_K,
    TEXT_PROPERTY,
    cosine_of,
    dataset_query,
    default_engine,
    index_bodies,
    knn_body,
    match_body,
    nearby_body,
    page_body,
    rows_body,
)
from .transport import BulkAction, Transport, error_text, make_client

PAGE = 1000  # documents per page when deleting on Serverless


def _missing(name: str) -> str:
    return (
        f"vector index {name} does not exist: the deploy creates it (custom resource), "
        "or run `gligabao bootstrap`"
    )


def _norm(vector: list[float]) -> float:
    return math.sqrt(math.fsum(x * x for x in vector))


def _unit(vector: list[float]) -> list[float]:
    n = _norm(vector)
    return [float(x) / n for x in vector]


class OpenSearchVectorIndex:
    inline = False  # vectors apart from the rows: upserted before the commit

    def __init__(
        self,
        url: str,
        *,
        dimension: int,
        service: str = "es",
        region: str = "us-east-1",
        index_prefix: str = "gb",
        engine: str | None = None,
        aws_auth: bool | None = None,
        refresh: bool = False,
        timeout_s: float = 10.0,
        max_retries: int = 4,
        backoff_s: float = 0.2,
        client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if service not in ("es", "aoss"):
            raise ValueError(f"opensearch service must be 'es' or 'aoss', not {service!r}")
        if dimension <= 0:
            raise ValueError("dimension must be positive")
        self.url = url
        self.dimension = dimension
        self.service = service
        self.serverless = service == "aoss"
        self.index_prefix = index_prefix
        self.engine = engine or default_engine(service)
        if self.engine not in ENGINES:
            raise ValueError(f"vector engine must be one of {ENGINES}, not {self.engine!r}")
        self._ready: set[Kind] = set()  # kinds whose index is known to exist
        self.refresh = refresh
        self._client = (
            client
            if client is not None
            else make_client(
                url, service=service, region=region, aws_auth=aws_auth, timeout_s=timeout_s
            )
        )
        self._transport = Transport(
            self._client, max_retries=max_retries, backoff_s=backoff_s, sleep=sleep
        )

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

    # -- names ----------------------------------------------------------------

    def index_name(self, kind: Kind) -> str:
        return f"{self.index_prefix}-{kind}"

    def _stored(self, vector: list[float]) -> list[float]:
        """What is written and searched: unit vectors for innerproduct."""
        return _unit(vector) if self.engine == "faiss" else [float(x) for x in vector]

    def _doc_id(self, key: DatasetKey, row_id: int) -> str:
        return f"{key.pk}:{row_id}"

    @property
    def requests(self) -> int:
        """HTTP round trips, retries included (benchmarks)."""
        return self._transport.requests

    def _bulk(self, op: str, actions: list[BulkAction]) -> None:
        self._transport.bulk(op, actions, refresh=self.refresh)

    # -- the port -----------------------------------------------------------------

    def index_bodies(self) -> dict[str, dict[str, Any]]:
        """Index name -> the exact body bootstrap creates it with."""
        return index_bodies(self.index_prefix, self.dimension, self.engine)

    def bootstrap(self) -> list[str]:
        """Create the four indexes if they do not exist (idempotent); returns
        the names it created."""
        from opensearchpy.exceptions import RequestError

        created: list[str] = []
        bodies = self.index_bodies()
        for kind in KINDS:
            name = self.index_name(kind)
            body = bodies[name]

            def create(name: str = name, body: dict[str, Any] = body) -> None:
                try:
                    self._client.indices.create(index=name, body=body)
                    created.append(name)
                except RequestError as e:
                    if e.error != "resource_already_exists_exception":
                        raise

            self._transport.call(f"create index {name}", create)
            self._ready.add(kind)
        # An index created before passages had their text: add the field
        # (an additive mapping change; documents written since carry it).
        chunks = self.index_name("chunks")
        self._transport.call(
            f"map text in {chunks}",
            lambda: self._client.indices.put_mapping(
                index=chunks, body={"properties": TEXT_PROPERTY}
            ),
        )
        return created

    def _require_index(self, kind: Kind) -> None:
        """Refuse to write into a missing index: a bulk write would create it
        with a dynamic mapping (a float array, not a k-NN vector)."""
        if kind in self._ready:
            return
        name = self.index_name(kind)
        if not self._transport.call(
            f"check index {name}", lambda: self._client.indices.exists(index=name)
        ):
            raise VectorIndexMissing(_missing(name))
        self._ready.add(kind)

    def upsert(self, key: DatasetKey, kind: Kind, items: list[VectorItem]) -> None:
        # Last write of a row wins, as in the embedded index. Zero vectors have
        # no direction (cosinesimil refuses them): they match nothing, so they
        # are not stored.
        latest = {item.id: item for item in items}
        items = [item for item in latest.values() if _norm(item.vector) > 0]
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

    def search(self, key: DatasetKey, requests: list[SearchRequest]) -> list[list[Hit]]:
        # One _msearch for everything: a knn body per request, and for a
        # hybrid request a match body on the text right after it.
        out: list[list[Hit]] = [[] for _ in requests]
        sent: list[tuple[int, str]] = []  # (request, "knn" | "match"), in body order
        lines: list[str] = []
        for i, req in enumerate(requests):
            k = min(req.k, MAX_K)
            if k <= 0:
                continue
            fetch = min(2 * k, MAX_K) if self.serverless else k
            index = json.dumps({"index": self.index_name(req.kind)})
            # Like the embedded index: a vector of another dimension, or with
            # no direction, matches nothing.
            if len(req.vector) == self.dimension and _norm(req.vector) > 0:
                body = knn_body(key.pk, self._stored(req.vector), fetch)
                lines += [index, json.dumps(body)]
                sent.append((i, "knn"))
            if req.text is not None and req.text.strip():
                lines += [index, json.dumps(match_body(key.pk, req.text, fetch))]
                sent.append((i, "match"))
        if not sent:
            return out
        payload = "\n".join(lines) + "\n"
        response = self._transport.call("search", lambda: self._client.msearch(body=payload))
        knn_hits: dict[int, list[Hit]] = {}
        match_ids: dict[int, list[int]] = {}
        for (i, part), result in zip(sent, response["responses"], strict=True):
            if "error" in result:
                error = result["error"]
                if isinstance(error, dict) and error.get("type") == "index_not_found_exception":
                    raise VectorIndexMissing(_missing(self.index_name(requests[i].kind)))
                raise UpstreamError(
                    "opensearch search: a rejected request", detail=error_text(error)
                )
            req = requests[i]
            if part == "match":
                ids = [int(hit["_source"]["row_id"]) for hit in result["hits"]["hits"]]
                match_ids[i] = list(dict.fromkeys(ids))[: req.k]  # Serverless duplicates
                continue
            best: dict[int, float] = {}
            for hit in result["hits"]["hits"]:
                row_id = int(hit["_source"]["row_id"])
                cosine = cosine_of(float(hit["_score"]), self.engine)
                if cosine >= req.min_score and cosine > best.get(row_id, -math.inf):
                    best[row_id] = cosine
            ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
            knn_hits[i] = [Hit(row_id, score) for row_id, score in ranked[: req.k]]
        for i, req in enumerate(requests):
            hits = knn_hits.get(i, [])
            if req.text is not None:
                hits = fuse([[h.id for h in hits], match_ids.get(i, [])], req.k)
            out[i] = hits
        return out

    def nearby(
        self, key: DatasetKey, lat: float, lon: float, radius_km: float, limit: int
    ) -> list[GeoHit]:
        if limit <= 0:
            return []
        index = self.index_name("entities")
        body = nearby_body(key.pk, lat, lon, radius_km, limit)
        response = self._transport.call(
            "nearby",
            lambda: self._client.search(
                index=index, body=body, params={"ignore_unavailable": "true"}
            ),
        )
        hits: list[GeoHit] = []
        seen: set[int] = set()
        for hit in response["hits"]["hits"]:
            row_id = int(hit["_source"]["row_id"])
            if row_id not in seen:  # Serverless duplicates: the first is the nearest
                seen.add(row_id)
                hits.append(GeoHit(row_id, float(hit["sort"][0])))
        return hits

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

    def count(self, key: DatasetKey, kind: Kind) -> int:
        index = self.index_name(kind)
        body = dataset_query(key.pk)
        response = self._transport.call(
            "count",
            lambda: self._client.count(
                index=index, body=body, params={"ignore_unavailable": "true"}
            ),
        )
        return int(response["count"])

    # -- helpers for the tests ------------------------------------------------------

    def drop_indexes(self, kinds: Iterable[Kind] = KINDS) -> None:
        """Delete the indexes (test teardown)."""
        names = ",".join(self.index_name(kind) for kind in kinds)
        self._transport.call(
            "drop indexes",
            lambda: self._client.indices.delete(index=names, params={"ignore_unavailable": "true"}),
        )

    def with_vectors(self, key: DatasetKey, kind: Kind, ids: list[int]) -> set[int]:
        return set()  # a separate index: reindex rebuilds it whole
