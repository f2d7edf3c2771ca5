"""What `gligabao serve` prints when it starts: where the data is, which
provider and model answer each stage, the thresholds in use, the reranker."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..vectors.knn import EXACT_UP_TO

if TYPE_CHECKING:
    from ..config import Settings

# The LLM stages, in the order a call runs them (the banner lists them).
STAGES = ("extract", "invalidate", "summarize", "query", "detect_geo")


def describe() -> list[str]:
    """The banner's lines, from the settings."""
    from ..config import settings

    cfg = settings()
    db = (
        f"SQLite file {os.path.abspath(cfg.data_path)} (graph, vectors, records)"
        if cfg.store == "sqlite"
        else f"DynamoDB at {cfg.dynamodb_endpoint or 'AWS'}"
    )
    # Past EXACT_UP_TO rows of a kind the SQLite store's search is approximate
    # (vectors/knn.py): say so.
    beyond = "then a one-bit first pass rescored exactly"
    if cfg.opensearch_url:
        vectors = f"OpenSearch at {cfg.opensearch_url}"
    elif cfg.store == "sqlite":
        vectors = (
            f"in the SQLite file (cosine: exact up to {EXACT_UP_TO:,} rows of a kind, {beyond})"
        )
    else:
        vectors = "in-process vector index (exact cosine, not persisted)"
    queue = (
        f"SQS queue {cfg.remember_queue_url}"
        if cfg.remember_queue_url
        else "in-process thread pool (Prefer: respond-async)"
    )
    return [
        f"  storage:    {db}",
        f"  vectors:    {vectors}",
        *describe_models(cfg),
        f"  geo:        {'on' if cfg.geo else 'off'}",
        f"  async:      {queue}",
    ]


def describe_models(cfg: Settings) -> list[str]:
    """Which provider and model answer each stage, and the thresholds in use."""
    bedrock_at = cfg.bedrock_endpoint_url or f"bedrock-runtime.{cfg.region}.amazonaws.com"
    llm_at = {
        "anthropic": cfg.anthropic_base_url or "api.anthropic.com",
        "bedrock": bedrock_at,
        "openai": cfg.llm_base_url or "api.openai.com",
    }[cfg.llm_provider]
    # Where the embeddings are computed: a remote endpoint, or this process.
    emb_where = {
        "local": "in this process",
        "bedrock": f"at {bedrock_at}",
        "openai": f"at {cfg.openai_base_url or 'api.openai.com'}",
    }[cfg.embedder]
    stages = ", ".join(STAGES if cfg.geo else [s for s in STAGES if s != "detect_geo"])
    llm = (
        f"{cfg.llm_provider} {cfg.llm_model} at {llm_at} answers {stages} "
        "(a call may name other models)"
        if cfg.llm_configured
        else f"{cfg.llm_missing}; LLM calls answer 503"
    )
    if cfg.resolve_threshold > 1.0:
        resolve = "by words only"
    else:
        resolve = f"from cosine {cfg.resolve_threshold:g}"
    query = "by rank" if cfg.query_threshold <= -1.0 else f"from cosine {cfg.query_threshold:g}"
    return [
        f"  llm:        {llm}",
        f"  embeddings: {cfg.embedder} {cfg.embedding_model} ({cfg.embedding_dimension} dims) "
        f"{emb_where} embeds stored texts, names and questions",
        f"  thresholds: name candidates {resolve}, query matches cut {query}: "
        f"{cfg.thresholds_source}",
        f"  rerank:     {describe_reranker(cfg)}",
    ]


def describe_reranker(cfg: Settings) -> str:
    if cfg.rerank_provider == "none":
        return "off (GB_RERANK_PROVIDER)"
    region = cfg.rerank_region or cfg.region
    at = cfg.rerank_base_url or (
        f"bedrock-agent-runtime.{region}.amazonaws.com" if cfg.rerank_provider == "bedrock" else ""
    )
    return (
        f"{cfg.rerank_provider} {cfg.rerank_model or '(the server default)'} at {at} "
        f"orders the best {cfg.rerank_candidates} facts and passages of each query"
    )
