"""The ASGI application of `gligabao serve`: what comes before a handler.

The HTTP/1.1 framing is the server library's (uvicorn on h11: chunked bodies,
malformed and conflicting lengths refused, see ``server.py``). This adapter
refuses what that library lets through or cannot know about, each before the
body is read and before anything runs: a Host it does not answer (421), a
``Transfer-Encoding`` beside a ``Content-Length`` (400), a body announced past
the limit (413), a write that is not JSON (415), a write from another origin
(403), more requests than it runs at once (503). It then reads the body (the
limit again while a chunked one arrives, a read timeout) and turns the request
into the API Gateway v2 event the deployed handlers take, run on a thread
within the request's budget (``GB_REQUEST_TIMEOUT``: 504 past it) and told
when its client disconnects (its stages stop at the next boundary).
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from .. import deadline
from ..api.app import CALL_ID_HEADER, MAX_BODY_BYTES
from ..api.routes import methods_at
from .gate import WRITES, Refused, check_origin, check_request, has_body, write_type_ok
from .routing import Handler, RouteTable

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
GET_ONLY = ("GET", "HEAD")


@dataclass
class Reply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    close: bool = False  # the body was not read: the connection cannot carry another request


def error_reply(refused: Refused, path: str) -> Reply:
    """Every error in JSON, with a call id (answered before any handler runs);
    on /mcp, a JSON-RPC error as the endpoint's own are (but the Host's 421,
    the same on every path: the request was not for this server)."""
    headers = {"Content-Type": "application/json", CALL_ID_HEADER: uuid.uuid4().hex}
    body: dict[str, Any] = {"error": refused.message}
    if path == "/mcp" and refused.status != 421:
        from ..mcp.server import error_envelope, status_error

        body = error_envelope(None, status_error(refused.status, refused.message))
    return Reply(
        refused.status, {**headers, **refused.headers}, json.dumps(body).encode(), refused.close
    )


@dataclass
class Limits:
    max_concurrent: int = 128  # requests past their headers at once; past it, 503
    read_timeout_s: float = 10.0  # between two pieces of a body (and for the headers)
    # A handler's budget (GB_REQUEST_TIMEOUT): its model calls and write
    # within it, else 504 (deadline.py); None: unbounded.
    request_timeout_s: float | None = 120.0


class GbAsgi:
    """The ASGI application: ``table`` routes the API, ``extra`` are the
    server's own GET documents (``/openapi.json``), ``/ui/`` its page."""

    def __init__(
        self,
        table: RouteTable,
        extra: Mapping[str, Callable[[], tuple[int, str, bytes]]],
        executor: Executor,
        limits: Limits,
    ) -> None:
        self.table, self.extra, self.executor, self.limits = table, extra, executor, limits
        self.running = 0  # handler calls in flight (on the event loop: no lock needed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # lifespan is off; no websockets are served
        headers = _headers(scope)
        try:
            reply = await self._answer(scope, headers, receive)
        except Refused as exc:
            reply = error_reply(exc, _raw_path(scope))
            # refused before its body was read: the connection cannot go on
            reply.close = reply.close or has_body(headers)
        except Exception:  # never uvicorn's text/plain 500: JSON and a call id, as all others
            from ..records.monitor import logger

            logger.exception("the local server's adapter failed")
            reply = error_reply(Refused(500, "internal error", close=True), _raw_path(scope))
        await _send(send, scope["method"], reply)

    async def _answer(self, scope: Scope, headers: dict[str, str], receive: Receive) -> Reply:
        # The path as sent (still percent-encoded), as API Gateway gives it.
        method, path = scope["method"], _raw_path(scope)
        own = path == "/ui" or path.startswith("/ui/") or path in self.extra
        check_request(headers, MAX_BODY_BYTES)
        # A write the path serves must say it is JSON; a method it does not
        # serve is its function's 405 (with Allow), whatever the body.
        if method in WRITES and not own and method in methods_at(path, self.table.routes):
            write_type_ok(method, path, headers)
        check_origin(method, headers, scope.get("scheme", "http"))
        if own:
            return await self._own(method, path)
        handler = self.table.handler(path, method)
        if handler is None:
            raise Refused(404, "no such route")
        if self.running >= self.limits.max_concurrent:
            raise Refused(
                503,
                f"the server is running {self.limits.max_concurrent} requests: retry shortly",
                {"Retry-After": "1"},
            )
        self.running += 1
        try:
            body = await self._body(receive)
            return await self._run(handler, scope, headers, body, receive)
        finally:
            self.running -= 1

    async def _own(self, method: str, path: str) -> Reply:
        if method not in GET_ONLY:
            allow = ", ".join(GET_ONLY)
            raise Refused(405, f"{method} is not allowed here: {allow}", {"Allow": allow})
        if path in self.extra:
            status, ctype, doc = self.extra[path]()
            return Reply(status, {"Content-Type": ctype}, doc)
        from urllib.parse import unquote

        from ..ui import static_file  # the page's files, read on request

        name = unquote(path)
        if "\x00" in name:
            raise Refused(404, "no such file")
        found = await asyncio.get_running_loop().run_in_executor(self.executor, static_file, name)
        if found is None:
            raise Refused(404, "no such file")
        return Reply(*found)

    async def _body(self, receive: Receive) -> bytes:
        """The body, as the client sends it: refused past the limit as soon
        as it is (a chunked body has no length to check first), and when the
        client stops sending for longer than the read timeout."""
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), self.limits.read_timeout_s)
            except TimeoutError:
                raise Refused(408, "the request body did not arrive in time", close=True) from None
            if message["type"] == "http.disconnect":
                raise Refused(400, "the client went away", close=True)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise Refused(413, "the request body is larger than 64 KiB", close=True)
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)

    async def _run(
        self,
        handler: Handler,
        scope: Scope,
        headers: dict[str, str],
        body: bytes,
        receive: Receive,
    ) -> Reply:
        from .events import make_event

        head = scope["method"] == "HEAD"  # a GET whose body is not sent
        query = scope["query_string"].decode("latin-1")
        target = _raw_path(scope) + ("?" + query if query else "")
        client = (scope.get("client") or ("127.0.0.1", 0))[0]
        event = make_event("GET" if head else scope["method"], target, headers, body, client)
        gone = threading.Event()  # set when the client disconnects
        watcher = asyncio.ensure_future(_watch(receive, gone))
        try:
            result = await asyncio.get_running_loop().run_in_executor(
                self.executor, _bounded, handler, event, self.limits.request_timeout_s, gone
            )
        finally:
            watcher.cancel()
        payload = result.get("body") or ""
        raw = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode()
        out = {k: str(v) for k, v in (result.get("headers") or {}).items()}
        for name, values in (result.get("multiValueHeaders") or {}).items():
            out[name] = ", ".join(values)
        return Reply(int(result.get("statusCode", 200)), out, raw)


