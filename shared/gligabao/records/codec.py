"""What both record stores share: the inference sort key, the opaque list
cursor, and how a call's steps and result are serialized."""

from __future__ import annotations

import base64
import binascii
import json
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


def encode_cursor(sk: str) -> str:
    raw = json.dumps({"sk": sk}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        sk = data["sk"]
    except (ValueError, TypeError, KeyError, binascii.Error) as exc:
        raise BadRequest("invalid cursor") from exc
    if not isinstance(sk, str) or not sk or len(sk.encode()) > MAX_KEY_BYTES:
        raise BadRequest("invalid cursor")
    return sk


def steps_json(steps: list[Step]) -> str:
    return json.dumps([{"name": s.name, "ms": s.ms, "counts": s.counts} for s in steps])


def steps_from_json(raw: str | None) -> list[Step]:
    out: list[Step] = []
    for s in json.loads(raw or "[]"):
        counts = {str(k): int(v) for k, v in (s.get("counts") or {}).items()}
        out.append(Step(str(s.get("name", "")), float(s.get("ms", 0.0)), counts))
    return out
