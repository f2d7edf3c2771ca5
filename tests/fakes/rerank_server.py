"""Fakes of the two rerank APIs, for the real clients over loopback HTTP:

* :class:`FakeRerank`: the common rerank JSON (Cohere, Jina, vLLM, Infinity)
  at ``POST /v1/rerank``, driven by the openai SDK's client;
* :class:`FakeBedrockRerank`: the Bedrock Agents runtime's Rerank
  (``POST /rerank``), driven by boto3's ``bedrock-agent-runtime`` client
  pointed here by its endpoint URL; SigV4 is checked as on
  :class:`~fakes.bedrock_server.FakeBedrock` (this class is one).

Both score a document by :meth:`RerankRules.score`: a rule's score when the
document holds one of the rules' words (``prefer``), else a small share of
the question's words it holds, so a test says which document must win.
"""

from __future__ import annotations

import re
from typing import Any, Self

from ._server import FakeServer, FaultQueue, RecordedRequest, Response, estimate_tokens, new_id
from .bedrock_server import FakeBedrock, bedrock_error

RERANK_PATH = "/v1/rerank"
BEDROCK_RERANK_PATH = "/rerank"
BEDROCK_MODELS = ("cohere.rerank-v3-5:0", "amazon.rerank-v1:0")
MAX_SOURCES = 1000
WORD = re.compile(r"[a-z0-9]+")


class RerankRules:
    """The fakes' relevance: scripted preferences, else word overlap."""

    def __init__(self) -> None:
        self.preferences: list[tuple[str, float]] = []
        self.failures: FaultQueue[int] = FaultQueue()
        self.replies: FaultQueue[Any] = FaultQueue()

    def prefer(self, words: str, score: float) -> None:
        self.preferences.append((words.lower(), score))

    def score(self, query: str, document: str) -> float:
        doc = document.lower()
        for words, score in self.preferences:
            if words in doc:
                return score
        terms = set(WORD.findall(query.lower()))
        held = terms & set(WORD.findall(doc))
        return 0.1 * len(held) / max(1, len(terms))

    def ranked(self, query: str, documents: list[str], limit: int) -> list[tuple[int, float]]:
        scored = [(i, self.score(query, d)) for i, d in enumerate(documents)]
        scored.sort(key=lambda p: (-p[1], p[0]))
        return scored[:limit]

    def clear(self) -> None:
        self.preferences.clear()
        self.failures.clear()
        self.replies.clear()


class _Scripting:
    """The scripting verbs both fakes share (they answer through ``rules``)."""

    rules: RerankRules
    _delays: FaultQueue[float]
    requests: list[RecordedRequest]

    def prefer(self, words: str, score: float = 0.9) -> Self:
        """A document holding ``words`` scores ``score`` (first rule wins)."""
        self.rules.prefer(words, score)
        return self

    def fail_next(self, status: int = 429, *, times: int = 1) -> Self:
        """Answer the next rerank request(s) with this HTTP error."""
        self.rules.failures.add(status, times=times)
        return self

    def reply_next(self, body: Any, *, times: int = 1) -> Self:
        """Answer the next rerank request(s) 200 with this body (a malformed reply)."""
        self.rules.replies.add(body, times=times)
        return self

    def delay_next(self, seconds: float, *, times: int = 1) -> Self:
        """Sleep before answering; a client that hung up meanwhile gets nothing."""
        self._delays.add(seconds, times=times)
        return self

    def reranks(self) -> list[RecordedRequest]:
        """The rerank requests received, faulted ones and retries included."""
        return [r for r in self.requests if r.path == self.path]

    path = RERANK_PATH


class FakeRerank(_Scripting, FakeServer):
    name = "fake-rerank"

    def __init__(self, api_key: str = "test-rerank-key") -> None:
        super().__init__()
        self.api_key = api_key
        self.rules = RerankRules()

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def env(self, model: str = "rerank-test") -> dict[str, str]:
        """Environment that turns the product's http reranker on, here."""
        return {
            "GB_RERANK_PROVIDER": "http",
            "GB_RERANK_BASE_URL": self.base_url,
            "GB_RERANK_MODEL": model,
            "GB_RERANK_API_KEY": self.api_key,
        }

    def reset(self) -> None:
        super().reset()
        self.rules.clear()

    def _handle(self, req: RecordedRequest) -> Response:
        if req.method != "POST" or req.path != RERANK_PATH:
            return self._bad_request(404, f"{req.method} {req.path}")
        if self.api_key and req.headers.get("authorization") != f"Bearer {self.api_key}":
            return self._bad_request(401, "invalid api key")
        status = self.rules.failures.take(None)
        if status is not None:
            return self._bad_request(status, f"fake error {status}")
        query, docs, top_n = req.get("query"), req.get("documents"), req.get("top_n")
        if not isinstance(query, str) or not query:
            return self._bad_request(422, "query: expected a non-empty string")
        if not isinstance(docs, list) or not docs or not all(isinstance(d, str) for d in docs):
            return self._bad_request(422, "documents: expected a non-empty list of strings")
        if top_n is not None and (not isinstance(top_n, int) or top_n < 1):
            return self._bad_request(422, "top_n: expected a positive integer")
        scripted = self.rules.replies.take(None)
        if scripted is not None:
            return Response(200, scripted)
        results = self.rules.ranked(query, docs, top_n or len(docs))
        tokens = sum(estimate_tokens(query) + estimate_tokens(d) for d in docs)
        return Response(
            200,
            {
                "id": new_id("rr-"),
                "model": req.get("model") or "fake-reranker",
                "results": [{"index": i, "relevance_score": s} for i, s in results],
                "usage": {"total_tokens": tokens},
            },
        )


