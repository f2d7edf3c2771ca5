"""The LLM adapter on Anthropic's Messages API (honours ANTHROPIC_BASE_URL)."""

from __future__ import annotations

import json
from typing import Any

from ..errors import NotConfigured, UpstreamError
from .port import LLMReply, LLMRequest

# Extended-thinking budgets per reasoning level. The output limit is raised by
# the budget so that thinking never eats the room the JSON reply needs.
THINKING_BUDGETS = {"none": 0, "low": 1024, "medium": 4096, "high": 16384}

# The one tool a structured request offers and forces: its input is the reply.
REPLY_TOOL = "reply"


class AnthropicLLM:
    """Claude through the Messages API. Subclasses change only the client
    (BedrockLLM: the same Messages calls, signed with SigV4)."""

    provider = "anthropic"

    def __init__(self, api_key: str, *, timeout_s: float = 60.0, max_retries: int = 2) -> None:
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._client: Any = None

    def _new_client(self) -> Any:
        if not self._api_key:
            raise NotConfigured(
                "LLM not configured: provider anthropic needs ANTHROPIC_API_KEY, which is not set"
            )
        import anthropic  # lazy: keeps the SDK out of the handlers' cold start

        return anthropic.Anthropic(
            api_key=self._api_key, timeout=self._timeout_s, max_retries=self._max_retries
        )

    def _sdk(self) -> Any:
        if self._client is None:
            self._client = self._new_client()
        return self._client

    def complete(self, request: LLMRequest) -> LLMReply:
        client = self._sdk()
        import anthropic

        budget = THINKING_BUDGETS.get(request.reasoning, 0)
        kwargs: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens + budget,
            "system": request.system,
            "messages": [{"role": "user", "content": request.user}],
        }
        if budget:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": budget}
        elif request.json_schema is not None:
            # Structured output through tool use. The API refuses a forced
            # tool with extended thinking: a thinking request asks for JSON
            # text (the system prompt states the shape) instead.
            kwargs["tools"] = [
                {
                    "name": REPLY_TOOL,
                    "description": f"Give the {request.stage} reply.",
                    "input_schema": request.json_schema,
                }
            ]
            kwargs["tool_choice"] = {"type": "tool", "name": REPLY_TOOL}
        try:
            msg = client.messages.create(**kwargs)
        except anthropic.APIStatusError as exc:
            raise UpstreamError(f"LLM call failed: HTTP {exc.status_code}") from exc
        except anthropic.APIError as exc:
            raise UpstreamError(f"LLM call failed: {type(exc).__name__}") from exc
        usage = msg.usage
        # A tool-use block's input is the JSON reply; else the text blocks are.
        tool_inputs = [b.input for b in msg.content if b.type == "tool_use"]
        if tool_inputs and isinstance(tool_inputs[0], dict):
            text = json.dumps(tool_inputs[0])
        else:
            text = "".join(getattr(b, "text", "") for b in msg.content if b.type == "text")
        thinking = "".join(getattr(b, "thinking", "") for b in msg.content if b.type == "thinking")
        reply = LLMReply(
            text=text,
            model=msg.model or request.model,
            input_tokens=int(usage.input_tokens or 0),
            output_tokens=int(usage.output_tokens or 0),
            # The API folds thinking into output_tokens; the split is estimated.
            thinking_tokens=max(1, len(thinking) // 4) if thinking else (0 if budget else None),
        )
        if msg.stop_reason == "max_tokens":
            raise UpstreamError("LLM reply was cut at the token limit", reply)
        if not text.strip():
            raise UpstreamError("LLM reply was empty", reply)
        return reply
