"""Reranking on any server that speaks the common rerank JSON: Cohere's and
Jina's APIs, vLLM, Infinity, LiteLLM and the like, at GB_RERANK_BASE_URL.

    POST {base}/rerank  {"model", "query", "documents": [str], "top_n"}
    ->  {"results": [{"index": int, "relevance_score": float}, ...]}

Sent with the openai SDK's client, the HTTP client the OpenAI-compatible
adapters already use: the same timeouts, the bearer key, and its retries of
429, 408, 409 and 5xx with backoff (honouring Retry-After).
"""

from __future__ import annotations

from typing import Any

from ...errors import UpstreamError, detail_of, failure_kind
from ..sdk_clients import sdk_client
from .port import RerankReply, RerankRequest, estimated_tokens, ranked, search_units

# Servers without keys (a self-hosted reranker) still get one: the SDK wants it.
NO_KEY = "unused"


class HttpReranker:
    provider = "http"

    def __init__(
        self,
        base_url: str,
        model: str = "",
        api_key: str = "",
        *,
        timeout_s: float = 10.0,
        max_retries: int = 2,
    ) -> None:
        self.model = model
        self._base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._client: Any = None

    def _sdk(self) -> Any:
        if self._client is None:
            # Lazy: keeps the SDK out of the handlers' cold start.
            self._client = sdk_client(
                "openai",
                "the HTTP reranker",
                "OpenAI",
                api_key=self._api_key or NO_KEY,
                base_url=self._base_url,
                timeout=self._timeout_s,
                max_retries=self._max_retries,
            )
        return self._client

    def rerank(self, request: RerankRequest) -> RerankReply:
        client = self._sdk()
        import openai

        body: dict[str, Any] = {
            "query": request.query,
            "documents": request.documents,
            "top_n": len(request.documents),
        }
        if self.model:  # a server with one model (Infinity, TEI) may want none
            body["model"] = self.model
        try:
            reply = client.post("/rerank", cast_to=object, body=body)
        except openai.APIStatusError as exc:
            raise UpstreamError(f"rerank request failed: HTTP {exc.status_code}") from exc
        except openai.APIError as exc:
            raise UpstreamError(
                f"rerank request failed: {failure_kind(exc)}", detail=detail_of(exc)
            ) from exc
        if not isinstance(reply, dict):
            raise UpstreamError("reranker reply is malformed: not a JSON object")
        who = self.model or "reranker"
        results = ranked(reply.get("results"), len(request.documents), "relevance_score", who)
        docs = request.documents
        return RerankReply(
            results,
            str(reply.get("model") or self.model),
            _tokens(reply) or estimated_tokens(request.query, docs),
            _units(reply) or search_units(len(docs)),
        )


def _billed(reply: dict[str, Any]) -> dict[str, Any]:
    meta = reply.get("meta")
    billed = meta.get("billed_units") if isinstance(meta, dict) else None
    return billed if isinstance(billed, dict) else {}


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _tokens(reply: dict[str, Any]) -> int:
    """The tokens the server counted: ``usage`` (Jina, vLLM) or Cohere's
    ``meta.billed_units``; 0 when it says nothing."""
    usage = reply.get("usage")
    if isinstance(usage, dict):
        counted = _count(usage.get("total_tokens")) or _count(usage.get("prompt_tokens"))
        if counted:
            return counted
    return _count(_billed(reply).get("input_tokens"))


def _units(reply: dict[str, Any]) -> int:
    return _count(_billed(reply).get("search_units"))
