"""The `gligabao` command: serve, bootstrap, reindex, calibrate, export, import, summaries,
dev-services. What `serve` prints at start is in ``banner.py``; the commands on
one dataset (reindex, export, import) in ``datasets.py``."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from typing import Any

from ..config import DEFAULT_DATA_PATH
from .banner import describe
from .datasets import export, import_, reindex, summaries, use_data

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
    # Events a killed process left in the outbox go out now, not at the next commit.
    wiring.graph_store().deliver_waiting()
    server = make_server(host, port, quiet=quiet)
    # issue 44: expired texts are forgotten now and then periodically
    from .retention import Sweeper

    sweeper = Sweeper()
    sweeper.start()
    bound = server.server_address[1]
    print(f"gligabao listening on http://{host}:{bound}", flush=True)
    web_host = f"[{host}]" if ":" in host else host
    print(f"  page:       http://{web_host}:{bound}/ui/ (docs/ui.md)", flush=True)
    for line in describe():
        print(line, flush=True)

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        sweeper.stop()
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
    p_su = sub.add_parser(
        "summaries", help="turn a dataset's entity summaries on or off (or show the setting)"
    )
    p_su.add_argument("--user", required=True)
    p_su.add_argument("--dataset", default="main")
    p_su.add_argument("state", nargs="?", choices=["on", "off"], help="omitted: show it")
    p_su.add_argument("--data", help=data_help)
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
    if args.command == "summaries":
        return summaries(args.user, args.dataset, args.state, args.data)
    if args.command == "ingest":
        from .ingest import ingest

        if not args.url:
            use_data(args.data)
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
