"""moto's DynamoDB on a loopback port, in-process: for the tests of the DynamoDB
adapter and the benchmarks; also run in a process of its own by `gligabao
dev-services` (for `sam local`). (`gligabao serve` keeps its data in a SQLite file.)"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Iterable
from typing import Any


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


# moto's backends are global to the process: one lock for whatever serves them.
BACKENDS_LOCK = threading.Lock()


class _Serialized:
    """Runs one DynamoDB request at a time. moto checks a condition and then
    writes in two Python steps, so two threads could both pass a conditional
    put or read the same counter; DynamoDB itself is atomic per item, and this
    makes the embedded default behave the same. Connections stay concurrent."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = BACKENDS_LOCK

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        with self.lock:
            return list(self.app(environ, start_response))


class MotoServer:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        from moto.moto_server.werkzeug_app import (
            DomainDispatcherApplication,
            MotoRequestHandler,
            create_backend_app,
        )
        from werkzeug.serving import make_server

        # moto wants credentials and a region; none of them leave this process.
        os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
        os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
        # moto's server logs every DynamoDB request; the API's own log is enough.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        app = _Serialized(DomainDispatcherApplication(create_backend_app))
        self._server = make_server(
            host, port, app, threaded=True, request_handler=MotoRequestHandler
        )
        self.url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join(timeout=10)


def start_moto() -> tuple[MotoServer, str]:
    """Start moto's server on a free loopback port; returns (server, url)."""
    server = MotoServer()
    return server, server.url


def create_tables() -> None:
    from .. import wiring
    from ..config import settings
    from ..dynamodb.admin import create_tables as create
    from ..dynamodb.admin import create_vector_indexes

    wiring.tables_configured()
    create()
    cfg = settings()
    if cfg.vector_store == "dynamodb":  # what the stack's VectorIndexes declare
        create_vector_indexes(cfg.embedding_dimension)


def serve_moto(host: str, port: int) -> None:
    """Run moto's server in this process until SIGTERM / SIGINT."""
    import signal

    server = MotoServer(host, port)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    print(f"moto DynamoDB listening on {server.url}", flush=True)
    done.wait()
    server.stop()


if __name__ == "__main__":
    import sys

    serve_moto(sys.argv[1], int(sys.argv[2]))
