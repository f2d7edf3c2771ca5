"""An extracted entity's (and fact's) attributes checked in code against the dataset's
schema (memory/schema.py, issue 47): the model's structured output is a
request, not a guarantee. A value that does not validate (a wrong type, an
enum value not listed, a date-time that is not one, an attribute its type
does not declare) is dropped and counted, never stored."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

MAX_STRING = 1000  # characters of a string attribute (a longer one is dropped)


class _HasAttributes(Protocol):
    type: str
    attributes: dict[str, Any]


class _Named(Protocol):
    norm: str
    type: str


class _Related(Protocol):
    @property
    def relation(self) -> str: ...


class _Stated(Protocol):
    source: str
    target: str
    relation: str
    attributes: dict[str, Any]


def declared_attributes(types: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The declared entity types' attribute specs, by casefolded type name
    (an extracted type is matched without case, as resolution does)."""
    return {
        name.casefold(): dict(spec.get("attributes") or {})
        for name, spec in ((types or {}).get("entity_types") or {}).items()
    }


def keep_valid(extracted: Iterable[_HasAttributes], types: dict[str, Any] | None) -> int:
    """Each entity's attributes reduced, in place, to the values that
    validate against its declared type's specs (normalized: a date-time in
    UTC, an integral number as an int); returns how many were dropped."""
    specs = declared_attributes(types)
    dropped = 0
    for ex in extracted:
        if not ex.attributes:
            continue
        ex.attributes, lost = _checked(ex.attributes, specs.get(ex.type.casefold(), {}))
        dropped += lost
    return dropped


def type_facts(
    extracted: Iterable[_Named], stated: Iterable[_Stated], types: dict[str, Any] | None
) -> tuple[int, int]:
    """Each fact's relation typed, in place, when it names a declared edge
    type (without case) between entity types its declaration allows (none
    listed: any): it takes the declared name (``OWNS_ACCOUNT``), and its
    attributes are reduced to the values that validate. Any other relation
    stays in the free form (snake_case, as extraction wrote it), kept, with
    no attributes. Returns (attributes dropped, declared names left free
    because of their ends)."""
    edge_types = {
        n.casefold(): (n, spec) for n, spec in ((types or {}).get("edge_types") or {}).items()
    }
    kinds = {ex.norm: ex.type.casefold() for ex in extracted}
    dropped = untyped = 0
    for f in stated:
        found = edge_types.get(f.relation.casefold())
        if found is not None and _ends_fit(
            found[1], kinds.get(f.source, ""), kinds.get(f.target, "")
        ):
            f.relation = found[0]
            kept, lost = _checked(f.attributes, found[1].get("attributes") or {})
            f.attributes, dropped = kept, dropped + lost
            continue
        untyped += found is not None
        dropped += len(f.attributes)
        f.attributes = {}
    return dropped, untyped


def relation_filter(
    asked: frozenset[str], schema: dict[str, Any] | None
) -> Callable[[_Related], bool]:
    """Whether a fact is of one of the relations or edge types ``asked``
    (casefolded): its relation without case, except that a free relation
    spelled as a declared edge type (one left free by ``type_facts``, or
    stated before the type was declared) is not of that type."""
    declared = {n.casefold() for n in ((schema or {}).get("edge_types") or {})}

    def keep(e: _Related) -> bool:
        folded = e.relation.casefold()
        return folded in asked and not (folded in declared and e.relation != e.relation.upper())

    return keep


def _ends_fit(spec: dict[str, Any], source: str, target: str) -> bool:
    def fits(side: str, kind: str) -> bool:
        allowed = {t.casefold() for t in spec.get(side) or []}
        return not allowed or kind in allowed

    return fits("source_types", source) and fits("target_types", target)


def _checked(values: dict[str, Any], specs: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The values that validate against their specs (normalized), and how
    many did not (an undeclared name does not)."""
    kept: dict[str, Any] = {}
    for name, value in values.items():
        ok, norm = valid(value, specs[name]) if name in specs else (False, None)
        if ok:
            kept[name] = norm
    return kept, len(values) - len(kept)


def valid(value: Any, spec: dict[str, Any]) -> tuple[bool, Any]:
    """(whether ``value`` fits ``spec``, the value to store)."""
    type_ = spec.get("type", "string")
    if isinstance(value, bool):  # (a bool is an int in Python, never a number here)
        return (type_ == "boolean", value)
    if type_ == "boolean":
        return (False, None)
    if type_ == "integer":
        if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
            return (True, int(value))
        return (False, None)
    if type_ == "number":
        ok = isinstance(value, int | float) and value == value and abs(value) != float("inf")
        return (ok, value if ok else None)
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_STRING:
        return (False, None)
    if "enum" in spec:
        return (value in spec["enum"], value)
    if spec.get("format") == "date-time":
        at = date_time(value)
        return (at is not None, at)
    return (True, value.strip())


def date_time(value: str) -> str | None:
    """An RFC 3339 date-time (a date and a time; without an offset, UTC) as
    ``YYYY-MM-DDTHH:MM:SSZ``; None for anything else (a bare date too)."""
    text = value.strip()
    if len(text) < 16 or text[10] not in "Tt ":
        return None
    try:
        at = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
