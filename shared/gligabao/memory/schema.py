"""A dataset's schema (issue 47): the entity types and edge types of its
domain, each with a description and attributes in a subset of JSON Schema
(``string``, ``number``, ``integer``, ``boolean``, a ``string`` of
``format: date-time``, an ``enum`` of strings), edge types with the entity
types they connect. The built-in free types stay for whatever fits none.

``check`` reads a body and returns the schema as stored, or raises
``BadRequest`` (nothing is stored then); the limits below are the documented
ones (docs/api.md#dataset-schemas)."""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import BadRequest

MAX_ENTITY_TYPES = 10
MAX_EDGE_TYPES = 10
MAX_ATTRIBUTES = 10  # per type
MAX_ENUM_VALUES = 50
MAX_DESCRIPTION = 500  # characters
MAX_ENUM_VALUE = 100  # characters
MAX_SCHEMA_BYTES = 16 * 1024  # the body, as JSON

ENTITY_TYPE = re.compile(r"^[A-Z][A-Za-z0-9]{0,63}$")  # Customer
EDGE_TYPE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")  # OWNS_ACCOUNT
ATTRIBUTE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")  # renewal_date
TYPES = ("string", "number", "integer", "boolean")
# Names the graph already gives every entity and fact: not attributes.
RESERVED = frozenset({"id", "name", "type", "description", "created_at", "updated_at"})


def empty() -> dict[str, Any]:
    return {"entity_types": {}, "edge_types": {}}


def check(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("the schema must be a JSON object")
    if len(json.dumps(body, separators=(",", ":")).encode()) > MAX_SCHEMA_BYTES:
        raise BadRequest(f"the schema is larger than {MAX_SCHEMA_BYTES} bytes")
    _only(body, {"entity_types", "edge_types"}, "the schema")
    entities = _mapping(body.get("entity_types", {}), "entity_types")
    edges = _mapping(body.get("edge_types", {}), "edge_types")
    if len(entities) > MAX_ENTITY_TYPES:
        raise BadRequest(f"at most {MAX_ENTITY_TYPES} entity types (got {len(entities)})")
    if len(edges) > MAX_EDGE_TYPES:
        raise BadRequest(f"at most {MAX_EDGE_TYPES} edge types (got {len(edges)})")
    out = empty()
    for name, spec in entities.items():
        if not ENTITY_TYPE.match(name):
            raise BadRequest(f"entity type {name!r}: a name in PascalCase, up to 64 characters")
        out["entity_types"][name] = _type(spec, f"entity type {name!r}", set())
    for name, spec in edges.items():
        if not EDGE_TYPE.match(name):
            raise BadRequest(f"edge type {name!r}: a name in UPPER_SNAKE_CASE, up to 64 characters")
        where = f"edge type {name!r}"
        edge = _type(spec, where, {"source_types", "target_types"})
        for side in ("source_types", "target_types"):
            named = _names(spec.get(side, []), f"{where}: {side}")
            unknown = [t for t in named if t not in out["entity_types"]]
            if unknown:
                raise BadRequest(f"{where}: {side} names unknown entity types {unknown}")
            edge[side] = named
        out["edge_types"][name] = edge
    return out


def _only(obj: dict[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(obj) - allowed)
    if extra:
        raise BadRequest(f"{where}: unknown fields {extra}")


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRequest(f"{where} must be an object of name to definition")
    return value


def _text(value: Any, where: str, limit: int) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise BadRequest(f"{where} must be a string of at most {limit} characters")
    return value


def _names(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRequest(f"{where} must be a list of entity type names")
    return list(dict.fromkeys(value))


def _type(spec: Any, where: str, extra: set[str]) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise BadRequest(f"{where} must be an object")
    _only(spec, {"description", "attributes"} | extra, where)
    attrs = _mapping(spec.get("attributes", {}), f"{where}: attributes")
    if len(attrs) > MAX_ATTRIBUTES:
        raise BadRequest(f"{where}: at most {MAX_ATTRIBUTES} attributes (got {len(attrs)})")
    out: dict[str, Any] = {
        "description": _text(spec.get("description", ""), f"{where}: description", MAX_DESCRIPTION),
        "attributes": {},
    }
    for name, attr in attrs.items():
        if not ATTRIBUTE.match(name) or name in RESERVED:
            raise BadRequest(
                f"{where}: attribute {name!r}: snake_case, up to 64 characters, "
                f"none of {sorted(RESERVED)}"
            )
        out["attributes"][name] = _attribute(attr, f"{where}: attribute {name!r}")
    return out


def _attribute(spec: Any, where: str) -> dict[str, Any]:
    """One attribute: ``type`` (string, number, integer, boolean), or an
    ``enum`` of strings, a string may be ``format: date-time``."""
    if not isinstance(spec, dict):
        raise BadRequest(f"{where} must be an object")
    _only(spec, {"type", "format", "enum", "description"}, where)
    type_ = spec.get("type", "string" if "enum" in spec else None)
    if type_ not in TYPES:
        raise BadRequest(f"{where}: unknown type {type_!r} (one of {', '.join(TYPES)})")
    out: dict[str, Any] = {"type": type_}
    if "format" in spec:
        if spec["format"] != "date-time" or type_ != "string":
            raise BadRequest(f"{where}: the only format is date-time, of a string")
        out["format"] = "date-time"
    if "enum" in spec:
        values = spec["enum"]
        if (
            type_ != "string"
            or not isinstance(values, list)
            or not 1 <= len(values) <= MAX_ENUM_VALUES
            or not all(isinstance(v, str) and 0 < len(v) <= MAX_ENUM_VALUE for v in values)
        ):
            raise BadRequest(
                f"{where}: enum is 1 to {MAX_ENUM_VALUES} strings of at most "
                f"{MAX_ENUM_VALUE} characters"
            )
        out["enum"] = list(dict.fromkeys(values))
    if "description" in spec:
        out["description"] = _text(spec["description"], f"{where}: description", MAX_DESCRIPTION)
    return out
