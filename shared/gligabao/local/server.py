"""A real HTTP server that feeds the Lambda handlers API Gateway HTTP API
(payload 2.0) events, so that the local server runs the deployed code."""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlsplit

from ..api.app import CALL_ID_HEADER
from ..config import settings
from .hosts import host_allowed

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
MAX_READ_BYTES = 10 * 1024 * 1024  # API Gateway's own payload limit
GET_ONLY = {"Allow": "GET, HEAD"}


def _routes() -> list[tuple[str, Handler]]:
    from ..handlers import browse, datasets, mcp, query, records, remember

    return [
        ("/v1/gb/remember", remember.lambda_handler),
        ("/v1/gb/remember/batch", remember.lambda_handler),
        ("/v1/gb/entities/*/split", remember.lambda_handler),
        # --- issue 44: a fact's PATCH (correct) runs in the remember function,
        # its GET and DELETE in browse
        ("/v1/gb/edges/*", _edges),
        ("/v1/gb/conflicts", browse.lambda_handler),
        ("/v1/gb/query", query.lambda_handler),
        ("/v1/gb/search", query.lambda_handler),
        ("/mcp", mcp.lambda_handler),
        ("/v1/gb/datasets", datasets.lambda_handler),
        ("/v1/gb/users/", datasets.lambda_handler),
        ("/v1/gb/inferences", records.lambda_handler),
        ("/v1/gb/calls/", records.lambda_handler),
        ("/v1/gb/entities", browse.lambda_handler),
        ("/v1/gb/edges/", browse.lambda_handler),
        ("/v1/gb/artifacts", browse.lambda_handler),
    ]


def _edges(event: dict[str, Any], context: Any) -> dict[str, Any]:
    from ..handlers import browse, remember

    patch = event["requestContext"]["http"]["method"] == "PATCH"
    return (remember if patch else browse).lambda_handler(event, context)  # type: ignore[no-any-return]


def route(path: str, routes: list[tuple[str, Handler]]) -> Handler | None:
    """The handler of a path: an exact pattern (``*`` one path segment) wins
    over a prefix (the prefix and anything under it)."""
    parts = path.split("/")
    for pattern, handler in routes:
        if "*" in pattern:
            want = pattern.split("/")
            if len(want) == len(parts) and all(
                w in ("*", p) for w, p in zip(want, parts, strict=True)
            ):
                return handler
    for prefix, handler in routes:
        if "*" not in prefix and (path == prefix or path.startswith(prefix.rstrip("/") + "/")):
            return handler
    return None


LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


def foreign_origin_ok(origin: str | None) -> bool:
    """Whether a browser's ``Origin`` may call: with no key, only a page
    served from this machine, so that a web page elsewhere (or a DNS
    rebinding to 127.0.0.1) cannot use the open local server. Clients other
    than browsers send no Origin; with ``GB_DEV_API_KEY`` the key decides."""
    if not origin or settings().dev_api_key:
        return True
    return urlsplit(origin).hostname in LOOPBACK_HOSTS


def make_event(
    method: str, target: str, headers: dict[str, str], body: bytes, client_ip: str
) -> dict[str, Any]:
    parts = urlsplit(target)
    query: dict[str, str] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        # API Gateway joins repeated parameters with commas.
        query[name] = f"{query[name]},{value}" if name in query else value
    try:
        text, b64 = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, b64 = base64.b64encode(body).decode(), True
    now = time.time()
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": parts.path,
        "rawQueryString": parts.query,
        "headers": {k.lower(): v for k, v in headers.items()},
        "queryStringParameters": query or None,
        "requestContext": {
            "accountId": "local",
            "apiId": "local",
            "domainName": headers.get("Host", "localhost"),
            "http": {
                "method": method,
                "path": parts.path,
                "protocol": "HTTP/1.1",
                "sourceIp": client_ip,
                "userAgent": headers.get("User-Agent", ""),
            },
            "requestId": uuid.uuid4().hex,
            "routeKey": "$default",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
        },
        "body": text,
        "isBase64Encoded": b64,
    }


