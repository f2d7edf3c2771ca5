"""Embeddings on Amazon Bedrock through boto3's InvokeModel (SigV4 from the
function's role or the local AWS credentials):

* Amazon Titan Text Embeddings V2 takes one text a request, so a batch goes
  out as concurrent requests;
* Cohere Embed (``cohere.embed-*``) takes up to 96 texts a request and wants
  to know whether it embeds stored texts or a question (``input_type``).

The vector length is the configured dimension (GB_EMBEDDING_DIMENSION): Titan
and Cohere Embed v4 are asked for it; Cohere v3 has only 1024, and a reply of
another length is an upstream error rather than a broken index.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..errors import UpstreamError
from ..text import estimate_tokens
from .bedrock_runtime import invoke, runtime_client
from .port import Embeddings, EmbedKind

COHERE_BATCH = 96  # texts per Cohere request (the model's limit)
COHERE_V3_MAX_CHARS = 2048  # Cohere v3 on Bedrock rejects longer texts
TITAN_CONCURRENCY = 8  # Titan requests in flight for one batch


def is_cohere(model: str) -> bool:
    return "cohere.embed" in model


class BedrockEmbedder:
    provider = "bedrock"

    def __init__(
        self,
        model: str,
        dimension: int,
        region: str,
        *,
        endpoint_url: str = "",
        timeout_s: float = 30.0,
        max_retries: int = 2,
    ) -> None:
        self.model = model
        self._dimension = dimension
        self._region = region
        self._endpoint_url = endpoint_url
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._client: Any = None

    def _sdk(self) -> Any:
        if self._client is None:
            self._client = runtime_client(
                self._region,
                self._endpoint_url,
                self._timeout_s,
                self._max_retries,
                connections=TITAN_CONCURRENCY,
            )
        return self._client

    def embed(self, texts: list[str], kind: EmbedKind) -> Embeddings:
        if not texts:
            return Embeddings([], self.model, 0, 0)
        if is_cohere(self.model):
            batches = [texts[i : i + COHERE_BATCH] for i in range(0, len(texts), COHERE_BATCH)]
            parts = [self._cohere(b, kind) for b in batches]
        elif len(texts) == 1:
            parts = [self._titan(texts[0])]
        else:
            with ThreadPoolExecutor(max_workers=min(len(texts), TITAN_CONCURRENCY)) as pool:
                parts = list(pool.map(self._titan, texts))
        vectors = [v for vecs, _ in parts for v in vecs]
        for v in vectors:
            if len(v) != self._dimension:
                raise UpstreamError(
                    f"{self.model} returned {len(v)} dimensions; the indexes have "
                    f"{self._dimension} (GB_EMBEDDING_DIMENSION)"
                )
        return Embeddings(vectors, self.model, sum(t for _, t in parts), len(parts))

    def _titan(self, text: str) -> tuple[list[list[float]], int]:
        body = {"inputText": text, "dimensions": self._dimension, "normalize": True}
        reply, tokens = self._invoke(body)
        vector = reply.get("embedding")
        if not isinstance(vector, list):
            raise UpstreamError(f"{self.model} reply has no embedding")
        count = reply.get("inputTextTokenCount")
        return [vector], int(count) if isinstance(count, int) else tokens or estimate_tokens(text)

    def _cohere(self, texts: list[str], kind: EmbedKind) -> tuple[list[list[float]], int]:
        v3 = "-v3" in self.model
        body: dict[str, Any] = {
            "texts": [t[:COHERE_V3_MAX_CHARS] for t in texts] if v3 else texts,
            "input_type": "search_query" if kind == "query" else "search_document",
            "embedding_types": ["float"],
            "truncate": "END",
        }
        if not v3:
            body["output_dimension"] = self._dimension
        reply, tokens = self._invoke(body)
        embeddings = reply.get("embeddings")
        if isinstance(embeddings, dict):  # asked by type: {"float": [...]}
            embeddings = embeddings.get("float")
        if not isinstance(embeddings, list) or len(embeddings) != len(texts):
            raise UpstreamError(f"{self.model} reply has the wrong number of vectors")
        return embeddings, tokens or sum(estimate_tokens(t) for t in texts)

    def _invoke(self, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
        return invoke(self._sdk(), self.model, body, "embeddings")
