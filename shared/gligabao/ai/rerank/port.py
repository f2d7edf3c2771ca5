"""The reranker port: one request scores every document against the query.

A reranker (a cross-encoder) reads the question and each candidate together,
which finds relevance an embedding's cosine misses. The query pipeline calls
it at most once per request, through the Meter (records/meter.py), which
times it, prices it and records it as an inference of stage ``rerank``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ...errors import UpstreamError
from ...text import estimate_tokens

# Bedrock bills a rerank by search units: one per started 100 documents
# (docs.aws.amazon.com/bedrock/latest/userguide/rerank-pricing.html); Cohere's
# API counts the same way.
DOCUMENTS_PER_SEARCH_UNIT = 100


@dataclass(frozen=True)
class RerankRequest:
    query: str
    documents: list[str]


@dataclass(frozen=True)
class Ranked:
    index: int  # the document's position in the request
    score: float  # the model's relevance, higher is more relevant


@dataclass(frozen=True)
class RerankReply:
    results: list[Ranked]  # best first; a document left out was not ranked
    model: str
    input_tokens: int  # as the server counted them, else estimated
    search_units: int  # what the call is billed by


class Reranker(Protocol):
    provider: str  # "bedrock" or "http": recorded with each inference
    model: str

    def rerank(self, request: RerankRequest) -> RerankReply:
        """One request. Raises UpstreamError on an API error (after the
        SDK's retries) or a malformed reply; NotConfigured without credentials."""


def search_units(documents: int) -> int:
    return max(1, -(-documents // DOCUMENTS_PER_SEARCH_UNIT))


def estimated_tokens(query: str, documents: list[str]) -> int:
    """For a server that counts none: a cross-encoder reads the query with
    every document."""
    q = estimate_tokens(query)
    return sum(q + estimate_tokens(d) for d in documents)


def ranked(raw: object, documents: int, score_key: str, who: str) -> list[Ranked]:
    """The ``results`` list of a rerank reply, checked: every entry an
    in-range index (once) with a numeric score. Anything else is a malformed
    reply (502), never a silently wrong order."""
    if not isinstance(raw, list):
        raise UpstreamError(f"{who} reply is malformed: no results list")
    out: list[Ranked] = []
    seen: set[int] = set()
    for item in raw:
        index = item.get("index") if isinstance(item, dict) else None
        score = item.get(score_key) if isinstance(item, dict) else None
        if (
            not isinstance(index, int)
            or isinstance(index, bool)
            or not 0 <= index < documents
            or index in seen
            or not isinstance(score, int | float)
            or isinstance(score, bool)
        ):
            raise UpstreamError(
                f"{who} reply is malformed: a result without a valid index or score"
            )
        seen.add(index)
        out.append(Ranked(index, float(score)))
    out.sort(key=lambda r: (-r.score, r.index))
    return out
