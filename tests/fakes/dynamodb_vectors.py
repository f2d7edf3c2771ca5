"""DynamoDB with vector indexes, for the tests: an HTTP server on 127.0.0.1
that speaks DynamoDB's JSON protocol in front of a moto server (moto has no
vector indexes). The real boto3 client talks to it as to DynamoDB.

    fake = FakeDynamoVectors(moto_url, lag_s=0.0).start()   # endpoint_url=fake.url

It answers ``SearchVectors`` itself (exact distances over the HASH
partition), keeps ``VectorIndexes`` of ``CreateTable`` / ``UpdateTable``
(stripped before moto sees them) and adds them to ``DescribeTable``, checks
the vector attribute of every write, and forwards everything else to moto as
is. A write reaches the index ``lag_s`` seconds after it was acknowledged
(its item as it stood just after the write), as DynamoDB replicates a table
into its vector indexes asynchronously. Writes answer ``ConsumedCapacity``
with ``VectorIndexes`` / ``VectorWriteRequestBytes`` when asked for
``INDEXES``, searches with ``VectorSearchRequestBytes``; the totals are kept
in ``search_bytes`` / ``write_bytes`` for the benchmarks.

Which behaviour is documented and which assumed: vector_rules.py and
docs/dynamodb-vectors.md.
"""

from __future__ import annotations

import copy
import http.client
import json
import threading
import time
import urllib.parse
import zlib
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from ._server import FaultQueue
from .latency import HOP_BY_HOP
from .vector_rules import (
    TOPK_MAX,
    TOPK_MIN,
    DynamoError,
    IndexDef,
    Item,
    best_first,
    check_written_vector,
    entry_bytes,
    invalid,
    parse_condition,
    project,
    same_value,
    score,
    vector_of,
)
from .vector_tables import TableOps, _Index, _key, _Table

WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}
AMZ_JSON = "application/x-amz-json-1.0"
INTERNAL = "x-gb-fake-internal"  # on the fake's own requests to moto


