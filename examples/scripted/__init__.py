"""A scripted chat model's turns, the same for every framework: call these
tools in order, then answer with what the last one returned. The frameworks'
adapters (``scripted/*_model.py``) turn each step into their own message
format, so an example runs with no model and no key; swap in a real model
and the agent is the same.

Every step is logged (``Script.log``): what the model was shown (each tool
result, and whether the framework marked it an error) and what it did."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """The final reply: ``{result}`` becomes the last tool result's text."""

    template: str


@dataclass
class Script:
    steps: list[ToolCall | Answer]
    log: list[dict[str, Any]] = field(default_factory=list)
    _next: int = 0

    def next(self, last_result: str | None, is_error: bool = False) -> ToolCall | Answer:
        """The model's next move, shown the result of its previous tool call."""
        if last_result is not None:
            self.log.append({"model_saw": last_result, "error": is_error})
        if self._next >= len(self.steps):
            raise RuntimeError(f"the script has no step {self._next + 1}: {self.log}")
        step = self.steps[self._next]
        self._next += 1
        if isinstance(step, ToolCall):
            self.log.append({"model_called": step.name, "arguments": step.arguments})
            return step
        answer = Answer(step.template.replace("{result}", last_result or ""))
        self.log.append({"model_said": answer.template})
        return answer

    def print_log(self) -> None:
        for event in self.log:
            print(json.dumps(event))


def remember_then_recall(user_id: str) -> list[ToolCall | Answer]:
    """Remember a fact, ask memory about it, answer from what it said."""
    return [
        ToolCall("remember", {"user_id": user_id, "text": "Alice works at Acme."}),
        ToolCall("query", {"user_id": user_id, "query": "Where does Alice work?"}),
        Answer("Memory says: {result}"),
    ]


def main(
    run: Callable[[str, str, Script], Awaitable[str]],
    script: Callable[[str], Script] = lambda user_id: Script(remember_then_recall(user_id)),
) -> None:
    """An example's command line: ``--url`` (the MCP endpoint), ``--user``;
    prints the model's log, one JSON line per step, then the answer."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default="http://127.0.0.1:7878/mcp")
    parser.add_argument("--user", default="example-user")
    args = parser.parse_args()
    the_script = script(args.user)
    try:
        answer = asyncio.run(run(args.url, args.user, the_script))
    finally:
        the_script.print_log()
    print(json.dumps({"answer": answer}))
