"""`gligabao serve`'s HTTP server: uvicorn (its h11 protocol) in front of the
ASGI adapter (asgi.py), which feeds the Lambda handlers API Gateway HTTP API
(payload 2.0) events, so that the local server runs the deployed code.

Why uvicorn: the framing of HTTP/1.1 is h11's, the most exercised
pure-Python parser; a graceful shutdown that waits for the requests in
flight (SIGTERM: an acknowledged write is never lost); a keep-alive timeout;
and less time per request than hypercorn on the same h11 (bench/asgi_servers.py
on this machine: 317 against 496 us a request on one kept-alive connection,
210 against 390 us of server CPU). What it lacks is added in protocol.py (a
time limit on the headers, refusals in JSON) and asgi.py.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .events import make_event

__all__ = ["LocalServer", "make_event", "make_server"]

KEEP_ALIVE_S = 5  # an idle kept-alive connection is closed after this
DRAIN_S = 60  # SIGTERM: the longest the requests in flight are waited for


class LocalServer:
    """The server on a socket bound at construction (``server_address`` is
    known before it serves), run by ``serve_forever`` on the calling thread
    and stopped by ``shutdown`` from another, as ``socketserver``'s are.
    On the main thread, SIGTERM and SIGINT stop it after the requests in
    flight have been answered."""

    def __init__(
        self,
        app: Any,
        sock: socket.socket,
        executor: ThreadPoolExecutor,
        read_timeout_s: float,
        quiet: bool = True,
    ) -> None:
        import uvicorn

        from .protocol import GbH11Protocol, PromptServer

        protocol = type("Protocol", (GbH11Protocol,), {"header_timeout_s": read_timeout_s})

        self.socket, self.executor = sock, executor
        self.server_address: tuple[Any, ...] = sock.getsockname()
        config = uvicorn.Config(
            app,
            http=protocol,
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=not quiet,
            server_header=False,
            timeout_keep_alive=KEEP_ALIVE_S,
            timeout_graceful_shutdown=DRAIN_S,
        )
        self._server = PromptServer(config)
        self._done = threading.Event()
        self._started = threading.Event()

    def serve_forever(self, poll_interval: float = 0.1) -> None:
        """Serve until ``shutdown`` (or SIGTERM on the main thread); the
        requests in flight are answered first. (``poll_interval``: accepted
        as socketserver's is: ``shutdown`` wakes it at once.)"""
        self._started.set()
        try:
            asyncio.run(self._server.serve(sockets=[self.socket]))
        finally:
            self._done.set()

    def shutdown(self) -> None:
        """Stop serving and wait until ``serve_forever`` has returned."""
        self._server.stop()
        if self._started.is_set():
            self._done.wait()

    def server_close(self) -> None:
        self.socket.close()
        self.executor.shutdown(wait=False)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY on an accepted socket only
    # when its proto says TCP, and without it Nagle's algorithm holds a small
    # body written after its headers until the client's delayed ACK (40 ms
    # an answer). Set on the listener too (inherited).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(512)
    sock.setblocking(False)
    return sock


def make_server(
    host: str,
    port: int,
    *,
    quiet: bool = False,
    extra: dict[str, Callable[[], tuple[int, str, bytes]]] | None = None,
    table: Any = None,
) -> LocalServer:
    """The server of `gligabao serve` on ``host:port`` (0: a free port),
    bound now; ``table``: another route table (tests)."""
    from .. import wiring
    from ..config import settings
    from ..handlers.remember_worker import process_job
    from ..queue.local import LocalJobQueue
    from .asgi import GbAsgi, Limits
    from .openapi import openapi_route
    from .preload import import_package
    from .routing import RouteTable
    from .users import users_route

    # The whole package now, not at each route's first request: the process
    # serves the version it started with (local/preload.py says why).
    import_package()
    # The composition root of the local process: the queue gets its consumer.
    wiring.use_local_queue(LocalJobQueue(process_job))
    cfg = settings()
    limits = Limits(cfg.max_concurrent_requests, cfg.read_timeout, cfg.request_timeout)
    # One thread per request that runs (the handlers are synchronous): as
    # many as may run at once, past which the adapter answers 503.
    executor = ThreadPoolExecutor(limits.max_concurrent + 4, thread_name_prefix="gb-request")
    app = GbAsgi(
        table or RouteTable(),
        {"/openapi.json": openapi_route, "/local/users": users_route, **(extra or {})},
        executor,
        limits,
    )
    if not quiet:  # a line per request on stderr, as the server printed before
        import logging

        access = logging.getLogger("uvicorn.access")
        if not access.handlers:
            access.addHandler(logging.StreamHandler())
            access.setLevel(logging.INFO)
    return LocalServer(app, _bind(host, port), executor, limits.read_timeout_s, quiet)
