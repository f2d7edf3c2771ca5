"""Builds the adapters from the settings, once per process (a Lambda
container or the local server). Nothing here runs at import time: a handler's
cold start pays only for what its first request uses."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .config import settings

if TYPE_CHECKING:
    from .ai.port import LLM, Embedder
    from .ai.rerank.port import Reranker
    from .api.app import CallServices
    from .events.publisher import Publisher
    from .graph.port import GraphStore
    from .idempotency.port import Idempotency
    from .memory.batch import RememberBatch
    from .memory.notes_hook import NotesHook
    from .memory.query import Query
    from .memory.remember import GeoResolver, Remember
    from .memory.split import Split
    from .memory.summaries import Summarizer
    from .models import DatasetKey
    from .notes.port import NotesStore
    from .queue.port import JobQueue
    from .records.port import RecordStore
    from .sqlite.db import Database
    from .vectors.port import VectorIndex


@lru_cache(maxsize=1)
def tables_configured() -> bool:
    from .dynamodb.admin import configure_tables

    cfg = settings()
    configure_tables(cfg.table_prefix, cfg.dynamodb_endpoint, cfg.region)
    return True


@lru_cache(maxsize=1)
def database() -> Database:
    """The local server's one SQLite file (graph, vectors, records)."""
    from .sqlite.db import Database

    return Database(settings().data_path)


@lru_cache(maxsize=1)
def events() -> Publisher | None:
    """Where committed changes are told (docs/events.md): the webhooks of
    ``GB_WEBHOOK_URL``, the bus of ``GB_EVENT_BUS_NAME``; None: neither."""
    from .events.port import EventSink
    from .events.publisher import Publisher

    cfg = settings()
    sinks: list[EventSink] = []
    if cfg.webhook_url:
        from .events.webhooks.sink import WebhookSink, urls_of

        if not cfg.webhook_secret:
            raise ValueError("GB_WEBHOOK_URL needs GB_WEBHOOK_SECRET (whsec_ + base64)")
        sinks.append(WebhookSink(urls_of(cfg.webhook_url), cfg.webhook_secret))
    if cfg.event_bus_name:
        import boto3
        from botocore.config import Config

        from .events.eventbridge.sink import EventBridgeSink

        # short timeouts, one try: the sink retries the entries itself
        config = Config(connect_timeout=2, read_timeout=5, retries={"max_attempts": 1})
        client = boto3.client("events", region_name=cfg.region, config=config)
        sinks.append(EventBridgeSink(client, cfg.event_bus_name))
    return Publisher(sinks) if sinks else None


def outbox() -> Callable[[list[dict[str, Any]]], bool] | None:
    """What a graph store's outbox is drained into after a commit."""
    pub = events()
    return pub.deliver_bodies if pub is not None else None


@lru_cache(maxsize=1)
def graph_store() -> GraphStore:
    if settings().store == "sqlite":
        from .graph.sqlite.store import SqliteGraphStore

        return SqliteGraphStore(database(), lease_wait_s=settings().lease_wait_s, outbox=outbox())
    from .graph.dynamodb.store import DynamoGraphStore

    tables_configured()
    cfg = settings()
    return DynamoGraphStore(
        lease_s=cfg.lease_s,
        lease_wait_s=cfg.lease_wait_s,
        vectors=cfg.vector_store == "dynamodb",
        outbox=outbox(),
    )


@lru_cache(maxsize=1)
def record_store() -> RecordStore:
    if settings().store == "sqlite":
        from .records.sqlite.store import SqliteRecordStore

        return SqliteRecordStore(database(), settings().records_retention_days or None)
    from .records.dynamodb.store import DynamoRecordStore

    tables_configured()
    return DynamoRecordStore(retention_days=settings().records_retention_days or None)


