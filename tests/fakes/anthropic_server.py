"""A fake of Anthropic's Messages API (``POST /v1/messages``) for the real
``anthropic`` SDK over loopback HTTP.

The product's system prompts carry ``[stage: NAME]``; the fake answers per
stage from a FIFO of scripted replies, else from a per-stage default::

    with FakeAnthropic() as fake:
        fake.script("extract", {"entities": [...], "edges": []})
        fake.fail_next(529, retry_after=0.001)        # the SDK retries by itself
        client = anthropic.Anthropic(api_key="x", base_url=fake.url)
        client.messages.create(model="m", max_tokens=100,
                               system="[stage: extract] ...", messages=[...])
        assert fake.calls("extract") == 2

Only non-streaming ``messages.create`` is implemented (plus
``/v1/messages/count_tokens``).
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

from ._server import (
    FakeServer,
    FaultQueue,
    RecordedRequest,
    Response,
    estimate_tokens,
    iter_text_blocks,
    new_id,
)

STAGES: tuple[str, ...] = ("extract", "invalidate", "summarize", "query", "detect_geo")
STAGE_RE = re.compile(r"\[stage:\s*([A-Za-z0-9_\-]+)\s*\]")

#: A scripted reply: the text itself, a JSON value (sent as JSON text), or a
#: callable taking the request body and returning one of those.
ReplyValue = str | dict[str, Any] | list[Any]
Reply = ReplyValue | Callable[[dict[str, Any]], ReplyValue]

DEFAULT_REPLIES: dict[str, ReplyValue] = {
    "extract": {"entities": [], "edges": []},
    "invalidate": {"invalidated": []},
    "summarize": {"summary": "summary of the text"},
    "query": {"answer": "ok", "entities": [], "edges": [], "passages": []},
    "detect_geo": {"places": []},
}

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"


def error_type_for(status: int) -> str:
    return ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def error_body(status: int, message: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": error_type_for(status), "message": message},
        "request_id": new_id("req_"),
    }


def find_stage(system: Any) -> str | None:
    """The NAME of the first ``[stage: NAME]`` in a ``system`` value (a string
    or a list of text blocks)."""
    for text in iter_text_blocks(system):
        m = STAGE_RE.search(text)
        if m:
            return m.group(1)
    return None


def render_reply(value: ReplyValue) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@dataclass
class _Failure:
    status: int
    body: dict[str, Any] | str | None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Truncation:
    cut: bool


@dataclass
class _Empty:
    empty_text: bool


class FakeAnthropic(FakeServer):
    """The fake Messages API. Every knob is thread-safe; see the module doc."""

    name = "fake-anthropic"

    def __init__(self, *, check_headers: bool = True) -> None:
        super().__init__()
        #: Answer 401/400 when ``x-api-key``/``anthropic-version`` are missing,
        #: as the real API does (the SDK always sends both).
        self.check_headers = check_headers
        self._script_lock = threading.Lock()
        self._scripts: dict[str, deque[Reply]] = {}
        self._defaults: dict[str, Reply] = dict(DEFAULT_REPLIES)
        self._failures: FaultQueue[_Failure] = FaultQueue()
        self._truncations: FaultQueue[_Truncation] = FaultQueue()
        self._empties: FaultQueue[_Empty] = FaultQueue()
        #: The thinking text of replies to requests with thinking enabled.
        self.thinking_text = "Thinking about the {stage} request before answering."

    # -- scripting ---------------------------------------------------------

    def script(self, stage: str, reply: Reply, *, times: int = 1) -> Self:
        """Queue ``reply`` (``times`` copies) for the next request(s) of ``stage``.
        Queued replies are consumed FIFO, each by one successful answer (faulted
        requests consume nothing); when the queue is empty the stage's default
        answers."""
        with self._script_lock:
            q = self._scripts.setdefault(stage, deque())
            for _ in range(times):
                q.append(reply)
        return self

    def default(self, stage: str, reply: Reply | None) -> Self:
        """Set the reply used when ``stage``'s queue is empty (None: no default,
        an unscripted request of that stage then gets a 400)."""
        with self._script_lock:
            if reply is None:
                self._defaults.pop(stage, None)
            else:
                self._defaults[stage] = reply
        return self

    def pending(self, stage: str | None = None) -> int:
        """Scripted replies not consumed yet (of ``stage``, or of all stages)."""
        with self._script_lock:
            if stage is not None:
                return len(self._scripts.get(stage, ()))
            return sum(len(q) for q in self._scripts.values())

    def assert_all_consumed(self) -> None:
        with self._script_lock:
            left = {s: len(q) for s, q in self._scripts.items() if q}
        if left:
            raise AssertionError(f"{self.name}: scripted replies never requested: {left}")

    # -- faults --------------------------------------------------------------

    def fail_next(
        self,
        status: int = 500,
        body: dict[str, Any] | str | None = None,
        retry_after: float | str | None = None,
        times: int = 1,
        stage: str | None = None,
        *,
        retry_after_ms: float | None = None,
        headers: dict[str, str] | None = None,
    ) -> Self:
        """Answer the next ``times`` requests (of ``stage``, or any) with an
        Anthropic error: ``{"type": "error", "error": {"type": ..., "message": ...}}``
        (429 rate_limit_error, 529 overloaded_error, 500 api_error, ...).

        ``body``: a str replaces the message, a dict replaces the whole JSON body.
        ``retry_after`` sets the ``retry-after`` header (seconds). NB: the SDK
        ignores ``retry-after: 0`` and backs off 0.5-1 s, 1-2 s, ...; use a small
        positive value (``retry_after=0.001``) for fast retries.
        ``retry_after_ms`` sets ``retry-after-ms`` (which the SDK reads first).
        """
        hdrs = dict(headers or {})
        if retry_after is not None:
            hdrs["retry-after"] = str(retry_after)
        if retry_after_ms is not None:
            hdrs["retry-after-ms"] = str(retry_after_ms)
        self._failures.add(_Failure(status, body, hdrs), stage=stage, times=times)
        return self

    def truncate_next(self, stage: str | None = None, *, times: int = 1, cut: bool = True) -> Self:
        """The next reply(ies) end with ``stop_reason: "max_tokens"`` and
        ``output_tokens`` equal to the request's ``max_tokens``. With ``cut``
        the text is cut to its first half (a JSON reply becomes invalid)."""
        self._truncations.add(_Truncation(cut), stage=stage, times=times)
        return self

    def delay_next(self, seconds: float, stage: str | None = None, *, times: int = 1) -> Self:
        """Sleep ``seconds`` before answering the next request(s). If the client
        timed out and hung up meanwhile, the request is dropped and consumes no
        scripted reply (``status`` 0 in the record)."""
        self._delays.add(seconds, stage=stage, times=times)
        return self

    def empty_next(
        self, stage: str | None = None, *, times: int = 1, empty_text: bool = False
    ) -> Self:
        """The next reply(ies) have ``content: []`` (or, with ``empty_text``, one
        text block with ``""``). Consumes the scripted reply it replaces."""
        self._empties.add(_Empty(empty_text), stage=stage, times=times)
        return self

    def reset(self) -> None:
        """Forget requests, scripts, faults; restore the default defaults."""
        super().reset()
        with self._script_lock:
            self._scripts.clear()
            self._defaults = dict(DEFAULT_REPLIES)
        self._failures.clear()
        self._truncations.clear()
        self._empties.clear()

    # -- inspection ----------------------------------------------------------

    def requests_for(self, stage: str) -> list[RecordedRequest]:
        """The ``/v1/messages`` request bodies of ``stage`` (retries included)."""
        return [r for r in self.requests if r.path == MESSAGES_PATH and r.stage == stage]

    def calls(self, stage: str | None = None) -> int:
        """How many ``/v1/messages`` requests arrived (of ``stage``), counting
        faulted ones and the SDK's retries."""
        return sum(
            1
            for r in self.requests
            if r.path == MESSAGES_PATH and (stage is None or r.stage == stage)
        )

    def env(self, api_key: str = "test-anthropic-key") -> dict[str, str]:
        """Environment variables that point the SDK (and the product) here."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": api_key}

    # -- serving -------------------------------------------------------------

    def _classify(self, req: RecordedRequest) -> None:
        req.stage = find_stage(req.get("system"))

    def _bad_request(self, status: int, message: str) -> Response:
        return Response(status, error_body(status, message))

    def _handle(self, req: RecordedRequest) -> Response:
        if req.method != "POST" or req.path not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
            return self._bad_request(404, f"{req.method} {req.path}: not found")
        if self.check_headers:
            if not req.headers.get("x-api-key") and not req.headers.get("authorization"):
                return self._bad_request(401, "x-api-key header is required")
            if not req.headers.get("anthropic-version"):
                return self._bad_request(400, "anthropic-version: header is required")
        invalid = _validate(req)
        if invalid:
            return self._bad_request(400, invalid)
        if req.path == COUNT_TOKENS_PATH:
            return Response(200, {"input_tokens": _input_tokens(req)})

        failure = self._failures.take(req.stage)
        if failure is not None:
            return self._failure_response(failure)

        stage = req.stage
        if stage is None:
            return self._bad_request(
                400, f"{self.name}: no [stage: NAME] marker in the system prompt"
            )
        reply = self._next_reply(stage)
        if reply is None:
            return self._bad_request(
                400, f"{self.name}: no scripted reply and no default for stage {stage!r}"
            )
        value = reply(req.body) if callable(reply) else reply
        tool = forced_tool(req)
        if tool is not None and isinstance(value, dict):
            return self._message(req, stage, render_reply(value), tool=tool, tool_input=value)
        # A text scripted for a forced tool is what a provider that does not
        # enforce the schema sends: the product must still cope with it.
        return self._message(req, stage, render_reply(value))

    def _next_reply(self, stage: str) -> Reply | None:
        with self._script_lock:
            q = self._scripts.get(stage)
            if q:
                return q.popleft()
            return self._defaults.get(stage)

    def _failure_response(self, failure: _Failure) -> Response:
        if isinstance(failure.body, dict):
            body = failure.body
        else:
            message = failure.body or f"fake {error_type_for(failure.status)} ({failure.status})"
            body = error_body(failure.status, message)
        headers = {"request-id": new_id("req_"), **failure.headers}
        return Response(failure.status, body, headers)

    def _message(
        self,
        req: RecordedRequest,
        stage: str,
        text: str,
        *,
        tool: str | None = None,
        tool_input: dict[str, Any] | None = None,
    ) -> Response:
        content: list[dict[str, Any]] = []
        output_tokens = 0
        thinking_tokens = 0
        thinking = req.get("thinking")
        if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive"):
            shown = "" if thinking.get("display") == "omitted" else self.thinking_text
            shown = shown.format(stage=stage)
            content.append({"type": "thinking", "thinking": shown, "signature": "sig"})
            thinking_tokens = estimate_tokens(self.thinking_text.format(stage=stage))
            output_tokens += thinking_tokens

        stop_reason = "end_turn"
        empty = self._empties.take(stage)
        truncation = self._truncations.take(stage)
        if empty is not None:
            if empty.empty_text:
                content.append({"type": "text", "text": ""})
            output_tokens += 1
        else:
            if truncation is not None and truncation.cut:
                text = text[: len(text) // 2]
            if tool is not None and truncation is None:
                content.append(
                    {"type": "tool_use", "id": new_id("toolu_"), "name": tool, "input": tool_input}
                )
                stop_reason = "tool_use"
            else:
                content.append({"type": "text", "text": text})
            output_tokens += estimate_tokens(text)
        if truncation is not None:
            stop_reason = "max_tokens"
            output_tokens = max(output_tokens, int(req.get("max_tokens") or 1))

        usage: dict[str, Any] = {"input_tokens": _input_tokens(req), "output_tokens": output_tokens}
        if thinking_tokens:
            usage["output_tokens_details"] = {"thinking_tokens": thinking_tokens}
        body = {
            "id": new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": req.get("model"),
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        return Response(200, body, {"request-id": new_id("req_")})


def _input_tokens(req: RecordedRequest) -> int:
    parts = list(iter_text_blocks(req.get("system")))
    for message in req.get("messages") or []:
        if isinstance(message, dict):
            parts.extend(iter_text_blocks(message.get("content")))
    return estimate_tokens("\n".join(parts))


def forced_tool(req: RecordedRequest) -> str | None:
    """The name of the tool a request forces (``tool_choice`` of type
    ``tool``), when it is among its ``tools``."""
    choice = req.get("tool_choice")
    if not isinstance(choice, dict) or choice.get("type") != "tool":
        return None
    names = {t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)}
    name = choice.get("name")
    return name if isinstance(name, str) and name in names else None


def _validate(req: RecordedRequest) -> str | None:
    """The real API's 400s that a product bug could trigger."""
    if req.get("stream"):
        return "fake-anthropic: streaming is not implemented"
    if not isinstance(req.get("model"), str) or not req["model"]:
        return "model: Field required"
    messages = req.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    if req.path == COUNT_TOKENS_PATH:
        return None
    max_tokens = req.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        return "max_tokens: Input should be a positive integer"
    thinking = req.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if max_tokens <= budget:
            return "`max_tokens` must be greater than `thinking.budget_tokens`"
        choice = req.get("tool_choice")
        if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
            return "Thinking may not be enabled when tool_choice forces tool use."
    return _validate_tools(req)


def _validate_tools(req: RecordedRequest) -> str | None:
    tools = req.get("tools")
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            return f"tools.{i}.name: Field required"
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            return f"tools.{i}.input_schema: type must be object"
    choice = req.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool" and forced_tool(req) is None:
        return f"tool_choice: tool {choice.get('name')!r} not found in tools"
    return None
