"""The AI ports the use cases call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

EmbedKind = Literal["query", "document"]


@dataclass(frozen=True)
class LLMRequest:
    stage: str
    system: str
    user: str
    model: str
    reasoning: str = "none"
    max_tokens: int = 2048
    # The JSON Schema of the object the stage expects back. A provider with a
    # structured-output feature (Anthropic tool use, OpenAI json_schema response
    # format) asks for it; every provider still accepts a JSON text reply.
    json_schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class LLMReply:
    text: str
    model: str
    input_tokens: int
    output_tokens: int
    thinking_tokens: int | None = None


class LLM(Protocol):
    provider: str  # "anthropic", "bedrock", "openai": recorded with each inference

    def complete(self, request: LLMRequest) -> LLMReply:
        """One Messages call. Raises UpstreamError on an API error, an empty
        reply or a reply cut at the token limit; NotConfigured without a key."""


@dataclass(frozen=True)
class Embeddings:
    vectors: list[list[float]]
    model: str
    input_tokens: int
    requests: int = 1


# Inputs per embeddings request (OpenAI's API takes up to 2048): the OpenAI
# embedder sends this many at once, and the meter records one row per batch.
EMBED_BATCH = 512


class Embedder(Protocol):
    model: str
    provider: str  # "openai", "bedrock", "local"

    def embed(self, texts: list[str], kind: EmbedKind) -> Embeddings:
        """One request for all texts (or a few, for very large batches).
        Raises UpstreamError on failure."""