class FakeDynamoVectors(TableOps):
    name = "dynamodb-vectors"

    def __init__(self, upstream: str, lag_s: float = 0.0, region: str = "us-east-1") -> None:
        parsed = urllib.parse.urlsplit(upstream)
        self.upstream_host = parsed.hostname or "127.0.0.1"
        self.upstream_port = parsed.port or 80
        self.lag_s = lag_s
        self.backfill_s = 0.0  # how long an index added to a table backfills
        self.region = region
        self.url = ""
        self.ops: Counter[str] = Counter()  # requests by operation
        self.search_bytes = 0.0
        self.write_bytes = 0.0
        self.faults: FaultQueue[DynamoError] = FaultQueue()  # stage = operation
        self.searches: list[tuple[str, str]] = []  # (table, index) of every SearchVectors
        self._tables: dict[str, _Table] = {}
        self._lock = threading.RLock()
        self._upstream = threading.local()  # .conn: this thread's connection to moto
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> Self:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        httpd.daemon_threads = True
        self._httpd = httpd
        self.url = f"http://127.0.0.1:{httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset_meters(self) -> None:
        with self._lock:
            self.ops.clear()
            self.search_bytes = self.write_bytes = 0.0

    def flush(self) -> None:
        """Replicate every pending write now (the lag has passed)."""
        with self._lock:
            for t in self._tables.values():
                for ix in t.indexes.values():
                    self._replicate(ix, float("inf"))

    def pending(self) -> int:
        with self._lock:
            return sum(len(ix.pending) for t in self._tables.values() for ix in t.indexes.values())

    def indexed(self, table: str, index: str) -> int:
        """How many items the index holds now (pending writes left out)."""
        with self._lock:
            return len(self._tables[table].indexes[index].entries)

    # -- moto ------------------------------------------------------------------------------

    def _forward(
        self, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        # One kept-alive connection to moto per handler thread: a new one per
        # request cost a TCP handshake and a new moto server thread each time.
        for attempt in (0, 1):
            conn = getattr(self._upstream, "conn", None)
            if conn is None:
                conn = http.client.HTTPConnection(
                    self.upstream_host, self.upstream_port, timeout=60
                )
                self._upstream.conn = conn
            try:
                conn.putrequest("POST", "/", skip_host=True, skip_accept_encoding=True)
                for k, v in headers:
                    if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                        conn.putheader(k, v)
                conn.putheader("content-length", str(len(body)))
                conn.endheaders(body)
                resp = conn.getresponse()
                data = resp.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # moto closed the idle connection before reading this request: sent again
                conn.close()
                self._upstream.conn = None
                if attempt:
                    raise
                continue
            if resp.will_close:
                conn.close()
                self._upstream.conn = None
            out = {k.lower(): v for k, v in resp.getheaders() if k.lower() not in HOP_BY_HOP}
            return resp.status, out, data
        raise AssertionError("unreachable")

    def _call(self, headers: list[tuple[str, str]], op: str, body: dict[str, Any]) -> Any:
        """An internal request to moto (signed headers are reused as they are:
        moto does not check signatures)."""
        hs = [(k, v) for k, v in headers if k.lower() != "x-amz-target"]
        hs.append(("x-amz-target", f"DynamoDB_20120810.{op}"))
        hs.append((INTERNAL, "1"))  # not the client's: moto's recorder can tell
        status, _, data = self._forward(hs, json.dumps(body).encode())
        if status != 200:
            raise RuntimeError(f"moto {op}: {status} {data[:200]!r}")
        return json.loads(data)

    def _get(self, headers: list[tuple[str, str]], table: str, key: Item) -> Item | None:
        out = self._call(
            headers, "GetItem", {"TableName": table, "Key": key, "ConsistentRead": True}
        )
        item = out.get("Item")
        return item if isinstance(item, dict) else None

    def _table(self, headers: list[tuple[str, str]], name: str) -> _Table | None:
        with self._lock:
            if name in self._tables:
                return self._tables[name]
        try:
            desc = self._call(headers, "DescribeTable", {"TableName": name})["Table"]
        except RuntimeError:
            return None
        attrs = [k["AttributeName"] for k in sorted(desc["KeySchema"], key=lambda k: k["KeyType"])]
        billing = (desc.get("BillingModeSummary") or {}).get("BillingMode", "PROVISIONED")
        defined = {a["AttributeName"] for a in desc.get("AttributeDefinitions", [])}
        with self._lock:
            return self._tables.setdefault(name, _Table(attrs, billing, defined=defined))

    # -- dispatch --------------------------------------------------------------------------

    def handle(
        self, headers: list[tuple[str, str]], op: str, raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.ops[op] += 1
        try:
            body = json.loads(raw or b"{}")
            fault = self.faults.take(op)
            if fault is not None:
                raise fault
            if op == "SearchVectors":
                return self._json(self._search(headers, body))
            if op == "CreateTable":
                return self._create_table(headers, body)
            if op == "UpdateTable":
                return self._update_table(headers, body)
            if op == "DescribeTable":
                return self._describe(headers, body, raw)
            if op == "DeleteTable":
                with self._lock:
                    self._tables.pop(body.get("TableName", ""), None)
            if op in WRITES:
                return self._write(headers, op, body, raw)
        except DynamoError as err:
            return self._json(err.body, err.status)
        return self._forward(headers, raw)

    @staticmethod
    def _json(body: Any, status: int = 200) -> tuple[int, dict[str, str], bytes]:
        data = json.dumps(body).encode()
        return status, {"content-type": AMZ_JSON, "x-amz-crc32": str(zlib.crc32(data))}, data

    def _patched(
        self, status: int, headers: dict[str, str], data: bytes, patch: Any
    ) -> tuple[int, dict[str, str], bytes]:
        """moto's answer with ``patch(body)`` applied (and a fresh CRC32)."""
        if status != 200:
            return status, headers, data
        body = json.loads(data)
        patch(body)
        out = json.dumps(body).encode()
        headers = {**headers, "x-amz-crc32": str(zlib.crc32(out))}
        return status, headers, out

    # -- writes ----------------------------------------------------------------------------

    def _targets(self, op: str, body: dict[str, Any]) -> list[tuple[str, Item, Item | None]]:
        """(table, key or item, the item written when the request holds it)
        of every item a write touches."""
        out: list[tuple[str, Item, Item | None]] = []
        if op == "PutItem":
            out.append((body["TableName"], body["Item"], body["Item"]))
        elif op in ("UpdateItem", "DeleteItem"):
            out.append((body["TableName"], body["Key"], None))
        elif op == "BatchWriteItem":
            for table, reqs in body.get("RequestItems", {}).items():
                for r in reqs:
                    if "PutRequest" in r:
                        out.append((table, r["PutRequest"]["Item"], r["PutRequest"]["Item"]))
                    elif "DeleteRequest" in r:
                        out.append((table, r["DeleteRequest"]["Key"], None))
        else:
            for t in body.get("TransactItems", []):
                for kind, spec in t.items():
                    if kind == "Put":
                        out.append((spec["TableName"], spec["Item"], spec["Item"]))
                    elif kind in ("Update", "Delete"):
                        out.append((spec["TableName"], spec["Key"], None))
        return out

    def _check_update(self, ix: IndexDef, spec: dict[str, Any]) -> None:
        """An UpdateItem's ``SET <vector> = :v``: the value must be a vector."""
        expr = spec.get("UpdateExpression") or ""
        names = spec.get("ExpressionAttributeNames") or {}
        values = spec.get("ExpressionAttributeValues") or {}
        for clause in expr.replace("\n", " ").split(","):
            lhs, eq, rhs = clause.partition("=")
            if not eq:
                continue
            path = lhs.strip().split()[-1]
            attr = names.get(path, path)
            if attr == ix.attribute and rhs.strip() in values:
                check_written_vector(ix, values[rhs.strip()])

    def _write(
        self, headers: list[tuple[str, str]], op: str, body: dict[str, Any], raw: bytes
    ) -> Any:
        targets = self._targets(op, body)
        touched: list[tuple[_Table, str, Item, Item | None]] = []
        for table_name, keyish, written in targets:
            table = self._table(headers, table_name)
            if table is None or not table.indexes:
                continue
            key = {a: keyish[a] for a in table.key_attrs if a in keyish}
            for ix in table.indexes.values():
                if written is not None:
                    check_written_vector(ix.spec, written.get(ix.spec.attribute))
            if op == "UpdateItem":
                for ix in table.indexes.values():
                    self._check_update(ix.spec, body)
            if op == "TransactWriteItems":
                for t in body.get("TransactItems", []):
                    spec = t.get("Update")
                    if spec and spec.get("TableName") == table_name:
                        for ix in table.indexes.values():
                            self._check_update(ix.spec, spec)
            touched.append((table, table_name, key, self._get(headers, table_name, key)))
        status, hs, data = self._forward(headers, raw)
        if status != 200 or not touched:
            return status, hs, data
        due = time.monotonic() + self.lag_s
        metered: dict[str, dict[str, float]] = {}
        for table, table_name, key, before in touched:
            after = self._get(headers, table_name, key)
            k = _key(key, table.key_attrs)
            for ix in table.indexes.values():
                old, new = ix.spec.entry_of(before), ix.spec.entry_of(after)
                if old == new:
                    continue  # doc: a write that changes no indexed attribute costs none
                cost = entry_bytes(new if new is not None else old or {}, ix.spec)
                per = metered.setdefault(table_name, {})
                per[ix.spec.name] = per.get(ix.spec.name, 0.0) + cost
                with self._lock:
                    ix.pending.append((due, k, copy.deepcopy(after)))
                    self.write_bytes += cost
        if body.get("ReturnConsumedCapacity") != "INDEXES" or not metered:
            return status, hs, data

        def add(b: dict[str, Any]) -> None:
            caps = b.get("ConsumedCapacity")
            for cap in caps if isinstance(caps, list) else [caps] if caps else []:
                per = metered.get(cap.get("TableName", ""))
                if per:
                    cap["VectorIndexes"] = {
                        n: {"VectorWriteRequestBytes": v} for n, v in per.items()
                    }

        return self._patched(status, hs, data, add)

    def _replicate(self, ix: _Index, now: float) -> None:
        keep = []
        for due, k, item in ix.pending:
            if due > now:
                keep.append((due, k, item))
                continue
            entry = ix.spec.entry_of(item)
            if entry is None:
                ix.entries.pop(k, None)
            else:
                ix.entries[k] = entry
        ix.pending = keep

    # -- SearchVectors -------------------------------------------------------------------

    def _search(self, headers: list[tuple[str, str]], body: dict[str, Any]) -> Any:
        for field_ in ("TableName", "IndexName", "SearchVector", "TopK"):
            if field_ not in body:
                raise invalid(
                    f"1 validation error detected: Value null at '{field_}' failed to satisfy constraint: Member must not be null"
                )
        table = self._table(headers, body["TableName"])
        if table is None:
            raise DynamoError("ResourceNotFoundException", "Requested resource not found")
        ix = table.indexes.get(body["IndexName"])
        if ix is None:
            raise DynamoError(
                "ResourceNotFoundException", "Requested resource not found: vector index not found"
            )
        spec = ix.spec
        with self._lock:
            self.searches.append((body["TableName"], spec.name))
        if spec.backfill_until > time.monotonic():  # doc: no search while backfilling
            raise invalid(f"Cannot search backfilling vector index {spec.name}")
        top_k = body["TopK"]
        if not isinstance(top_k, int) or not TOPK_MIN <= top_k <= TOPK_MAX:
            raise invalid("Provided TopK value is out of valid range")  # doc, verbatim
        query = vector_of({"L": body["SearchVector"]}, len(body["SearchVector"]))
        if query is None:
            raise invalid("SearchVector must be a list of numbers")  # assumed text
        if len(query) != spec.dimensions:  # assumed text
            raise invalid(
                f"SearchVector has {len(query)} dimensions; the vector index {spec.name} "
                f"has {spec.dimensions}"
            )
        names = body.get("ExpressionAttributeNames") or {}
        cond = parse_condition(
            body.get("SearchConditionExpression"),
            names,
            body.get("ExpressionAttributeValues") or {},
            spec,
        )
        with self._lock:
            self._replicate(ix, time.monotonic())
            pool = [
                e
                for e in ix.entries.values()
                if all(same_value(e.get(a), v) for a, v in cond.items())
            ]
        scored = []
        for entry in pool:
            vec = _decoded(entry, spec.attribute, spec.dimensions)
            if vec is not None:
                scored.append((score(spec.distance, query, vec), entry))
        sign = best_first(spec.distance)
        scored.sort(key=lambda s: sign * s[0])
        results = []
        returned = 0
        for sc, entry in scored[:top_k]:
            item = project(entry, spec, body.get("ProjectionExpression"), names)
            returned += sum(len(k.encode()) for k in item) + len(json.dumps(item))
            results.append({"Item": item, "Score": sc})
        out: dict[str, Any] = {"SearchResults": results}
        used = float(4 * spec.dimensions * len(pool) + returned)  # assumed metering
        with self._lock:
            self.search_bytes += used
        if body.get("ReturnConsumedCapacity") in ("INDEXES", "TOTAL"):
            out["ConsumedCapacity"] = {"VectorSearchRequestBytes": used}
        return out


def _handler(fake: FakeDynamoVectors) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            op = (self.headers.get("x-amz-target") or "").rsplit(".", 1)[-1]
            try:
                status, headers, data = fake.handle(list(self.headers.items()), op, raw)
            except Exception as exc:  # a fake-side bug: a 500 botocore does not retry forever
                status, headers, data = fake._json(
                    {"__type": "InternalFailure", "message": f"fake: {type(exc).__name__}: {exc}"},
                    500,
                )
            self.send_response(status)
            for k, v in headers.items():
                if k != "content-length":
                    self.send_header(k, v)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

    return Handler


_VECTORS: dict[int, Any] = {}  # id(list of numbers) -> its f32 array (entries are immutable)


def _decoded(entry: Item, attribute: str, dims: int) -> Any:
    value = entry.get(attribute)
    if value is None:
        return None
    ref = id(value)
    hit = _VECTORS.get(ref)
    if hit is None or hit[0] is not value:
        hit = (value, vector_of(value, dims))
        _VECTORS[ref] = hit
    return hit[1]