@lru_cache(maxsize=1)
def vector_index() -> VectorIndex:
    cfg = settings()
    if cfg.vector_store == "dynamodb":
        from .dynamodb import tables
        from .vectors.dynamodb.index import DynamoVectorIndex

        tables_configured()
        names = {m.short_name: m.Meta.table_name for m in tables.ALL_MODELS}  # type: ignore[attr-defined]
        client = tables.EntityRow._get_connection().connection.client
        return DynamoVectorIndex(client, names, cfg.embedding_dimension, lag_s=cfg.vector_lag_s)
    if cfg.opensearch_url:
        from .vectors.opensearch.store import OpenSearchVectorIndex

        return OpenSearchVectorIndex(
            cfg.opensearch_url,
            dimension=cfg.embedding_dimension,
            service=cfg.opensearch_service,
            region=cfg.region,
            index_prefix=cfg.opensearch_index_prefix,
        )
    if cfg.store == "sqlite":
        from .vectors.sqlite.store import SqliteVectorIndex

        return SqliteVectorIndex(database())
    from .vectors.inprocess import MemoryVectorIndex

    return MemoryVectorIndex()


@lru_cache(maxsize=1)
def llm() -> LLM:
    cfg = settings()
    if cfg.llm_provider == "bedrock":
        from .ai.bedrock_llm import BedrockLLM

        return BedrockLLM(
            cfg.region,
            endpoint_url=cfg.bedrock_endpoint_url,
            timeout_s=cfg.llm_timeout_s,
            max_retries=cfg.llm_max_retries,
        )
    if cfg.llm_provider == "openai":
        from .ai.openai_llm import OpenAILLM

        return OpenAILLM(
            cfg.llm_api_key,
            cfg.llm_base_url,
            timeout_s=cfg.llm_timeout_s,
            max_retries=cfg.llm_max_retries,
        )
    from .ai.anthropic_llm import AnthropicLLM

    return AnthropicLLM(
        cfg.anthropic_api_key, timeout_s=cfg.llm_timeout_s, max_retries=cfg.llm_max_retries
    )


@lru_cache(maxsize=1)
def embedder() -> Embedder:
    cfg = settings()
    if cfg.embedder == "local":
        from .ai.embedders import LocalEmbedder

        return LocalEmbedder(cfg.embedding_model)
    if cfg.embedder == "bedrock":
        from .ai.bedrock_embedders import BedrockEmbedder

        return BedrockEmbedder(
            cfg.embedding_model,
            cfg.embedding_dimension,
            cfg.region,
            endpoint_url=cfg.bedrock_endpoint_url,
            timeout_s=cfg.embed_timeout_s,
            max_retries=cfg.llm_max_retries,
        )
    from .ai.embedders import OpenAIEmbedder

    return OpenAIEmbedder(
        cfg.openai_api_key,
        cfg.embedding_model,
        timeout_s=cfg.embed_timeout_s,
        max_retries=cfg.llm_max_retries,
    )


@lru_cache(maxsize=1)
def reranker() -> Reranker | None:
    """The reranker of the queries' candidates; None when off (the default)."""
    cfg = settings()
    if cfg.rerank_provider == "bedrock":
        from .ai.rerank.bedrock import BedrockReranker

        return BedrockReranker(
            cfg.rerank_model,
            cfg.rerank_region or cfg.region,
            endpoint_url=cfg.rerank_base_url,
            timeout_s=cfg.rerank_timeout_s,
            max_retries=cfg.llm_max_retries,
        )
    if cfg.rerank_provider == "http":
        from .ai.rerank.http_api import HttpReranker

        return HttpReranker(
            cfg.rerank_base_url,
            cfg.rerank_model,
            cfg.rerank_api_key,
            timeout_s=cfg.rerank_timeout_s,
            max_retries=cfg.llm_max_retries,
        )
    return None


@lru_cache(maxsize=1)
def geo_resolver() -> GeoResolver | None:
    cfg = settings()
    if not cfg.geo:
        return None
    from .geo.resolver import default_resolver

    return default_resolver(cfg)


@lru_cache(maxsize=1)
def notes_store() -> NotesStore:
    """Entity summaries, preferences and instructions, beside the graph."""
    if settings().store == "sqlite":
        from .notes.sqlite import SqliteNotesStore

        return SqliteNotesStore(database())
    from .notes.dynamodb import DynamoNotesStore

    tables_configured()
    return DynamoNotesStore()


SUMMARIZE_KIND = "summarize"  # the job kind of the entity summaries (handlers/summarize.py)


