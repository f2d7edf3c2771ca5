"""Parse an LLM's JSON reply: code fences and prose around the JSON are
tolerated; anything else is an upstream error."""

from __future__ import annotations

import json
from typing import Any

from ..errors import UpstreamError


def parse_json_object(text: str) -> dict[str, Any]:
    stripped = text.strip()
    try:
        value = json.loads(stripped)
        if isinstance(value, dict):
            return value
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    # Try every "{" in order: the first that decodes to an object wins, which
    # skips prose and ```json fences before it and ignores text after it.
    pos = stripped.find("{")
    while pos != -1:
        try:
            value, _ = decoder.raw_decode(stripped, pos)
            if isinstance(value, dict):
                return value
        except ValueError:
            pass
        pos = stripped.find("{", pos + 1)
    raise UpstreamError("LLM reply has no parsable JSON object")


def as_id(value: Any) -> int | None:
    """A row ID as a model wrote it: an integer, or digits in a string (some
    models quote numbers). Anything else is no ID."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    return None
