"""The `gligabao` command: serve, bootstrap, reindex."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from typing import Any


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
    emb = (
        f"local model {cfg.embedding_model}"
        if cfg.embedder == "local"
        else f"OpenAI {cfg.embedding_model} at {os.environ.get('OPENAI_BASE_URL') or 'api.openai.com'}"
    )
    llm = (
        f"Anthropic {cfg.llm_model} at {os.environ.get('ANTHROPIC_BASE_URL') or 'api.anthropic.com'}"
        if cfg.llm_configured
        else "not configured (ANTHROPIC_API_KEY unset): LLM calls answer 503"
    )
    queue = (
        f"SQS queue {cfg.remember_queue_url}"
        if cfg.remember_queue_url
        else "in-process thread pool (Prefer: respond-async)"
    )
    return [
        f"  storage:    {db}",
        f"  vectors:    {vectors}",
        f"  embeddings: {emb}",
        f"  llm:        {llm}",
        f"  geo:        {'on' if cfg.geo else 'off'}",
        f"  async:      {queue}",
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
        bodies = index_bodies(cfg.opensearch_index_prefix, wiring.dimension(cfg), engine)
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
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve(args.host, args.port, args.quiet)
    if args.command == "bootstrap":
        return bootstrap(args.dry_run)
    return reindex(args.user, args.dataset)


if __name__ == "__main__":
    sys.exit(main())
