"""The rules both graph stores follow, written once: which edge holds its fact's claim,
which claims an update releases, and what a forget puts back.

Each store applies them in its own transaction; the decisions are here."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from ..models import Edge, EdgeChange
from .port import fact_triple


def unique(values: Iterable[Any]) -> list[Any]:
    """The values in their first order, each once."""
    return list(dict.fromkeys(values))


def is_open(e: Edge) -> bool:
    """Live and not ended: the edge that holds its triple's fact claim."""
    return e.expired_at is None and e.invalid_at is None


def claim_of(e: Edge) -> str:
    """The fact claim an open edge holds (``fact_triple`` of its source, relation, target)."""
    return fact_triple(e.source_id, e.relation, e.target_id)


def releases_claim(old: Edge, new: Edge) -> bool:
    """An update that supersedes or ends an open edge frees its triple for a new period."""
    return is_open(old) and not is_open(new)


def undone(change: EdgeChange, was: Edge) -> Edge:
    """The edge as it was before ``change``: what forgetting the text that made the change
    puts back. When it is open again it takes back its fact claim, unless another open edge
    of the same fact holds it; then the store leaves it closed."""
    return replace(was, invalid_at=change.prev_invalid_at, expired_at=change.prev_expired_at)
