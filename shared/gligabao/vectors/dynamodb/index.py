"""VectorIndex on DynamoDB's own vector indexes (``VectorStore=dynamodb``).

The vectors are attributes of the graph's rows (``dynamodb/vectors.py``), written by
the graph store in the same commit as the rows (``inline``: the use cases
hand them to the commit instead of upserting them first). A search is one
wave of parallel requests, whatever it asks:

* per request, a ``SearchVectors`` on the kind's index, the dataset's
  partition as HASH (and ``vstate = live`` for live facts);
* per request, a strongly consistent Query of the partition's newest rows
  of that table (``RECENT_ROWS``, newest ID first), whose vectors written in
  the last ``lag_s`` seconds are scored here: the index is replicated from
  the table asynchronously, so a row committed a moment ago may not be in
  it yet, and a row updated a moment ago (a fact superseded) may be there in
  its old state. A recent row's own state wins over the index's;
* for a hybrid request, the passages' word index (``words.py``): a Query per
  question term and one BatchGetItem of the counts.

``requests`` counts waves (one per call), ``calls`` the DynamoDB requests by
operation; ``search_bytes`` adds up the ``VectorSearchRequestBytes`` the
service reported.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from ...dynamodb.batch import error_code, upstream
from ...dynamodb.vectors import (
    GONE,
    KINDS,
    LIVE,
    STATE_ATTR,
    TOPK_MAX,
    WRITTEN_AT,
    KindSpec,
    require_search_vectors,
)
from ...geo_math import haversine_km
from ...models import DatasetKey
from ..port import GeoHit, Hit, Kind, SearchRequest, VectorItem, hybrid
from . import words
from .codec import cosine, decode, encode, merge_recent

R = TypeVar("R")
log = logging.getLogger(__name__)

RECENT_ROWS = 10  # newest rows read per request to cover the index's lag
LAG_S = 10.0  # how long a written vector may take to reach the index (assumed)
WORKERS = 32


class DynamoVectorIndex:
    """``client``: a botocore DynamoDB client; ``tables``: short name ->
    table name; ``dimension``: the vectors' length (a search with another
    finds nothing, as the other adapters answer)."""

    inline = True  # the graph store writes the vectors with their rows

    def __init__(
        self,
        client: Any,
        tables: dict[str, str],
        dimension: int,
        lag_s: float = LAG_S,
        max_workers: int = WORKERS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        require_search_vectors(client)
        self.client = client
        self.tables = tables
        self.dimension = dimension
        self.lag_s = lag_s
        self.clock = clock
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="gb-vectors")
        self._lock = threading.Lock()
        self.requests = 0
        self.calls: Counter[str] = Counter()
        self.search_bytes = 0.0

    def _call(self, op: str, **kw: Any) -> Any:
        with self._lock:
            self.calls[op] += 1
        return getattr(self.client, _snake(op))(**kw)

    def _map(self, fn: Callable[[Any], R], items: Sequence[Any]) -> list[R]:
        if len(items) <= 1:
            return [fn(i) for i in items]
        return list(self._pool.map(fn, items))

    def _table(self, spec: KindSpec) -> str:
        return self.tables[spec.table]

    # --- search -----------------------------------------------------------------------

    @upstream("vector index search")
    def search(self, key: DatasetKey, requests: list[SearchRequest]) -> list[list[Hit]]:
        if not requests:
            return []
        with self._lock:
            self.requests += 1
        jobs: list[Callable[[], Any]] = []
        for req in requests:
            if len(req.vector) == self.dimension:
                jobs += [partial(self._knn, key, req), partial(self._recent, key, req)]
            else:  # another dimension finds nothing (the words still may)
                jobs += [list, dict]
        for req in requests:
            if req.text:
                jobs.append(partial(self._lexical, key, req.text, req.k))
        done = self._map(lambda job: job(), jobs)
        out: list[list[Hit]] = []
        texts = iter(done[2 * len(requests) :])
        for i, req in enumerate(requests):
            hits = merge_recent(done[2 * i], done[2 * i + 1], req)
            if req.text:
                hits = hybrid([h.id for h in hits], next(texts), req.k)
            out.append(hits)
        return out

    def _condition(self, key: DatasetKey, req: SearchRequest) -> tuple[str, dict[str, str], Any]:
        expr, names = "#k = :k", {"#k": "pk"}
        values: dict[str, Any] = {":k": {"S": key.pk}}
        if KINDS[req.kind].filters and req.live:
            expr += " AND #s = :s"
            names["#s"] = STATE_ATTR
            values[":s"] = {"S": LIVE}
        return expr, names, values

    def _knn(self, key: DatasetKey, req: SearchRequest) -> list[Hit]:
        spec = KINDS[req.kind]
        expr, names, values = self._condition(key, req)
        try:
            out = self._search_vectors(spec, req, expr, names, values)
        except ClientError as exc:
            # An index added to a table with items refuses searches while it
            # backfills (a move from OpenSearch): the newest rows and the
            # words still answer.
            if error_code(exc) == "ValidationException" and "ackfill" in str(exc):
                log.warning("vector index %s is backfilling: searched without it", spec.kind)
                return []
            raise
        used = (out.get("ConsumedCapacity") or {}).get("VectorSearchRequestBytes") or 0.0
        with self._lock:
            self.search_bytes += float(used)
        hits = []
        for r in out.get("SearchResults", []):
            similarity = 1.0 - float(r["Score"])  # COSINE: 0 identical .. 2 opposite
            hits.append(Hit(int(r["Item"]["id"]["N"]), similarity))
        return hits

    def _search_vectors(
        self, spec: KindSpec, req: SearchRequest, expr: str, names: Any, values: Any
    ) -> Any:
        return self._call(
            "SearchVectors",
            TableName=self._table(spec),
            IndexName=spec.kind,
            SearchVector=encode(req.vector)["L"],
            TopK=max(1, min(req.k, TOPK_MAX)),
            SearchConditionExpression=expr,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
            ProjectionExpression="id",
            ReturnConsumedCapacity="TOTAL",
        )

    def _recent(self, key: DatasetKey, req: SearchRequest) -> dict[int, float | None]:
        """The partition's newest rows of the kind's table whose vectors were
        written within the lag: id -> cosine, or None when the row does not
        qualify (no vector of this kind any more, or a superseded fact)."""
        spec = KINDS[req.kind]
        names = {"#k": "pk", "#v": spec.attribute, "#t": WRITTEN_AT, "#s": STATE_ATTR}
        out = self._call(
            "Query",
            TableName=self._table(spec),
            KeyConditionExpression="#k = :k",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={":k": {"S": key.pk}},
            ProjectionExpression="id, #v, #t, #s",
            ScanIndexForward=False,
            Limit=RECENT_ROWS,
            ConsistentRead=True,
        )
        since = self.clock() - self.lag_s
        found: dict[int, float | None] = {}
        for item in out.get("Items", []):
            written = item.get(WRITTEN_AT)
            if written is None or float(written["N"]) < since:
                continue
            vec = decode(item.get(spec.attribute))
            gone = req.live and (item.get(STATE_ATTR) or {}).get("S") == GONE
            row_id = int(item["id"]["N"])
            if vec is None or len(vec) != self.dimension or gone:
                found[row_id] = None
            else:
                found[row_id] = cosine(req.vector, vec)
        return found

    def _lexical(self, key: DatasetKey, text: str, k: int) -> list[int]:
        return words.search(self._call, self._map, self.tables["terms"], key.pk, text, k)

    # --- writes (reindex, geo), counts, deletion ----------------------------------------

    @upstream("vector index upsert")
    def upsert(self, key: DatasetKey, kind: Kind, items: list[VectorItem]) -> None:
        """Write vectors onto their rows (which must exist: a vector is an
        attribute of its row here). A row that is not there is skipped."""
        if not items:
            return
        spec = KINDS[kind]
        with self._lock:
            self.requests += 1
        now = self.clock()

        def one(item: VectorItem) -> bool:
            sets = ["#v = :v", "#t = :t"]
            names = {"#v": spec.attribute, "#t": WRITTEN_AT, "#k": "pk"}
            values: dict[str, Any] = {":v": encode(item.vector), ":t": {"N": f"{now:.3f}"}}
            if spec.filters:
                sets.append("#s = :s")
                names["#s"] = STATE_ATTR
                values[":s"] = {"S": GONE if item.live is False else LIVE}
            if item.lat is not None and item.lon is not None and kind == "entities":
                sets += ["lat = :la", "lon = :lo"]
                values[":la"] = {"N": repr(item.lat)}
                values[":lo"] = {"N": repr(item.lon)}
            try:
                self._call(
                    "UpdateItem",
                    TableName=self._table(spec),
                    Key={"pk": {"S": key.pk}, "id": {"N": str(item.id)}},
                    UpdateExpression="SET " + ", ".join(sets),
                    ConditionExpression="attribute_exists(#k)",
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                )
            except ClientError as exc:
                if error_code(exc) != "ConditionalCheckFailedException":
                    raise
                return False  # no such row: nothing to put a vector on
            return True

        written = self._map(one, items)
        passages = [
            i for i, ok in zip(items, written, strict=True) if ok and kind == "chunks" and i.text
        ]
        if passages:
            # A passage written before this store (reindex after a move from
            # OpenSearch) gets its words too; counted once (words.count_words).
            from ...dynamodb.batch import batch_write
            from ...dynamodb.tables import ArtifactRow

            batch_write(
                puts=[r for i in passages for r in words.posting_rows(key.pk, i.id, i.text or "")]
            )
            rows = ArtifactRow.batch_get([(key.pk, i.id) for i in passages], consistent_read=True)
            words.count_words(key.pk, {int(r.id): r for r in rows})

    def _rows(
        self,
        spec: KindSpec,
        key: DatasetKey,
        projection: str,
        names: dict[str, str],
        filter_: str | None = None,
    ) -> list[dict[str, Any]]:
        req: dict[str, Any] = {
            "TableName": self._table(spec),
            "KeyConditionExpression": "#k = :k",
            "ExpressionAttributeNames": {"#k": "pk", **names},
            "ExpressionAttributeValues": {":k": {"S": key.pk}},
            "ProjectionExpression": projection,
            "ConsistentRead": True,
        }
        if filter_:
            req["FilterExpression"] = filter_
        items: list[dict[str, Any]] = []
        while True:
            out = self._call("Query", **req)
            items += out.get("Items", [])
            if "LastEvaluatedKey" not in out:
                return items
            req["ExclusiveStartKey"] = out["LastEvaluatedKey"]

    @upstream("vector index count")
    def count(self, key: DatasetKey, kind: Kind) -> int:
        spec = KINDS[kind]
        return len(self._rows(spec, key, "id", {"#v": spec.attribute}, "attribute_exists(#v)"))

    @upstream("vector index with_vectors")
    def with_vectors(self, key: DatasetKey, kind: Kind, ids: list[int]) -> set[int]:
        spec = KINDS[kind]
        table = self._table(spec)
        have: set[int] = set()
        for start in range(0, len(ids), 100):
            keys = [{"pk": {"S": key.pk}, "id": {"N": str(i)}} for i in ids[start : start + 100]]
            req: dict[str, Any] = {
                table: {
                    "Keys": keys,
                    "ProjectionExpression": "id, #v",
                    "ExpressionAttributeNames": {"#v": spec.attribute},
                }
            }
            while req:
                out = self._call("BatchGetItem", RequestItems=req)
                for item in out.get("Responses", {}).get(table, []):
                    if spec.attribute in item:
                        have.add(int(item["id"]["N"]))
                req = out.get("UnprocessedKeys") or {}
        return have

    @upstream("vector index nearby")
    def nearby(
        self, key: DatasetKey, lat: float, lon: float, radius_km: float, limit: int
    ) -> list[GeoHit]:
        """Entities with coordinates within the radius: the dataset's
        entities that have coordinates and a vector, read by one Query of
        their partition (bounded by the dataset's size, not by the radius)."""
        with self._lock:
            self.requests += 1
        spec = KINDS["entities"]
        rows = self._rows(
            spec,
            key,
            "id, lat, lon",
            {"#v": spec.attribute},
            "attribute_exists(lat) AND attribute_exists(lon) AND attribute_exists(#v)",
        )
        hits = []
        for r in rows:
            d = haversine_km(lat, lon, float(r["lat"]["N"]), float(r["lon"]["N"]))
            if d <= radius_km:
                hits.append(GeoHit(int(r["id"]["N"]), d))
        hits.sort(key=lambda h: (h.distance_km, h.id))
        return hits[:limit]

    @upstream("vector index delete")
    def delete(self, key: DatasetKey, kind: Kind, ids: list[int]) -> int:
        """Remove the vectors of these rows (the rows are the graph store's,
        which deletes them next); a forgotten passage leaves the word index too."""
        if not ids:
            return 0
        spec = KINDS[kind]
        with self._lock:
            self.requests += 1
        if kind == "chunks":
            from ...dynamodb.tables import ArtifactRow

            rows = ArtifactRow.batch_get([(key.pk, i) for i in ids], consistent_read=True)
            words.uncount_words(key.pk, {int(r.id): r for r in rows})

        def one(row_id: int) -> bool:
            try:
                self._call(
                    "UpdateItem",
                    TableName=self._table(spec),
                    Key={"pk": {"S": key.pk}, "id": {"N": str(row_id)}},
                    UpdateExpression="REMOVE #v",
                    ConditionExpression="attribute_exists(#v)",
                    ExpressionAttributeNames={"#v": spec.attribute},
                )
            except ClientError as exc:
                if error_code(exc) != "ConditionalCheckFailedException":
                    raise
                return False  # no vector there
            return True

        return sum(self._map(one, ids))

    @upstream("vector index delete_dataset")
    def delete_dataset(self, key: DatasetKey) -> None:
        """Remove the vectors of every row of the dataset (the rows stay:
        they are the graph store's, which deletes them next)."""
        with self._lock:
            self.requests += 1
        for spec in KINDS.values():
            names = {"#v": spec.attribute}
            for row in self._rows(spec, key, "id", names, "attribute_exists(#v)"):
                self._call(
                    "UpdateItem",
                    TableName=self._table(spec),
                    Key={"pk": {"S": key.pk}, "id": row["id"]},
                    UpdateExpression="REMOVE #v",
                    ExpressionAttributeNames=names,
                )


def _snake(op: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in op).lstrip("_")
