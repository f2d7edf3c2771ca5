"""The table side of the DynamoDB vector fake: the vector indexes that
``CreateTable`` / ``UpdateTable`` declare (kept here, stripped before moto
sees them), their description in ``DescribeTable``, and the backfill of an
index added to a table that has items. Mixed into ``FakeDynamoVectors``."""

from __future__ import annotations

import copy
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .vector_rules import DynamoError, IndexDef, Item, entry_bytes, invalid

Headers = list[tuple[str, str]]
Answer = tuple[int, dict[str, str], bytes]


@dataclass
class _Index:
    spec: IndexDef
    entries: dict[str, Item] = field(default_factory=dict)  # key -> entry
    # (due, key, item just after the write): replicated when due comes
    pending: list[tuple[float, str, Item | None]] = field(default_factory=list)


@dataclass
class _Table:
    key_attrs: list[str]
    billing: str
    indexes: dict[str, _Index] = field(default_factory=dict)
    defined: set[str] = field(default_factory=set)  # its attribute definitions


def _strip_search_attributes(body: dict[str, Any], defs: list[IndexDef]) -> None:
    """moto refuses an attribute definition that no key uses; DynamoDB wants
    the search schema's attributes defined (doc): moto does not see them."""
    used = {k["AttributeName"] for k in body.get("KeySchema", [])}
    for group in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        for ix in body.get(group) or []:
            used |= {k["AttributeName"] for k in ix.get("KeySchema", [])}
    for u in body.get("GlobalSecondaryIndexUpdates") or []:
        used |= {k["AttributeName"] for k in (u.get("Create") or {}).get("KeySchema", [])}
    searched = {a for d in defs for a in [d.hash_attr, *d.filters] if a}
    if "AttributeDefinitions" in body:
        body["AttributeDefinitions"] = [
            a
            for a in body["AttributeDefinitions"]
            if a["AttributeName"] in used or a["AttributeName"] not in searched
        ]


def _key(item: Item, attrs: list[str]) -> str:
    return json.dumps([item.get(a) for a in attrs], sort_keys=True)


