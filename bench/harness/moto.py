"""moto's DynamoDB at scale: the round trips of a request timed on the
client, and an index that keeps moto's Query from sorting whole tables."""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable
from typing import Any


class RoundTrips:
    """DynamoDB round-trip intervals, from botocore's before-send to
    response-received on the same thread."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self.intervals: list[tuple[float, float]] = []
        self._clients: set[int] = set()

    def attach(self, client: Any) -> None:
        if id(client) in self._clients:
            return
        self._clients.add(id(client))
        client.meta.events.register("before-send.dynamodb", self._start, unique_id="bench-rt-s")
        client.meta.events.register("response-received.dynamodb", self._end, unique_id="bench-rt-e")

    def _start(self, **kwargs: Any) -> None:
        self._local.t0 = time.perf_counter()

    def _end(self, **kwargs: Any) -> None:
        t0 = getattr(self._local, "t0", None)
        if t0 is not None:
            with self._lock:
                self.intervals.append((t0, time.perf_counter()))
            self._local.t0 = None

    def reset(self) -> None:
        with self._lock:
            self.intervals = []

    def union_seconds(self) -> float:
        with self._lock:
            spans = sorted(self.intervals)
        total = 0.0
        cur_s: float | None = None
        cur_e = 0.0
        for s, e in spans:
            if cur_s is None or s > cur_e:
                if cur_s is not None:
                    total += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        if cur_s is not None:
            total += cur_e - cur_s
        return total


# --- moto, indexed ------------------------------------------------------------------


def speed_up_moto() -> None:
    """moto answers every Query by sorting the whole table (DynamoType
    comparisons in Python): seconds per request on a table of 10k rows, so
    200 questions on 100k edges would take hours. This indexes each table's
    partitions once (a sorted list per hash value, per table and GSI, dropped
    at any write) and answers the two Query shapes the store sends (a hash
    key, optionally ``begins_with`` on the range key; forward or backward;
    a limit) from it; anything else goes to moto's own code. It changes how
    long moto takes, not what is asked of it: the requests counted and the
    time outside the round trips are the same. Transactions too: see
    ``back_up_items_not_tables``."""
    import copy
    from collections import defaultdict

    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    original_query = Table.query
    original_put = Table.put_item
    original_delete = Table.delete_item
    original_update = DynamoDBBackend.update_item

    def invalidate(table: Any) -> None:
        table.__dict__.pop("_bench_parts", None)

    def put_item(self: Any, *args: Any, **kwargs: Any) -> Any:
        invalidate(self)
        return original_put(self, *args, **kwargs)

    def delete_item(self: Any, *args: Any, **kwargs: Any) -> Any:
        invalidate(self)
        return original_delete(self, *args, **kwargs)

    def update_item(self: Any, table_name: str, *args: Any, **kwargs: Any) -> Any:
        invalidate(self.get_table(table_name))
        return original_update(self, table_name, *args, **kwargs)

    def parts(table: Any, index_name: str | None) -> dict[Any, list[tuple[Any, Any]]]:
        cache = table.__dict__.setdefault("_bench_parts", {})
        if index_name not in cache:
            if index_name:
                schema = table.get_index(index_name).schema
                hash_attr = next(k["AttributeName"] for k in schema if k["KeyType"] == "HASH")
                range_attr = next(
                    (k["AttributeName"] for k in schema if k["KeyType"] == "RANGE"), None
                )
            else:
                hash_attr, range_attr = table.hash_key_attr, table.range_key_attr
            out: dict[Any, list[tuple[Any, Any]]] = defaultdict(list)
            for hash_set in table.items.values():
                rows = hash_set.values() if table.range_key_attr else [hash_set]
                for item in rows:
                    h = item.attrs.get(hash_attr)
                    r = item.attrs.get(range_attr) if range_attr else None
                    if h is None or (range_attr and r is None):
                        continue  # a sparse GSI leaves the item out
                    out[h.cast_value].append((r.cast_value if r is not None else 0, item))
            for rows_ in out.values():
                rows_.sort(key=lambda p: p[0])
            cache[index_name] = out
        return dict(cache[index_name])

    def query(
        self: Any,
        hash_key: Any,
        range_comparison: str | None,
        range_objs: list[Any],
        limit: int,
        exclusive_start_key: Any,
        scan_index_forward: bool,
        projection_expressions: Any,
        index_name: str | None = None,
        consistent_read: bool = False,
        filter_expression: Any = None,
        hash_key_conditions: Any = None,
        range_key_conditions: Any = None,
        **filter_kwargs: Any,
    ) -> Any:
        simple = (
            not exclusive_start_key
            and not filter_kwargs
            and not projection_expressions
            and len(hash_key_conditions or [None]) == 1
            and len(range_key_conditions or []) <= 1
            and (range_comparison is None or range_comparison.lower() == "begins_with")
        )
        if not simple:
            return original_query(
                self,
                hash_key,
                range_comparison,
                range_objs,
                limit,
                exclusive_start_key,
                scan_index_forward,
                projection_expressions,
                index_name,
                consistent_read,
                filter_expression,
                hash_key_conditions=hash_key_conditions,
                range_key_conditions=range_key_conditions,
                **filter_kwargs,
            )
        hv = hash_key if hash_key is not None else hash_key_conditions[0][1]
        rows = parts(self, index_name).get(hv.cast_value, [])
        if range_comparison is not None:  # begins_with: a slice of the sorted partition
            prefix = range_objs[0].cast_value
            lo = bisect.bisect_left(rows, prefix, key=lambda p: p[0])
            hi = bisect.bisect_left(rows, prefix + "\U0010ffff", key=lambda p: p[0])
            rows = rows[lo:hi]
        if not scan_index_forward:
            rows = rows[::-1]
        more = limit is not None and len(rows) > limit
        picked = [item for _, item in (rows[:limit] if limit is not None else rows)]
        results = copy.deepcopy(picked)
        if index_name:
            index = self.get_index(index_name)
            results = [index.project(r) for r in results]
        if filter_expression is not None:  # after the limit, as DynamoDB (and moto) do
            results = [r for r in results if filter_expression.expr(r)]
        last = self._get_last_evaluated_key(picked[-1], index_name) if more and picked else None
        return results, len(results), last

    back_up_items_not_tables(invalidate)
    Table.query = query  # type: ignore[method-assign]
    Table.put_item = put_item  # type: ignore[method-assign]
    Table.delete_item = delete_item  # type: ignore[method-assign]
    DynamoDBBackend.update_item = update_item  # type: ignore[method-assign]


def back_up_items_not_tables(invalidate: Callable[[Any], None]) -> None:
    """moto backs up each table a TransactWriteItems names, before it writes,
    as a deepcopy of the whole table: a transaction on a table of 10k rows
    (the terms table's word postings after a few hundred remembers) takes
    seconds, so remembering grows quadratic. This backs up only the items the
    transaction names and, when moto cancels it (an exception: the
    conditional failures, a validation error), puts them back as they were,
    which is all the whole-table copy restored: what moto answers is the same."""
    import copy

    import moto.dynamodb.models as backend_module
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    class Copies:
        """moto's ``copy`` module but for a Table's deepcopy (the backup)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(copy, name)

        @staticmethod
        def deepcopy(x: Any, memo: Any = None) -> Any:
            return x if isinstance(x, Table) else copy.deepcopy(x, memo)

    backend_module.copy = Copies()  # type: ignore[assignment]
    original = DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        saved: list[tuple[Any, Any, Any, Any]] = []
        for entry in transact_items:
            op = next(iter(entry.values()), None) or {}
            table = self.tables.get(op.get("TableName"))
            if table is None:
                continue
            try:
                h, r = self.get_keys_value(table, op.get("Key") or op.get("Item") or {})
            except Exception:  # moto's own code answers the bad request
                continue
            saved.append((table, h, r, copy.deepcopy(table.get_item(h, r))))
        try:
            original(self, transact_items)
        except Exception:
            for table, h, r, item in reversed(saved):  # the first backup of a key wins
                table.delete_item(h, r)
                if item is not None:
                    if r is not None:
                        table.items[h][r] = item
                    else:
                        table.items[h] = item
                invalidate(table)
            raise
        finally:
            for table, *_ in saved:
                invalidate(table)

    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