class FakeBedrockRerank(_Scripting, FakeBedrock):
    name = "fake-bedrock-rerank"
    path = BEDROCK_RERANK_PATH

    def __init__(self, *, region: str = "us-west-2") -> None:
        super().__init__(region=region)
        self.rules = RerankRules()

    def env(self, api_key: str = "", model: str = BEDROCK_MODELS[0]) -> dict[str, str]:
        """Environment that turns the product's Bedrock reranker on, here,
        with the fake's credentials."""
        aws = super().env()
        return {
            "GB_RERANK_PROVIDER": "bedrock",
            "GB_RERANK_BASE_URL": self.url,
            "GB_RERANK_REGION": self.region,
            "GB_RERANK_MODEL": model,
            **{k: v for k, v in aws.items() if k.startswith("AWS_") and k != "AWS_REGION"},
        }

    def reset(self) -> None:
        super().reset()
        self.rules.clear()

    def _handle(self, req: RecordedRequest) -> Response:
        if req.path != BEDROCK_RERANK_PATH:
            return super()._handle(req)
        problem = self._check_signature(req)
        if problem:
            return bedrock_error(403, "InvalidSignatureException", problem)
        status = self.rules.failures.take(None)
        if status is not None:
            kind = "ThrottlingException" if status == 429 else "InternalServerException"
            return bedrock_error(status, kind, f"fake {kind}")
        parsed = self._parse(req)
        if isinstance(parsed, str):
            return bedrock_error(400, "ValidationException", parsed)
        query, docs, limit = parsed
        scripted = self.rules.replies.take(None)
        if scripted is not None:
            return Response(200, scripted)
        results = self.rules.ranked(query, docs, limit)
        return Response(200, {"results": [{"index": i, "relevanceScore": s} for i, s in results]})

    def _parse(self, req: RecordedRequest) -> tuple[str, list[str], int] | str:
        """(query, documents, numberOfResults), or what Bedrock would reject."""
        queries = req.get("queries")
        if not (isinstance(queries, list) and len(queries) == 1 and isinstance(queries[0], dict)):
            return "queries: expected exactly one query"
        q = queries[0]
        text = (q.get("textQuery") or {}).get("text") if q.get("type") == "TEXT" else None
        if not isinstance(text, str) or not text:
            return "queries[0]: expected a TEXT query with textQuery.text"
        sources = req.get("sources")
        if not isinstance(sources, list) or not 1 <= len(sources) <= MAX_SOURCES:
            return f"sources: expected 1 to {MAX_SOURCES}"
        docs: list[str] = []
        for s in sources:
            inline = s.get("inlineDocumentSource") if isinstance(s, dict) else None
            if not (s.get("type") == "INLINE" and isinstance(inline, dict)):
                return "sources: expected INLINE sources"
            doc = (inline.get("textDocument") or {}).get("text")
            if inline.get("type") != "TEXT" or not isinstance(doc, str) or not doc:
                return "sources: expected TEXT documents with textDocument.text"
            docs.append(doc)
        config = req.get("rerankingConfiguration") or {}
        bedrock = config.get("bedrockRerankingConfiguration") or {}
        arn = (bedrock.get("modelConfiguration") or {}).get("modelArn")
        expected = [f"arn:aws:bedrock:{self.region}::foundation-model/{m}" for m in BEDROCK_MODELS]
        if config.get("type") != "BEDROCK_RERANKING_MODEL" or arn not in expected:
            return f"rerankingConfiguration: model {arn!r} is not a reranker of {self.region}"
        limit = bedrock.get("numberOfResults", len(docs))
        if not isinstance(limit, int) or not 1 <= limit <= MAX_SOURCES:
            return "numberOfResults: expected 1 to 1000"
        return text, docs, limit
