"""One LLM call whose reply must be a JSON object: the call every stage that
asks the model for data makes (extraction, chunk and entity and session
summaries, invalidation), in a module of its own so that a caller needs
neither extraction nor its imports."""

from __future__ import annotations

from typing import Any

from ..ai import prompts
from ..ai.jsonreply import parse_json_object
from ..ai.port import LLMRequest
from ..errors import UpstreamError
from ..records.meter import Meter
from .options import StageOptions


def llm_json(
    meter: Meter,
    opts: StageOptions,
    stage: str,
    system: str,
    user: str,
    max_tokens: int = 4096,
    schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One LLM call whose reply must be a JSON object (a rejected reply is
    metered as such, then UpstreamError). ``schema``: the reply's, when not
    the stage's usual one (``prompts.SCHEMAS``)."""
    reply = meter.complete(
        LLMRequest(
            stage,
            system,
            user,
            opts.model(stage),
            opts.level(stage),
            max_tokens,
            schema or prompts.SCHEMAS.get(stage),
        )
    )
    try:
        return parse_json_object(reply.text)
    except UpstreamError:
        meter.reject(stage, "unparsable reply")
        raise