async def _watch(receive: Receive, gone: threading.Event) -> None:
    """Wait for the client to go while its handler runs: with the body read,
    uvicorn's ``receive`` answers only ``http.disconnect`` (cancelled once
    the response is ready). A server that answers an empty request message
    instead tells nothing of its client: the watch ends (no busy loop)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            gone.set()
            return
        if not message.get("body") and not message.get("more_body"):
            return


def _bounded(
    handler: Handler, event: dict[str, Any], budget_s: float | None, gone: threading.Event
) -> dict[str, Any]:
    """The handler within the request's budget, knowing when its client has
    gone: its stages stop at the next boundary (deadline.py), as a Lambda's
    do at its remaining time. (No Lambda context: the handler keeps these.)"""
    with deadline.budget(budget_s), deadline.watched(gone):
        return handler(event, None)


def _raw_path(scope: Scope) -> str:
    raw = scope.get("raw_path")
    return raw.decode("latin-1") if raw else str(scope["path"])


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers, names in lowercase; a repeated one joined with
    commas as API Gateway does (latin-1: what h11 let through, byte for byte)."""
    out: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        out[name] = f"{out[name]},{value}" if name in out else value
    return out


async def _send(send: Send, method: str, reply: Reply) -> None:
    # The names as the handlers write them (h11 keeps their case on the wire).
    headers = [
        (k.encode("latin-1"), v.encode("latin-1"))
        for k, v in reply.headers.items()
        if k.lower() not in ("content-length", "connection")
    ]
    headers.append((b"Content-Length", str(len(reply.body)).encode()))
    if reply.close:
        headers.append((b"Connection", b"close"))
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    body = b"" if method == "HEAD" else reply.body
    await send({"type": "http.response.body", "body": body})
