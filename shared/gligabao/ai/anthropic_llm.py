"""The LLM adapter on Anthropic's Messages API (honours ANTHROPIC_BASE_URL).

The Messages body and the reading of a reply are plain functions over JSON
objects: :mod:`.bedrock_llm` sends the same body to Bedrock's InvokeModel
through boto3, without the anthropic SDK."""

from __future__ import annotations

import json
from typing import Any

from ..errors import (
    NotConfigured,
    Truncated,
    UpstreamError,
    detail_of,
    failure_kind,
)
from .port import LLMReply, LLMRequest
from .sdk_clients import sdk_client

# Extended-thinking budgets per reasoning level. The output limit is raised by
# the budget so that thinking never eats the room the JSON reply needs.
THINKING_BUDGETS = {"none": 0, "low": 1024, "medium": 4096, "high": 16384}

# The one tool a structured request offers and forces: its input is the reply.
REPLY_TOOL = "reply"


def messages_body(request: LLMRequest) -> dict[str, Any]:
    """The Messages request of ``request``, without its model (Anthropic's
    API names it in the body, Bedrock in the path)."""
    budget = THINKING_BUDGETS.get(request.reasoning, 0)
    body: dict[str, Any] = {
        "max_tokens": request.max_tokens + budget,
        "system": request.system,
        "messages": [{"role": "user", "content": request.user}],
    }
    if budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    elif request.json_schema is not None:
        # Structured output through tool use. The API refuses a forced tool
        # with extended thinking: a thinking request asks for JSON text (the
        # system prompt states the shape) instead.
        body["tools"] = [
            {
                "name": REPLY_TOOL,
                "description": f"Give the {request.stage} reply.",
                "input_schema": request.json_schema,
            }
        ]
        body["tool_choice"] = {"type": "tool", "name": REPLY_TOOL}
    return body


def reply_of(msg: dict[str, Any], request: LLMRequest) -> LLMReply:
    """A Messages reply (its JSON object) as the port's reply. Raises
    Truncated when it was cut at the token limit, UpstreamError when it is
    empty or not a Messages reply."""
    content = msg.get("content")
    usage = msg.get("usage")
    if not isinstance(content, list) or not isinstance(usage, dict):
        raise UpstreamError("LLM reply is not a Messages reply")
    blocks = [b for b in content if isinstance(b, dict)]
    # A tool-use block's input is the JSON reply; else the text blocks are.
    tool_inputs = [b.get("input") for b in blocks if b.get("type") == "tool_use"]
    if tool_inputs and isinstance(tool_inputs[0], dict):
        text = json.dumps(tool_inputs[0])
    else:
        text = "".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
    thinking = "".join(str(b.get("thinking") or "") for b in blocks if b.get("type") == "thinking")
    budget = THINKING_BUDGETS.get(request.reasoning, 0)
    reply = LLMReply(
        text=text,
        model=str(msg.get("model") or request.model),
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        # The API folds thinking into output_tokens; the split is estimated.
        thinking_tokens=max(1, len(thinking) // 4) if thinking else (0 if budget else None),
    )
    if msg.get("stop_reason") == "max_tokens":
        raise Truncated("LLM reply was cut at the token limit", reply)
    if not text.strip():
        raise UpstreamError("LLM reply was empty", reply)
    return reply


class AnthropicLLM:
    """Claude through the Messages API, with the anthropic SDK."""

    provider = "anthropic"

    def __init__(self, api_key: str, *, timeout_s: float = 60.0, max_retries: int = 2) -> None:
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._client: Any = None

    def _sdk(self) -> Any:
        if self._client is None:
            if not self._api_key:
                raise NotConfigured(
                    "LLM not configured: provider anthropic needs ANTHROPIC_API_KEY, "
                    "which is not set"
                )
            # Lazy: keeps the SDK out of the handlers' cold start.
            self._client = sdk_client(
                "anthropic",
                "provider anthropic",
                "Anthropic",
                api_key=self._api_key,
                timeout=self._timeout_s,
                max_retries=self._max_retries,
            )
        return self._client

    def complete(self, request: LLMRequest) -> LLMReply:
        client = self._sdk()
        import anthropic

        try:
            msg = client.messages.create(model=request.model, **messages_body(request))
        except anthropic.APIStatusError as exc:
            raise UpstreamError(f"LLM call failed: HTTP {exc.status_code}") from exc
        except anthropic.APIError as exc:
            raise UpstreamError(
                f"LLM call failed: {failure_kind(exc)}", detail=detail_of(exc)
            ) from exc
        return reply_of(msg.to_dict(), request)
