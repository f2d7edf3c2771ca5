"""The vectors on DynamoDB's rows, as the vector index reads them: the
attribute's encoding, the cosine a recent row is scored with, and the merge
of the index's hits with the recent rows'."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..port import Hit, SearchRequest


def encode(vector: Sequence[float]) -> dict[str, Any]:
    """A vector as DynamoDB stores it: a list of numbers (f32 precision is
    what the index keeps; 9 significant digits round-trip an f32)."""
    return {"L": [{"N": f"{float(x):.9g}"} for x in vector]}


def decode(value: Any) -> list[float] | None:
    if not isinstance(value, dict) or "L" not in value:
        return None
    try:
        return [float(e["N"]) for e in value["L"]]
    except (KeyError, TypeError, ValueError):
        return None


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na > 0 and nb > 0 else 0.0


def merge_recent(
    indexed: list[Hit], recent: dict[int, float | None], req: SearchRequest
) -> list[Hit]:
    """The index's hits and the recent rows', a recent row's own state first;
    best cosine first (ties by ID), at most k, at least ``min_score``."""
    score = {h.id: h.score for h in indexed if h.id not in recent}
    score.update({i: s for i, s in recent.items() if s is not None})
    order = sorted(score, key=lambda i: (-score[i], i))
    return [Hit(i, score[i]) for i in order if score[i] >= req.min_score][: req.k]
