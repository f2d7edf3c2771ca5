"""The `gligabao` command: serve, bootstrap, reindex, calibrate."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import Settings

# The LLM stages, in the order a call runs them (the banner lists them).
STAGES = ("extract", "invalidate", "summarize", "query", "detect_geo")


def _describe(moto_url: str | None) -> list[str]:
    from ..config import settings

    cfg = settings()
    db = (
        f"embedded moto DynamoDB at {moto_url}"
        if moto_url
        else f"DynamoDB at {cfg.dynamodb_endpoint or 'AWS'}"
    )
    vectors = (
        f"OpenSearch at {cfg.opensearch_url}"
        if cfg.opensearch_url
        else "in-process vector index (exact cosine)"
    )
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
        "anthropic": os.environ.get("ANTHROPIC_BASE_URL") or "api.anthropic.com",
        "bedrock": bedrock_at,
        "openai": cfg.llm_base_url or "api.openai.com",
    }[cfg.llm_provider]
    emb_at = {
        "local": "in process",
        "bedrock": bedrock_at,
        "openai": os.environ.get("OPENAI_BASE_URL") or "api.openai.com",
    }[cfg.embedder]
    stages = ", ".join(STAGES if cfg.geo else [s for s in STAGES if s != "detect_geo"])
    llm = (
        f"{cfg.llm_provider} {cfg.llm_model} at {llm_at} answers {stages} "
        "(a call may name other models)"
        if cfg.llm_configured
        else f"{cfg.llm_missing}; LLM calls answer 503"
    )
    if cfg.resolve_threshold > 1.0:
        resolve = "by ID or name only"
    else:
        resolve = f"from cosine {cfg.resolve_threshold:g}"
    query = "by rank" if cfg.query_threshold <= -1.0 else f"from cosine {cfg.query_threshold:g}"
    return [
        f"  llm:        {llm}",
        f"  embeddings: {cfg.embedder} {cfg.embedding_model} ({cfg.embedding_dimension} dims) "
        f"at {emb_at} embeds stored texts, names and questions",
        f"  thresholds: entities merge {resolve}, query matches cut {query}: "
        f"{cfg.thresholds_source}",
    ]


LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def serve(host: str, port: int, quiet: bool) -> int:
    if host not in LOOPBACK and not os.environ.get("GB_DEV_API_KEY"):
        print(
            f"refusing to listen on {host} without GB_DEV_API_KEY: the local server has no other "
            "authentication, so it serves loopback only unless a key is set",
            file=sys.stderr,
        )
        return 2
    os.environ["GB_LOCAL"] = "1"
    # One sentence at a time gains nothing from BLAS threads and loses much to
    # them on a busy machine (0.39 s against 0.04 s a question, measured).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from .. import wiring
    from .embedded import create_tables, start_moto

    wiring.reset()
    moto = None
    moto_url: str | None = None
    if not os.environ.get("GB_DYNAMODB_ENDPOINT"):
        moto, moto_url = start_moto()
        os.environ["GB_DYNAMODB_ENDPOINT"] = moto_url
        wiring.reset()
    create_tables()
    if os.environ.get("GB_OPENSEARCH_URL"):
        from ..vectors.opensearch import OpenSearchVectorIndex

        index = wiring.vector_index()
        if isinstance(index, OpenSearchVectorIndex):
            index.bootstrap()
    from .server import make_server

    server = make_server(host, port, quiet=quiet)
    bound = server.server_address[1]
    print(f"gligabao listening on http://{host}:{bound}", flush=True)
    for line in _describe(moto_url):
        print(line, flush=True)

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        if moto is not None:
            moto.stop()
        print("gligabao stopped", flush=True)
    return 0


def bootstrap(dry_run: bool = False) -> int:
    from .. import wiring
    from ..config import settings

    cfg = settings()
    if dry_run:
        # No request: the bodies follow from the settings alone
        # (GB_OPENSEARCH_SERVICE picks the engine), so anyone can read them.
        from ..vectors.opensearch import default_engine, index_bodies

        engine = default_engine(cfg.opensearch_service)
        bodies = index_bodies(cfg.opensearch_index_prefix, cfg.embedding_dimension, engine)
        print(json.dumps(bodies, indent=2, sort_keys=True))
        return 0
    if not cfg.opensearch_url:
        print("GB_OPENSEARCH_URL is not set: nothing to bootstrap", file=sys.stderr)
        return 2
    index: Any = wiring.vector_index()
    created = index.bootstrap()
    print(f"vector indexes ready (engine {index.engine}; created: {', '.join(created) or 'none'})")
    return 0


def reindex(user: str, dataset: str) -> int:
    from .. import wiring
    from ..memory.reindex import reindex as run

    counts = run(wiring.graph_store(), wiring.vector_index(), wiring.embedder(), user, dataset)
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    return 0


def calibrate() -> int:
    """Measure the configured embedding model (one run: three embedding
    requests) and propose its thresholds."""
    os.environ["GB_LOCAL"] = "1"  # the same embedder `serve` would use
    from .. import wiring
    from ..config import settings
    from ..errors import GbError
    from .calibrate import measure, report

    wiring.reset()
    cfg = settings()
    try:
        cal = measure(wiring.embedder())
    except GbError as exc:
        print(f"calibration failed: {exc.message}", file=sys.stderr)
        return 1
    for line in report(f"{cfg.embedder} {cfg.embedding_model}", cal):
        print(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gligabao", description="gligabao memory service")
    sub = parser.add_subparsers(dest="command", required=True)
    p_serve = sub.add_parser("serve", help="run the API locally (no AWS account, no Docker)")
    p_serve.add_argument("--host", default="127.0.0.1")
    p_serve.add_argument("--port", type=int, default=7878)
    p_serve.add_argument("--quiet", action="store_true", help="no access log")
    p_boot = sub.add_parser("bootstrap", help="create the OpenSearch vector indexes (idempotent)")
    p_boot.add_argument(
        "--dry-run", action="store_true", help="print the exact index bodies, create nothing"
    )
    p_re = sub.add_parser("reindex", help="rebuild a dataset's vectors from DynamoDB")
    p_re.add_argument("--user", required=True)
    p_re.add_argument("--dataset", default="main")
    sub.add_parser(
        "calibrate",
        help="measure the configured embedding model and propose GB_RESOLVE_THRESHOLD "
        "and GB_QUERY_THRESHOLD",
    )
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve(args.host, args.port, args.quiet)
    if args.command == "bootstrap":
        return bootstrap(args.dry_run)
    if args.command == "calibrate":
        return calibrate()
    return reindex(args.user, args.dataset)


if __name__ == "__main__":
    sys.exit(main())