class TableOps:
    """What the fake's table operations need of it."""

    backfill_s: float
    region: str
    _tables: dict[str, _Table]
    _lock: threading.RLock

    def _forward(self, headers: Headers, body: bytes) -> Answer:
        raise NotImplementedError

    def _call(self, headers: Headers, op: str, body: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _table(self, headers: Headers, name: str) -> _Table | None:
        raise NotImplementedError

    def table_records(self, names: dict[str, str]) -> dict[str, _Table]:
        """Copies of the fake's own record of tables (its vector indexes and
        their entries), by the label given for each table name: with
        ``put_table_records``, a table's twin made without a CreateTable
        (tests/moto_tables.py copies moto's side)."""
        with self._lock:
            return {
                label: copy.deepcopy(self._tables[name])
                for name, label in names.items()
                if name in self._tables
            }

    def put_table_records(self, records: dict[str, _Table]) -> None:
        """Take copies of ``records`` as the records of these table names."""
        with self._lock:
            for name, record in records.items():
                self._tables[name] = copy.deepcopy(record)

    def _json(self, body: Any, status: int = 200) -> Answer:
        raise NotImplementedError

    def _patched(self, status: int, headers: dict[str, str], data: bytes, patch: Any) -> Answer:
        raise NotImplementedError

    # -- tables ----------------------------------------------------------------------------

    def _create_table(self, headers: list[tuple[str, str]], body: dict[str, Any]) -> Any:
        specs = body.pop("VectorIndexes", None) or []
        name = body.get("TableName", "")
        key_attrs = [
            k["AttributeName"]
            for k in sorted(body.get("KeySchema", []), key=lambda k: k["KeyType"])
        ]
        defined = {a["AttributeName"] for a in body.get("AttributeDefinitions", [])}
        billing = body.get("BillingMode") or "PROVISIONED"
        if specs and billing != "PAY_PER_REQUEST":  # doc: on-demand tables only
            raise invalid(
                "Vector indexes are supported only on tables that use on-demand capacity mode"
            )
        defs = [IndexDef.parse(name, s, key_attrs, defined) for s in specs]
        if len({d.name for d in defs}) != len(defs):
            raise invalid("Duplicate vector index name")  # assumed text
        _strip_search_attributes(body, defs)
        status, hs, data = self._forward(headers, json.dumps(body).encode())
        if status == 200:
            with self._lock:
                table = _Table(key_attrs, billing, {d.name: _Index(d) for d in defs}, defined)
                self._tables[name] = table
            return self._patched(
                status, hs, data, lambda b: self._add_description(b["TableDescription"], table)
            )
        return status, hs, data

    def _update_table(self, headers: list[tuple[str, str]], body: dict[str, Any]) -> Any:
        updates = body.pop("VectorIndexUpdates", None) or []
        name = body.get("TableName", "")
        table = self._table(headers, name)
        if table is None:
            return self._forward(headers, json.dumps(body).encode())
        if body.get("BillingMode") == "PROVISIONED" and (table.indexes or updates):
            raise invalid(
                "Vector indexes are supported only on tables that use on-demand capacity mode"
            )
        if len(updates) > 1:  # doc: one vector index per UpdateTable
            raise invalid("Only one vector index can be added or removed per UpdateTable")
        if updates and table.billing != "PAY_PER_REQUEST":
            raise invalid(
                "Vector indexes are supported only on tables that use on-demand capacity mode"
            )
        defined = {a["AttributeName"] for a in body.get("AttributeDefinitions", [])}
        table.defined |= defined
        creates = [
            IndexDef.parse(name, u["Create"], table.key_attrs, table.defined | set(table.key_attrs))
            for u in updates
            if "Create" in u
        ]
        _strip_search_attributes(body, creates)
        status, hs, data = (200, {}, b"")
        rest = {k: v for k, v in body.items() if k not in ("TableName", "AttributeDefinitions")}
        if rest:
            status, hs, data = self._forward(headers, json.dumps(body).encode())
            if status != 200:
                return status, hs, data
            if body.get("BillingMode"):
                table.billing = body["BillingMode"]
        for u in updates:
            if "Create" in u:
                d = creates.pop(0)
                d.backfill_until = time.monotonic() + self.backfill_s
                ix = _Index(d)
                for item in self._scan(headers, name):
                    entry = d.entry_of(item)
                    if entry is not None:
                        ix.entries[_key(item, table.key_attrs)] = entry
                with self._lock:
                    table.indexes[d.name] = ix
            elif "Delete" in u:
                with self._lock:
                    if table.indexes.pop(u["Delete"].get("IndexName", ""), None) is None:
                        raise DynamoError(
                            "ResourceNotFoundException", "Requested resource not found"
                        )
        if not data:
            desc = self._call(headers, "DescribeTable", {"TableName": name})["Table"]
            self._add_description(desc, table)
            return self._json({"TableDescription": desc})
        return self._patched(
            status, hs, data, lambda b: self._add_description(b["TableDescription"], table)
        )

    def _scan(self, headers: list[tuple[str, str]], table: str) -> list[Item]:
        items: list[Item] = []
        req: dict[str, Any] = {"TableName": table}
        while True:
            out = self._call(headers, "Scan", req)
            items += out.get("Items", [])
            if "LastEvaluatedKey" not in out:
                return items
            req["ExclusiveStartKey"] = out["LastEvaluatedKey"]

    def _describe(self, headers: list[tuple[str, str]], body: dict[str, Any], raw: bytes) -> Any:
        status, hs, data = self._forward(headers, raw)
        table = self._tables.get(body.get("TableName", ""))
        if table is None or not table.indexes:
            return status, hs, data
        return self._patched(status, hs, data, lambda b: self._add_description(b["Table"], table))

    def _add_description(self, desc: dict[str, Any], table: _Table) -> None:
        now = time.monotonic()
        with self._lock:
            out = []
            for ix in table.indexes.values():
                size = sum(entry_bytes(e, ix.spec) for e in ix.entries.values())
                backfilling = ix.spec.backfill_until > now
                out.append(
                    ix.spec.describe(self.region, "ACTIVE", backfilling, len(ix.entries), size)
                )
        if out:
            desc["VectorIndexes"] = out
