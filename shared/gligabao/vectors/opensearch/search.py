"""The searches of the OpenSearch adapter: k-NN (and the lexical half of a
hybrid search) for many requests in one ``_msearch``, the entities near a
point, and a dataset's count of one kind. Serverless duplicates (``store.py``)
are deduped by ``row_id``.
"""

from __future__ import annotations

import json
import math

from ...errors import UpstreamError, VectorIndexMissing
from ...models import DatasetKey
from ..port import GeoHit, Hit, Kind, SearchRequest, hybrid
from .bodies import MAX_K, cosine_of, dataset_query, knn_body, match_body, nearby_body
from .indexes import Indexes, missing, norm
from .transport import error_text


class Searches(Indexes):
    """The reads of ``OpenSearchVectorIndex``."""

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
            if len(req.vector) == self.dimension and norm(req.vector) > 0:
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
                    raise VectorIndexMissing(missing(self.index_name(requests[i].kind)))
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
                hits = hybrid([h.id for h in hits], match_ids.get(i, []), req.k)
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
