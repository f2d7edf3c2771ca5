"""A fake OpenAI-compatible server (what Ollama, vLLM, LM Studio and LiteLLM
serve): the Embeddings API of :class:`FakeOpenAI` plus Chat Completions
(``POST /v1/chat/completions``), for the real ``openai`` SDK over loopback.

Chat replies are scripted per stage (the ``[stage: NAME]`` marker of the
system message), like :class:`FakeAnthropic`'s. Server quirks to test the
client's tolerance:

* ``json_schema=False``: a ``response_format`` of type ``json_schema`` is a
  400, as on servers without structured output;
* ``fence=True``: the JSON comes in a ```json fence after a line of prose.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from typing import Any, Self

from ._server import FaultQueue, RecordedRequest, Response, estimate_tokens, new_id
from .anthropic_server import DEFAULT_REPLIES, Reply, find_stage, render_reply
from .openai_server import FakeOpenAI

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


class FakeOpenAICompatible(FakeOpenAI):
    name = "fake-openai-compatible"

    def __init__(self, dim: int = 64, *, json_schema: bool = True, fence: bool = False) -> None:
        super().__init__(dim)
        self.json_schema = json_schema
        self.fence = fence
        self._script_lock = threading.Lock()
        self._scripts: dict[str, deque[Reply]] = {}
        self._defaults: dict[str, Reply] = dict(DEFAULT_REPLIES)
        self._truncations: FaultQueue[bool] = FaultQueue()

    # -- scripting -------------------------------------------------------------

    def script(self, stage: str, reply: Reply, *, times: int = 1) -> Self:
        with self._script_lock:
            q = self._scripts.setdefault(stage, deque())
            q.extend([reply] * times)
        return self

    def truncate_next(self, stage: str | None = None) -> Self:
        """The next reply ends with ``finish_reason: "length"``."""
        self._truncations.add(True, stage=stage)
        return self

    def reset(self) -> None:
        super().reset()
        with self._script_lock:
            self._scripts.clear()
            self._defaults = dict(DEFAULT_REPLIES)
        self._truncations.clear()

    # -- inspection ------------------------------------------------------------

    def chat_requests(self, stage: str | None = None) -> list[RecordedRequest]:
        """The chat requests received (of ``stage``), faulted ones included."""
        return [
            r for r in self.requests if r.path in CHAT_PATHS and (stage is None or r.stage == stage)
        ]

    # -- serving ---------------------------------------------------------------

    def _classify(self, req: RecordedRequest) -> None:
        if req.path in CHAT_PATHS:
            messages = req.get("messages") or []
            system = [m.get("content") for m in messages if isinstance(m, dict)]
            req.stage = find_stage([s for s in system if isinstance(s, str)])

    def _handle(self, req: RecordedRequest) -> Response:
        if req.path not in CHAT_PATHS:
            return super()._handle(req)
        auth = req.headers.get("authorization", "")
        if not auth.lower().startswith("bearer "):
            return self._bad_request(401, "missing bearer token")
        if not isinstance(req.get("model"), str) or not req["model"]:
            return self._bad_request(400, "model is required")
        messages = req.get("messages")
        if not isinstance(messages, list) or not messages:
            return self._bad_request(400, "messages must be a non-empty list")
        fmt = req.get("response_format")
        if fmt is not None:
            problem = self._check_format(fmt)
            if problem:
                return self._bad_request(400, problem)
        failure = self._failures.take(None)
        if failure is not None:
            return self._failure_response(failure)
        if req.stage is None:
            return self._bad_request(400, "no [stage: NAME] marker in the system message")
        with self._script_lock:
            q = self._scripts.get(req.stage)
            reply = q.popleft() if q else self._defaults.get(req.stage)
        if reply is None:
            return self._bad_request(400, f"no scripted reply for stage {req.stage!r}")
        value = reply(req.body) if callable(reply) else reply
        text = render_reply(value)
        if self.fence:
            text = f"Here is the JSON you asked for:\n```json\n{text}\n```"
        finish = "length" if self._truncations.take(req.stage) else "stop"
        prompt = sum(estimate_tokens(str(m.get("content", ""))) for m in messages)
        completion = estimate_tokens(text)
        body = {
            "id": new_id("chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }
        return Response(200, body)

    def _check_format(self, fmt: Any) -> str | None:
        if not isinstance(fmt, dict) or fmt.get("type") not in (
            "text",
            "json_object",
            "json_schema",
        ):
            return f"invalid response_format {json.dumps(fmt)}"
        if fmt["type"] != "json_schema":
            return None
        if not self.json_schema:
            return "response_format json_schema is not supported by this server"
        spec = fmt.get("json_schema")
        if (
            not isinstance(spec, dict)
            or not spec.get("name")
            or not isinstance(spec.get("schema"), dict)
        ):
            return "response_format.json_schema needs a name and a schema object"
        return None
