"""The script as an OpenAI Agents SDK model: its turns as Responses API
output items."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from agents import ModelResponse, Usage
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from scripted import Script, ToolCall


def _text(output: Any) -> str:
    """A function call's output as text: a string, or text parts."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return str(output.get("text", ""))
    return "".join(_text(part) for part in output or [])


def _last_tool_result(items: str | list[Any]) -> str | None:
    last = items[-1] if isinstance(items, list) and items else None
    if isinstance(last, dict) and last.get("type") == "function_call_output":
        return _text(last.get("output"))
    return None


class ScriptedModel(Model):
    def __init__(self, script: Script) -> None:
        self.script = script

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        step = self.script.next(_last_tool_result(input))
        item: ResponseFunctionToolCall | ResponseOutputMessage
        if isinstance(step, ToolCall):
            item = ResponseFunctionToolCall(
                id=f"fc_{uuid.uuid4().hex}",
                call_id=f"call_{uuid.uuid4().hex}",
                name=step.name,
                arguments=json.dumps(step.arguments),
                type="function_call",
                status="completed",
            )
        else:
            text = ResponseOutputText(text=step.template, type="output_text", annotations=[])
            item = ResponseOutputMessage(
                id=f"msg_{uuid.uuid4().hex}",
                role="assistant",
                status="completed",
                type="message",
                content=[text],
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the example runs without streaming")
