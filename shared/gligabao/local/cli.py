"""The `gligabao` command: serve, bootstrap, reindex, calibrate, export, import,
dev-services."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

from ..config import DEFAULT_DATA_PATH

if TYPE_CHECKING:
    from ..config import Settings

# The LLM stages, in the order a call runs them (the banner lists them).
STAGES = ("extract", "invalidate", "summarize", "query", "detect_geo")


def _describe() -> list[str]:
    from ..config import settings

    cfg = settings()
    db = (
        f"SQLite file {os.path.abspath(cfg.data_path)} (graph, vectors, records)"
        if cfg.store == "sqlite"
        else f"DynamoDB at {cfg.dynamodb_endpoint or 'AWS'}"
    )
    if cfg.opensearch_url:
        vectors = f"OpenSearch at {cfg.opensearch_url}"
    elif cfg.store == "sqlite":
        vectors = "in the SQLite file (exact cosine)"
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
        f"bedrock-agent-runtime.{region}.amazonaws.com"
        if cfg.rerank_provider == "bedrock"
        else ""
    )
    return (
        f"{cfg.rerank_provider} {cfg.rerank_model or '(the server default)'} at {at} "
        f"orders the best {cfg.rerank_candidates} facts and passages of each query"
    )


LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def serve(host: str, port: int, quiet: bool, data: str | None = None) -> int:
    from ..config import load_settings

    if host not in LOOPBACK and not load_settings().dev_api_key:
        print(
            f"refusing to listen on {host} without GB_DEV_API_KEY: the local server has no other "
            "authentication, so it serves loopback only unless a key is set",
            file=sys.stderr,
        )
        return 2
    os.environ["GB_LOCAL"] = "1"
    if data:
        os.environ["GB_DATA"] = data
    # One sentence at a time gains nothing from BLAS threads and loses much to
    # them on a busy machine (0.39 s against 0.04 s a question, measured).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from .. import wiring

    wiring.reset()
    if wiring.settings().store == "sqlite":
        from ..sqlite.db import SchemaMismatch

        try:
            wiring.database()  # opens (creates) the file now: a bad path fails at start
        except SchemaMismatch as exc:
            print(f"cannot use the data file: {exc}", file=sys.stderr)
            return 2
    else:
        from .embedded import create_tables

        create_tables()
    if wiring.settings().opensearch_url:
        from ..vectors.opensearch.store import OpenSearchVectorIndex

        index = wiring.vector_index()
        if isinstance(index, OpenSearchVectorIndex):
            index.bootstrap()
    from ..handlers.datasets import eraser
    from .server import make_server

    # An erase a crash left unfinished is finished before anything is served.
    for call_id in eraser().resume_all():
        print(f"finished the erase left unfinished by call {call_id}", flush=True)
    server = make_server(host, port, quiet=quiet)
    bound = server.server_address[1]
    print(f"gligabao listening on http://{host}:{bound}", flush=True)
    web_host = f"[{host}]" if ":" in host else host
    print(f"  page:       http://{web_host}:{bound}/ui/ (docs/ui.md)", flush=True)
    for line in _describe():
        print(line, flush=True)

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        if wiring.remember_queue.cache_info().currsize:
            queue: Any = wiring.remember_queue()
            if hasattr(queue, "shutdown"):
                queue.shutdown(wait=True)  # running remembers finish before the file closes
        wiring.reset()  # closes the SQLite file
        print("gligabao stopped", flush=True)
    return 0


def bootstrap(dry_run: bool = False) -> int:
    from .. import wiring
    from ..config import settings

    cfg = settings()
    if dry_run:
        # No request: the bodies follow from the settings alone
        # (GB_OPENSEARCH_SERVICE picks the engine), so anyone can read them.
        from ..vectors.opensearch.bodies import default_engine, index_bodies

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


def reindex(user: str, dataset: str, data: str | None = None) -> int:
    from .. import wiring
    from ..memory.reindex import reindex as run

    if data:  # the local server's file; without it, DynamoDB as deployed
        _use_data(data)

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


def _use_data(data: str | None) -> None:
    """The commands that work on a dataset default to the local server's
    SQLite file, like `gligabao serve`; GB_DYNAMODB_ENDPOINT points them at
    DynamoDB instead."""
    os.environ["GB_LOCAL"] = "1"
    if data:
        os.environ["GB_DATA"] = data
    from .. import wiring

    wiring.reset()


def export(user: str, dataset: str, out: str | None, data: str | None) -> int:
    from .. import wiring
    from ..memory.transfer import export_dataset, write_lines
    from ..models import DatasetKey

    _use_data(data)
    key = DatasetKey(user, dataset)
    graph = wiring.graph_store()
    if graph.get_dataset(key) is None:
        print(f"no dataset {dataset!r} for user {user!r}", file=sys.stderr)
        return 1
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            n = write_lines(export_dataset(graph, key), fh)
    else:
        n = write_lines(export_dataset(graph, key), sys.stdout)
    print(f"exported {n} lines", file=sys.stderr)
    return 0


def import_(user: str, dataset: str, src: str | None, data: str | None, vectors: bool) -> int:
    from .. import wiring
    from ..errors import GbError
    from ..memory.reindex import reindex as rebuild
    from ..memory.transfer import import_dataset, read_lines
    from ..models import DatasetKey

    _use_data(data)
    key = DatasetKey(user, dataset)
    try:
        if src:
            with open(src, encoding="utf-8") as fh:
                write = read_lines(fh)
        else:
            write = read_lines(sys.stdin)
        counts = import_dataset(wiring.graph_store(), key, write)
    except GbError as exc:
        print(f"import failed: {exc.message}", file=sys.stderr)
        return 1
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    if vectors:
        done = rebuild(
            wiring.graph_store(), wiring.vector_index(), wiring.embedder(), user, dataset
        )
        print("vectors " + " ".join(f"{k}={v}" for k, v in done.items()))
    return 0


def dev_services(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import devservices

    state = Path(args.state_dir)
    if args.action == "down":
        return devservices.down(state)
    if args.action == "status":
        return devservices.status(state)
    opts = devservices.Options(
        host=args.host or devservices.bridge_host(),
        dynamodb_port=args.dynamodb_port,
        opensearch_port=args.opensearch_port,
        opensearch_url=args.opensearch_url,
        table_prefix=args.table_prefix,
        dimension=args.embedding_dimension,
        env_file=Path(args.env_file),
        state_dir=state,
    )
    return devservices.up(opts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gligabao", description="gligabao memory service")
    sub = parser.add_subparsers(dest="command", required=True)
    p_serve = sub.add_parser("serve", help="run the API locally (no AWS account, no Docker)")
    p_serve.add_argument("--host", default="127.0.0.1")
    p_serve.add_argument("--port", type=int, default=7878)
    p_serve.add_argument("--quiet", action="store_true", help="no access log")
    data_help = f"the SQLite file (default: GB_DATA or {DEFAULT_DATA_PATH})"
    p_serve.add_argument("--data", help=data_help)
    p_boot = sub.add_parser("bootstrap", help="create the OpenSearch vector indexes (idempotent)")
    p_boot.add_argument(
        "--dry-run", action="store_true", help="print the exact index bodies, create nothing"
    )
    p_re = sub.add_parser("reindex", help="rebuild a dataset's vectors from DynamoDB")
    p_re.add_argument("--user", required=True)
    p_re.add_argument("--dataset", default="main")
    p_re.add_argument("--data", help="rebuild in this SQLite file (default: DynamoDB)")
    sub.add_parser(
        "calibrate",
        help="measure the configured embedding model and propose GB_RESOLVE_THRESHOLD "
        "and GB_QUERY_THRESHOLD",
    )
    p_ex = sub.add_parser("export", help="write a dataset as JSON lines")
    p_ex.add_argument("--user", required=True)
    p_ex.add_argument("--dataset", default="main")
    p_ex.add_argument("--out", help="file to write (default: stdout)")
    p_ex.add_argument("--data", help=data_help)
    p_im = sub.add_parser("import", help="read a dataset from JSON lines into a new dataset")
    p_im.add_argument("--user", required=True)
    p_im.add_argument("--dataset", default="main")
    p_im.add_argument("--in", dest="src", help="file to read (default: stdin)")
    p_im.add_argument("--data", help=data_help)
    p_im.add_argument(
        "--no-vectors", action="store_true", help="skip embedding the rows (reindex later)"
    )
    p_in = sub.add_parser(
        "ingest", help="remember a JSON-lines file of texts or chat messages, in bulk"
    )
    p_in.add_argument("file", help="one text or message object a line")
    p_in.add_argument("--url", help="through this server (default: the local SQLite file)")
    p_in.add_argument("--user", help="the user_id of lines that give none")
    p_in.add_argument("--dataset", default="main", help="of lines that give none")
    p_in.add_argument("--key", help="the batch key (default: from the file's bytes)")
    p_in.add_argument("--token", help="a bearer token for --url (the jwt stack)")
    p_in.add_argument("--data", help=data_help)
    p_dev = sub.add_parser(
        "dev-services",
        help="DynamoDB (moto) and OpenSearch for `sam local start-api`, on the docker bridge",
    )
    p_dev.add_argument("action", choices=["up", "down", "status"])
    p_dev.add_argument("--host", default="", help="address to listen on (default: docker0's)")
    p_dev.add_argument("--dynamodb-port", type=int, default=8000)
    p_dev.add_argument("--opensearch-port", type=int, default=9200)
    p_dev.add_argument(
        "--opensearch-url", default="", help="use this node (reachable from containers)"
    )
    p_dev.add_argument("--table-prefix", default="gblocal-")
    p_dev.add_argument(
        "--embedding-dimension",
        type=int,
        default=0,
        help="vector size of the indexes (default: the embedding model's, as configured)",
    )
    p_dev.add_argument("--env-file", default="infra/sam-local.env.json")
    p_dev.add_argument(
        "--state-dir", default=".gb-local/dev-services", help="pids, logs, the node's data"
    )
    args = parser.parse_args(argv)
    if args.command == "dev-services":
        return dev_services(args)
    if args.command == "serve":
        return serve(args.host, args.port, args.quiet, args.data)
    if args.command == "bootstrap":
        return bootstrap(args.dry_run)
    if args.command == "export":
        return export(args.user, args.dataset, args.out, args.data)
    if args.command == "import":
        return import_(args.user, args.dataset, args.src, args.data, not args.no_vectors)
    if args.command == "calibrate":
        return calibrate()
    if args.command == "ingest":
        from .ingest import ingest

        if not args.url:
            _use_data(args.data)
        return ingest(
            args.file,
            url=args.url,
            user=args.user,
            dataset=args.dataset,
            key=args.key,
            token=args.token,
        )
    return reindex(args.user, args.dataset, args.data)


if __name__ == "__main__":
    sys.exit(main())
