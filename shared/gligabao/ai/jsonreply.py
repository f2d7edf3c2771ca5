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