def schedule_summaries(key: DatasetKey) -> None:
    """Queue the summary job of a dataset: SQS deployed, the in-process
    queue locally. Without a queue (a command, a Lambda without one) the
    stale marks wait for the next job."""
    import uuid

    from .errors import NotConfigured

    try:
        queue = remember_queue()
    except NotConfigured:
        return
    job = {"user_id": key.user_id, "dataset": key.dataset}
    queue.send({"kind": SUMMARIZE_KIND, "call_id": uuid.uuid4().hex, **job})


def notes_hook() -> NotesHook:
    from .memory.notes_hook import NotesHook

    cfg = settings()
    gap_s = cfg.session_gap_minutes * 60.0
    return NotesHook(notes_store(), cfg.summaries, schedule_summaries, gap_s)


@lru_cache(maxsize=1)
def remember_service() -> Remember:
    from .memory.remember import Remember

    return Remember(graph_store(), vector_index(), settings(), geo_resolver(), notes_hook())


@lru_cache(maxsize=1)
def summarizer() -> Summarizer:
    from .memory.summaries import Summarizer

    cfg = settings()
    return Summarizer(
        graph_store(), notes_store(), cfg.summary_batch, cfg.summary_calls, cfg.llm_model
    )


@lru_cache(maxsize=1)
def batch_service() -> RememberBatch:
    from .memory.batch import RememberBatch
    from .records.ledger import RecordLedger

    return RememberBatch(remember_service(), RecordLedger(record_store()))


def split_service() -> Split:
    from .memory.split import Split

    return Split(graph_store(), vector_index())


@lru_cache(maxsize=1)
def query_service() -> Query:
    from .memory.query import Query

    cfg = settings()
    nearby: Any = None
    if cfg.geo:
        from .geo.nearby import NearbySearch

        nearby = NearbySearch(graph_store(), vector_index(), cfg, geo_resolver())
    return Query(graph_store(), vector_index(), cfg, nearby, notes_store())


def call_services() -> CallServices:
    """What ``api.app.run_call`` records a call with."""
    from .api.app import CallServices

    return CallServices(llm(), embedder(), record_store(), reranker())


@lru_cache(maxsize=1)
def idempotency() -> Idempotency:
    cfg = settings()
    if cfg.store == "sqlite":
        from .idempotency.sqlite import sqlite_idempotency

        return sqlite_idempotency(database(), cfg.idempotency_ttl_s)
    from .dynamodb.client import shared_client
    from .dynamodb.tables import IdempotencyRow
    from .idempotency.dynamodb import dynamodb_idempotency

    tables_configured()
    return dynamodb_idempotency(
        shared_client(IdempotencyRow), cfg.table("idempotency"), cfg.idempotency_ttl_s
    )


# The in-process queue, with its consumer, composed by the local server
# (`use_local_queue`); it outlives reset(), as the server does.
_local_queue: list[JobQueue] = []


def use_local_queue(queue: JobQueue | None) -> JobQueue | None:
    """Compose the in-process queue (None: none); returns the one it replaces."""
    previous = _local_queue[0] if _local_queue else None
    _local_queue[:] = [queue] if queue is not None else []
    remember_queue.cache_clear()
    return previous


@lru_cache(maxsize=1)
def remember_queue() -> JobQueue:
    cfg = settings()
    if cfg.remember_queue_url:
        from .queue.sqs import SqsJobQueue

        return SqsJobQueue(cfg.remember_queue_url, cfg.region)
    if _local_queue:
        return _local_queue[0]
    from .errors import NotConfigured

    raise NotConfigured(
        "asynchronous remember needs a queue: GB_REMEMBER_QUEUE_URL (SQS), or `gligabao serve`"
    )


def reset() -> None:
    """Forget every cached adapter (tests that change the environment)."""
    if database.cache_info().currsize:
        database().close()
    for fn in (
        database,
        settings,
        tables_configured,
        events,
        graph_store,
        record_store,
        vector_index,
        llm,
        embedder,
        reranker,
        geo_resolver,
        batch_service,
        remember_service,
        query_service,
        notes_store,
        summarizer,
        idempotency,
        remember_queue,
    ):
        fn.cache_clear()
