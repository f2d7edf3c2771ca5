"""The script as a LangChain chat model (what a LangGraph agent calls)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict

from scripted import Script, ToolCall


class ScriptedChatModel(BaseChatModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    script: Script

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self  # the script already knows which tools it calls

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        last = messages[-1] if messages else None
        if isinstance(last, ToolMessage):
            step = self.script.next(last.text, is_error=last.status == "error")
        else:
            step = self.script.next(None)
        if isinstance(step, ToolCall):
            call = {"name": step.name, "args": step.arguments, "id": uuid.uuid4().hex}
            message = AIMessage(content="", tool_calls=[call])
        else:
            message = AIMessage(content=step.template)
        return ChatResult(generations=[ChatGeneration(message=message)])
