"""What the DynamoDB vector fake (``dynamodb_vectors.py``) decides without
HTTP: index definitions and their validation, the search condition's
grammar, distances, projections and the metered bytes.

Each rule says where it comes from: "doc" (the AWS developer guide's vector
search pages or the API reference, see docs/dynamodb-vectors.md) or
"assumed" (the documentation is silent; the fake's choice is written there).
"""

from __future__ import annotations

import base64
import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np

AV = dict[str, Any]  # a DynamoDB AttributeValue ({"S": "x"}, {"N": "1"}, ...)
Item = dict[str, AV]

TOPK_MIN, TOPK_MAX = 1, 100  # doc: "TopK was outside 1 to 100"
MAX_DIMENSIONS = 4096  # doc: SearchVector has at most 4096 elements (API model)
DISTANCES = ("COSINE", "EUCLIDEAN", "DOT_PRODUCT")


class DynamoError(Exception):
    """An error as DynamoDB answers it: HTTP 400 and ``__type``."""

    def __init__(self, kind: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status

    @property
    def body(self) -> dict[str, str]:
        prefix = (
            "com.amazon.coral.validate#"
            if self.kind == "ValidationException"
            else "com.amazonaws.dynamodb.v20120810#"
        )
        return {"__type": prefix + self.kind, "message": self.message}


def invalid(message: str) -> DynamoError:
    return DynamoError("ValidationException", message)


@dataclass
class IndexDef:
    """One vector index of a table, as CreateTable / UpdateTable declare it."""

    table: str
    name: str
    attribute: str
    dimensions: int
    distance: str
    hash_attr: str | None
    filters: list[str]
    projection: str  # ALL | KEYS_ONLY | INCLUDE
    non_key: list[str]
    key_attrs: list[str]  # the table's primary key
    backfill_until: float = 0.0  # monotonic time; searches fail before it

    @classmethod
    def parse(
        cls, table: str, spec: dict[str, Any], key_attrs: list[str], defined: set[str]
    ) -> IndexDef:
        name = spec.get("IndexName") or ""
        attr = (spec.get("VectorAttribute") or {}).get("AttributeName") or ""
        dims = spec.get("Dimensions")
        distance = spec.get("DistanceFunction")
        if not isinstance(dims, int) or not 1 <= dims <= MAX_DIMENSIONS:
            raise invalid(f"Dimensions must be between 1 and {MAX_DIMENSIONS}")  # assumed text
        if distance not in DISTANCES:
            raise invalid(f"Invalid DistanceFunction: {distance}")  # assumed text
        hash_attr: str | None = None
        filters: list[str] = []
        for el in spec.get("SearchSchema") or []:
            an, kind = el.get("AttributeName"), el.get("SearchSchemaElementType")
            if an not in defined:  # doc (troubleshooting), verbatim
                raise invalid("One element in SearchSchema is not defined in attribute definitions")
            if kind == "HASH":
                if hash_attr is not None:
                    raise invalid("SearchSchema can have at most one HASH element")  # assumed
                hash_attr = an
            else:
                filters.append(an)
        proj = spec.get("Projection") or {}
        return cls(
            table=table,
            name=name,
            attribute=attr,
            dimensions=dims,
            distance=distance,
            hash_attr=hash_attr,
            filters=filters,
            projection=proj.get("ProjectionType") or "KEYS_ONLY",
            non_key=list(proj.get("NonKeyAttributes") or []),
            key_attrs=key_attrs,
        )

    def describe(self, region: str, status: str, backfilling: bool, count: int, size: int) -> Any:
        schema = (
            [{"AttributeName": self.hash_attr, "SearchSchemaElementType": "HASH"}]
            if self.hash_attr
            else []
        )
        schema += [
            {"AttributeName": f, "SearchSchemaElementType": "INLINE_FILTER"} for f in self.filters
        ]
        proj: dict[str, Any] = {"ProjectionType": self.projection}
        if self.non_key:
            proj["NonKeyAttributes"] = self.non_key
        out: dict[str, Any] = {
            "IndexName": self.name,
            "IndexStatus": status,
            "VectorAttribute": {"AttributeName": self.attribute},
            "Dimensions": self.dimensions,
            "DistanceFunction": self.distance,
            "SearchSchema": schema,
            "Projection": proj,
            "IndexArn": f"arn:aws:dynamodb:{region}:123456789012:table/{self.table}/index/{self.name}",
            "IndexSizeBytes": size,
            "ItemCount": count,
        }
        if backfilling:
            out["Backfilling"] = True
        return out

    def projected(self) -> set[str]:
        """The attributes an entry of the index holds (assumed: the table's
        keys, the search schema's, the vector, and the projection's)."""
        names = set(self.key_attrs) | set(self.filters) | {self.attribute}
        if self.hash_attr:
            names.add(self.hash_attr)
        return names | set(self.non_key)

    def entry_of(self, item: Item | None) -> Item | None:
        """What the index keeps of an item, or None when the item is not
        indexed (doc: no valid vector, or no HASH attribute)."""
        if item is None or vector_of(item.get(self.attribute), self.dimensions) is None:
            return None
        if self.hash_attr and self.hash_attr not in item:
            return None
        if self.projection == "ALL":
            return dict(item)
        keep = self.projected()
        return {k: v for k, v in item.items() if k in keep}


def vector_of(value: AV | None, dims: int) -> np.ndarray | None:
    """A valid vector attribute (doc: a list of numbers with Dimensions
    elements), stored at f32 precision (doc); else None."""
    if not isinstance(value, dict) or "L" not in value:
        return None
    elems = value["L"]
    if len(elems) != dims or not all(isinstance(e, dict) and "N" in e for e in elems):
        return None
    try:
        return np.asarray([float(e["N"]) for e in elems], dtype=np.float32)
    except ValueError:
        return None


def check_written_vector(idx: IndexDef, value: AV | None) -> None:
    """A write that sets the vector attribute to a wrong value is refused
    (doc: wrong dimensions, "Invalid parameter type" for a wrong type)."""
    if value is None or ("NULL" in value):
        return
    if "L" not in value:
        raise invalid(
            f"Invalid parameter type for vector attribute {idx.attribute}: expected a list"
        )
    for i, el in enumerate(value["L"]):
        if not isinstance(el, dict) or "N" not in el:
            raise invalid(
                f"Invalid parameter type for vector attribute {idx.attribute} "
                f"at element {i}: expected a number"
            )
    if len(value["L"]) != idx.dimensions:
        raise invalid(
            f"Vector attribute {idx.attribute} has {len(value['L'])} dimensions; "
            f"the vector index {idx.name} expects {idx.dimensions}"
        )  # assumed text


# --- the search condition ------------------------------------------------------------

_TOKEN = re.compile(r"\s*(<=|>=|<>|=|<|>|\(|\)|,|#?[A-Za-z_][\w.]*|:[\w]+)")
_COMPARATORS = {"<", ">", "<=", ">=", "<>"}
_WORDS = {"BETWEEN", "IN"}


def parse_condition(
    text: str | None, names: dict[str, str], values: dict[str, AV], idx: IndexDef
) -> dict[str, AV]:
    """``a = :x AND b = :y`` -> {attribute: value}. Only equality on the
    search schema's attributes (doc); the HASH one must be given (doc)."""
    if not text:
        if idx.hash_attr:
            raise invalid(
                "SearchConditionExpression must be provided when SearchSchema has a HASH key"
            )
        return {}
    tokens: list[str] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise invalid(f"Invalid SearchConditionExpression: syntax error at {pos}")
        tokens.append(m.group(1))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    if any(t in _COMPARATORS or t.upper() in _WORDS or t == "(" for t in tokens):
        raise invalid("Invalid comparator used in SearchConditionExpression")  # doc, verbatim
    out: dict[str, AV] = {}
    i = 0
    while i < len(tokens):
        if i + 2 >= len(tokens) or tokens[i + 1] != "=":
            raise invalid("Invalid SearchConditionExpression: expected <attribute> = <value>")
        name, ph = tokens[i], tokens[i + 2]
        attr = names.get(name) if name.startswith("#") else name
        if attr is None:
            raise invalid(
                f"An expression attribute name used in the document path is not defined; attribute name: {name}"
            )
        if not ph.startswith(":") or ph not in values:
            raise invalid(
                f"An expression attribute value used in expression is not defined; attribute value: {ph}"
            )
        if attr != idx.hash_attr and attr not in idx.filters:
            raise invalid(  # assumed text
                f"Attribute {attr} is not in the SearchSchema of vector index {idx.name}"
            )
        out[attr] = values[ph]
        i += 3
        if i < len(tokens):
            if tokens[i].upper() != "AND":  # assumed: OR / NOT are refused too
                raise invalid("Only AND may join conditions in SearchConditionExpression")
            i += 1
    if idx.hash_attr and idx.hash_attr not in out:
        raise invalid("SearchConditionExpression must be provided when SearchSchema has a HASH key")
    return out


def same_value(a: AV | None, b: AV) -> bool:
    if a is None:
        return False
    if "N" in a and "N" in b:
        try:
            return Decimal(a["N"]) == Decimal(b["N"])
        except InvalidOperation:
            return False
    return a == b


# --- scores, projections, bytes ---------------------------------------------------------


def score(distance: str, q: np.ndarray, v: np.ndarray) -> float:
    """doc: COSINE 0 (identical) to 2 (opposite), EUCLIDEAN the distance
    (both smallest first), DOT_PRODUCT the dot product (largest first)."""
    if distance == "DOT_PRODUCT":
        return float(np.dot(q, v))
    if distance == "EUCLIDEAN":
        return float(np.linalg.norm(q - v))
    nq, nv = float(np.linalg.norm(q)), float(np.linalg.norm(v))
    cos = float(np.dot(q, v)) / (nq * nv) if nq > 0 and nv > 0 else 0.0
    return 1.0 - cos


def best_first(distance: str) -> int:
    return -1 if distance == "DOT_PRODUCT" else 1


def project(entry: Item, idx: IndexDef, expression: str | None, names: dict[str, str]) -> Item:
    """The attributes a hit returns. Assumed: without ProjectionExpression,
    every projected attribute but the vector; with one, the named attributes,
    each of which must be projected (doc: only projected attributes can be
    retrieved)."""
    if not expression:
        return {k: v for k, v in entry.items() if k != idx.attribute}
    wanted = []
    for part in expression.split(","):
        part = part.strip()
        wanted.append(names.get(part, part) if part.startswith("#") else part)
    allowed = None if idx.projection == "ALL" else idx.projected()
    for w in wanted:
        if allowed is not None and w not in allowed:
            raise invalid(f"Attribute {w} is not projected into vector index {idx.name}")
    return {w: entry[w] for w in wanted if w in entry}


def value_size(v: AV) -> int:
    """DynamoDB's item-size rules, near enough: strings and binaries by their
    bytes, numbers by their digits, lists and maps 3 bytes plus 1 an element."""
    if "S" in v:
        return len(v["S"].encode())
    if "N" in v:
        return 1 + math.ceil(len(v["N"].lstrip("-").replace(".", "")) / 2)
    if "B" in v:
        return len(base64.b64decode(v["B"]))
    if "BOOL" in v or "NULL" in v:
        return 1
    if "L" in v:
        return 3 + sum(1 + value_size(e) for e in v["L"])
    if "M" in v:
        return 3 + sum(1 + len(k.encode()) + value_size(e) for k, e in v["M"].items())
    for kind in ("SS", "NS", "BS"):
        if kind in v:
            return sum(len(json.dumps(e)) for e in v[kind])
    return 0


def entry_bytes(entry: Item, idx: IndexDef) -> int:
    """Assumed metering of one index entry: the vector at 4 bytes a
    dimension (f32, doc) plus the other projected attributes by the item
    size rules."""
    rest = sum(len(k.encode()) + value_size(v) for k, v in entry.items() if k != idx.attribute)
    return 4 * idx.dimensions + rest
