"""The script as a Strands Agents model provider: its turns streamed as the
events a provider yields (Bedrock's ConverseStream shape)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any

from strands.models import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent

from scripted import Script, ToolCall


def _last_tool_result(messages: Messages) -> tuple[str | None, bool]:
    """The text of the newest tool result, if the last message holds one."""
    for block in messages[-1].get("content", []) if messages else []:
        result = block.get("toolResult")
        if result is not None:
            text = "".join(part.get("text", "") for part in result["content"])
            return text, result["status"] == "error"
    return None, False


class ScriptedModel(Model):
    def __init__(self, script: Script) -> None:
        self.script = script

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> dict[str, Any]:
        return {"model_id": "scripted"}

    def structured_output(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError("the script answers in text")

    async def stream(
        self, messages: Messages, *args: Any, **kwargs: Any
    ) -> AsyncIterable[StreamEvent]:
        step = self.script.next(*_last_tool_result(messages))
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(step, ToolCall):
            tool = {"toolUseId": uuid.uuid4().hex, "name": step.name}
            yield {"contentBlockStart": {"start": {"toolUse": tool}}}  # type: ignore[typeddict-item]
            yield {
                "contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(step.arguments)}}}
            }
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockDelta": {"delta": {"text": step.template}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        usage = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
        yield {"metadata": {"usage": usage, "metrics": {"latencyMs": 0}}}  # type: ignore[typeddict-item]