class _RequestHandler(BaseHTTPRequestHandler):
    server_version = "gligabao"
    protocol_version = "HTTP/1.1"
    # The headers and the body go out in two writes: on a kept-alive
    # connection Nagle's algorithm would hold the body until the client's
    # delayed ACK, ~40 ms on every answer (TCP_NODELAY; docs/performance.md).
    disable_nagle_algorithm = True
    routes: ClassVar[list[tuple[str, Handler]]] = []
    extra: ClassVar[dict[str, Callable[[], tuple[int, str, bytes]]]] = {}
    quiet = False

    def log_message(self, format: str, *args: Any) -> None:
        if not self.quiet:
            super().log_message(format, *args)

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        if self.command != "HEAD" and body and hasattr(self, "_headers_buffer"):
            # The headers and the body in one write (one send, one segment
            # for a small answer): http.server buffers the headers until
            # end_headers, which would flush them on their own.
            self._headers_buffer.append(b"\r\n" + body)
            self.flush_headers()
            return
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        # Answered before any handler runs, but every response carries a call id.
        headers = {
            "Content-Type": "application/json",
            CALL_ID_HEADER: uuid.uuid4().hex,
            **(headers or {}),
        }
        self._send(status, headers, json.dumps({"error": message}).encode())

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own errors (a malformed request line, a header too
        long) in JSON like every other answer, not its HTML page."""
        self.close_connection = True
        self._error(code, message or self.responses.get(code, ("error",))[0])

    def __getattr__(self, name: str) -> Any:
        # http.server looks up ``do_<METHOD>``: every method reaches the
        # handlers, which answer 405 (with Allow) on a known path, 404 elsewhere.
        if name.startswith("do_"):
            return self._handle
        raise AttributeError(name)

    def _handle(self) -> None:
        if not host_allowed(self.headers.get("Host")):
            # before the body is read or anything runs: a rebound page gets nothing
            self.close_connection = True
            self._error(
                421,
                "this server answers only requests for a loopback host or one "
                "listed in GB_ALLOWED_HOSTS",
            )
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_READ_BYTES:
            self.close_connection = True
            self._error(413, "the request body is larger than 64 KiB")
            return
        body = self.rfile.read(length) if length else b""
        if not foreign_origin_ok(self.headers.get("Origin")):
            self._error(403, "requests from a web page of another origin are refused")
            return
        path = urlsplit(self.path).path
        own = path == "/ui" or path.startswith("/ui/") or path in self.extra
        if own and self.command not in ("GET", "HEAD"):
            self._error(405, f"{self.command} is not allowed here: GET, HEAD", GET_ONLY)
            return
        if path == "/ui" or path.startswith("/ui/"):
            self._static(path)
            return
        if path in self.extra:
            status, ctype, doc = self.extra[path]()
            self._send(status, {"Content-Type": ctype}, doc)
            return
        handler = route(path, self.routes)
        if handler is None:
            self._error(404, "no such route")
            return
        event = make_event(
            self.command, self.path, dict(self.headers.items()), body, self.client_address[0]
        )
        result = handler(event, None)
        payload = result.get("body") or ""
        raw = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode()
        headers = {k: str(v) for k, v in (result.get("headers") or {}).items()}
        for name, values in (result.get("multiValueHeaders") or {}).items():
            headers[name] = ", ".join(values)
        self._send(int(result.get("statusCode", 200)), headers, raw)

    def _static(self, path: str) -> None:
        from ..ui import static_file  # the page's files, read on request

        found = static_file(path)
        if found is None:
            self._error(404, "no such file")
            return
        self._send(*found)

    do_GET = do_POST = do_DELETE = _handle


def make_server(
    host: str,
    port: int,
    *,
    quiet: bool = False,
    extra: dict[str, Callable[[], tuple[int, str, bytes]]] | None = None,
) -> ThreadingHTTPServer:
    from .. import wiring
    from ..handlers.remember_worker import process_job
    from ..queue.local import LocalJobQueue
    from .openapi import openapi_route

    # The composition root of the local process: the queue gets its consumer.
    wiring.use_local_queue(LocalJobQueue(process_job))
    extra = {"/openapi.json": openapi_route, **(extra or {})}
    handler = type(
        "GbRequestHandler",
        (_RequestHandler,),
        {"routes": _routes(), "quiet": quiet, "extra": extra or {}},
    )
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server
