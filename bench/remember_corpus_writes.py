"""DynamoDB write accounting for bench/remember_corpus.py: every request's
body seen through the request counter's botocore hook, its items and its write
capacity units estimated from the sizes sent (DynamoDB's rule: 1 WCU per
started KB of item, a delete 1 WCU; an update counted on the attributes it
sends; a transaction twice). moto reports no real consumed capacity."""

from __future__ import annotations

import json
import math
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gligabao.dynamodb.client import REQUESTS

RECORD_TABLES = ("calls", "inferences", "idempotency")
WRITE_OPS = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")


def _value_size(v: dict[str, Any]) -> int:
    ((kind, val),) = v.items()
    if kind == "S":
        return len(val.encode())
    if kind == "N":
        return math.ceil(len(str(val).lstrip("-").replace(".", "")) / 2) + 1
    if kind == "B":
        return len(val)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(_value_size({kind[0]: x}) for x in val)
    if kind == "L":
        return 3 + sum(_value_size(x) + 1 for x in val)
    if kind == "M":
        return 3 + sum(len(k.encode()) + _value_size(x) + 1 for k, x in val.items())
    return 0


def item_size(item: dict[str, Any]) -> int:
    return sum(len(k.encode()) + _value_size(v) for k, v in item.items())


def wcu(size: int) -> int:
    return max(1, math.ceil(size / 1024))


@dataclass
class WriteMeter:
    lock: threading.Lock = field(default_factory=threading.Lock)
    by_table: Counter[str] = field(default_factory=Counter)  # requests, per table touched
    graph_requests: int = 0  # requests that touch a graph table
    write_requests: int = 0
    items: int = 0
    wcu: int = 0

    def record(self, op: str, body: dict[str, Any]) -> None:
        with self.lock:
            tables_of = list(body.get("RequestItems", {})) or [body.get("TableName", "?")]
            for t in tables_of:
                self.by_table[_short(t)] += 1
            if any(_short(t) not in RECORD_TABLES for t in tables_of):
                self.graph_requests += 1
            if op not in WRITE_OPS:
                return
            self.write_requests += 1
            if op == "PutItem":
                self.items += 1
                self.wcu += wcu(item_size(body.get("Item", {})))
            elif op == "UpdateItem":
                sent = item_size(body.get("Key", {})) + sum(
                    _value_size(v) for v in body.get("ExpressionAttributeValues", {}).values()
                )
                self.items += 1
                self.wcu += wcu(sent)
            elif op == "DeleteItem":
                self.items += 1
                self.wcu += 1
            elif op == "BatchWriteItem":
                for reqs in body.get("RequestItems", {}).values():
                    for req in reqs:
                        self.items += 1
                        put = req.get("PutRequest")
                        self.wcu += wcu(item_size(put["Item"])) if put else 1
            elif op == "TransactWriteItems":
                for entry in body.get("TransactItems", []):
                    self.items += 1
                    inner = next(iter(entry.values()))
                    self.wcu += 2 * wcu(item_size(inner.get("Item", inner.get("Key", {}))))

    def snapshot(self) -> tuple[int, int, int, int]:
        with self.lock:
            return self.graph_requests, self.write_requests, self.items, self.wcu


PREFIX = f"bench{uuid.uuid4().hex[:6]}_"


def _short(table: str) -> str:
    return table.removeprefix(PREFIX)


WRITES = WriteMeter()


def install_write_hook() -> None:
    """Wrap the request counter's botocore hook (registered on every client
    pynamodb creates) so that each request's body is seen too."""
    counter = REQUESTS
    original = counter._hook

    def hook(model: Any = None, params: Any = None, **kwargs: Any) -> None:
        original(model=model, params=params, **kwargs)
        try:
            raw = (params or {}).get("body") or b"{}"
            body = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
        except ValueError:
            body = {}
        WRITES.record(getattr(model, "name", "unknown"), body)

    counter._hook = hook  # type: ignore[method-assign]
