"""What both record stores share: the inference sort key, the list cursor,
and how a call's steps and result are serialized."""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import BadRequest
from .model import Inference, Step

MAX_KEY_BYTES = 1024  # DynamoDB's limit for a sort key: a longer one is a ValidationException
# An item holds at most 400 KB: a larger result is left out of the call row
# (the call's status still says it succeeded; the graph holds what it wrote).
MAX_RESULT_BYTES = 300 * 1024


def result_json(result: dict[str, Any] | None) -> str | None:
    if result is None:
        return None
    raw = json.dumps(result, separators=(",", ":"))
    return raw if len(raw.encode()) <= MAX_RESULT_BYTES else None


def inference_sk(inf: Inference) -> str:
    return f"{inf.created_at}#{inf.id}"


# A page of inferences ends at a cursor: "i", then the last row's sort key
# (created_at by clock.fmt, 32 hex digits of inference_id) with "_" for "#",
# URL-safe. Every string of this shape (the JSON Schema pattern of the
# parameter too: api/params.py) is a position both stores accept: SQLite
# compares it, DynamoDB takes it as ExclusiveStartKey (a string sort key of
# 53 bytes, and the Query has no condition on the sort key that it could
# fall outside of).
INFERENCE_CURSOR = r"^i[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z_[0-9a-f]{32}$"
INFERENCE_CURSOR_CHARS = 54
_CURSOR = re.compile(INFERENCE_CURSOR)


def encode_cursor(sk: str) -> str:
    created_at, _, row_id = sk.rpartition("#")
    return f"i{created_at}_{row_id}"


def decode_cursor(cursor: str) -> str:
    """The sort key a cursor names; 400 for anything else."""
    if not _CURSOR.fullmatch(cursor):
        raise BadRequest("cursor: not a cursor of this listing")
    created_at, _, row_id = cursor[1:].rpartition("_")
    return f"{created_at}#{row_id}"


def steps_json(steps: list[Step]) -> str:
    return json.dumps([{"name": s.name, "ms": s.ms, "counts": s.counts} for s in steps])


def steps_from_json(raw: str | None) -> list[Step]:
    out: list[Step] = []
    for s in json.loads(raw or "[]"):
        counts = {str(k): int(v) for k, v in (s.get("counts") or {}).items()}
        out.append(Step(str(s.get("name", "")), float(s.get("ms", 0.0)), counts))
    return out
