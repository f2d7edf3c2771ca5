"""The LLM adapter on an OpenAI-compatible Chat Completions API: OpenAI
itself, or a server on the user's side (Ollama, vLLM, LM Studio, LiteLLM) at
GB_LLM_BASE_URL.

A stage that expects an object asks for it with the ``json_schema`` response
format. A server that rejects that format (HTTP 400) is asked once more
without it and, from then on, never with it: its reply is then plain JSON,
which the callers parse tolerantly (fences and prose around it are fine).
"""

from __future__ import annotations

import threading
from typing import Any

from ..errors import NotConfigured, Truncated, UpstreamError, detail_of, failure_kind
from .port import LLMReply, LLMRequest
from .sdk_clients import sdk_client

# Servers without keys (Ollama, a local vLLM) still get one: the SDK wants it.
NO_KEY = "unused"


class OpenAILLM:
    provider = "openai"

    def __init__(
        self, api_key: str, base_url: str = "", *, timeout_s: float = 60.0, max_retries: int = 2
    ) -> None:
        self._api_key = api_key
        self._base_url = base_url
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._client: Any = None
        self._lock = threading.Lock()
        self.schema_supported = True  # until the server rejects the format once

    def _sdk(self) -> Any:
        if not (self._api_key or self._base_url):
            raise NotConfigured(
                "LLM not configured: provider openai needs GB_LLM_API_KEY (or OPENAI_API_KEY), "
                "or GB_LLM_BASE_URL for a server without keys"
            )
        if self._client is None:
            # Lazy: keeps the SDK out of the handlers' cold start.
            self._client = sdk_client(
                "openai",
                "provider openai",
                "OpenAI",
                api_key=self._api_key or NO_KEY,
                base_url=self._base_url or None,
                timeout=self._timeout_s,
                max_retries=self._max_retries,
            )
        return self._client

    def _kwargs(self, request: LLMRequest, with_schema: bool) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.user},
            ],
        }
        # OpenAI's reasoning models take only max_completion_tokens; the
        # compatible servers know max_tokens (some not the newer name).
        limit = "max_tokens" if self._base_url else "max_completion_tokens"
        kwargs[limit] = request.max_tokens
        if request.reasoning != "none":
            kwargs["reasoning_effort"] = request.reasoning
        if with_schema and request.json_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": request.stage, "schema": request.json_schema},
            }
        return kwargs

    def complete(self, request: LLMRequest) -> LLMReply:
        client = self._sdk()
        import openai

        with_schema = self.schema_supported and request.json_schema is not None
        try:
            try:
                resp = client.chat.completions.create(**self._kwargs(request, with_schema))
            except openai.BadRequestError:
                if not with_schema:
                    raise
                resp = client.chat.completions.create(**self._kwargs(request, False))
                with self._lock:  # the plain request worked: the format was the problem
                    self.schema_supported = False
        except openai.APIStatusError as exc:
            raise UpstreamError(f"LLM call failed: HTTP {exc.status_code}") from exc
        except openai.APIError as exc:
            raise UpstreamError(
                f"LLM call failed: {failure_kind(exc)}", detail=detail_of(exc)
            ) from exc
        if not resp.choices:
            raise UpstreamError("LLM reply was empty")
        choice = resp.choices[0]
        usage = resp.usage
        details = getattr(usage, "completion_tokens_details", None)
        thinking = getattr(details, "reasoning_tokens", None)
        reply = LLMReply(
            text=choice.message.content or "",
            model=resp.model or request.model,
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            thinking_tokens=int(thinking) if thinking is not None else None,
        )
        if choice.finish_reason == "length":
            raise Truncated("LLM reply was cut at the token limit", reply)
        if not reply.text.strip():
            raise UpstreamError("LLM reply was empty", reply)
        return reply
