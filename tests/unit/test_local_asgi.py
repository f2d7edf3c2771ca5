"""The local server's ASGI adapter (local/asgi.py) called directly: what it
answers when a handler fails outside the handlers' own net (JSON, a call
id, never the server library's text/plain 500), and HEAD as a GET."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gligabao.api.routes import ROUTES, Route
from gligabao.local.asgi import GbAsgi, Limits
from gligabao.local.routing import RouteTable

BROKEN = Route("GET", "/v1/gb/broken", "broken", "user", "A route whose handler raises")


def broken(event: dict[str, Any], context: Any) -> dict[str, Any]:
    raise RuntimeError("a bug")


def call(app: GbAsgi, method: str, path: str) -> tuple[int, dict[bytes, bytes], bytes]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 1),
    }
    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"]), sent[1]["body"]


def test_a_handler_that_raises_is_a_json_500_with_a_call_id() -> None:
    with ThreadPoolExecutor(2) as pool:
        app = GbAsgi(RouteTable((*ROUTES, BROKEN), load=lambda name: broken), {}, pool, Limits())
        status, headers, body = call(app, "GET", "/v1/gb/broken")
    assert status == 500
    assert headers[b"Content-Type"] == b"application/json"
    assert headers[b"X-Gb-Call-Id"]
    assert json.loads(body) == {"error": "internal error"}


def test_head_runs_the_get_and_keeps_its_length() -> None:
    seen: list[str] = []

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        seen.append(event["requestContext"]["http"]["method"])
        return {"statusCode": 200, "headers": {}, "body": '{"a": 1}'}

    with ThreadPoolExecutor(2) as pool:
        app = GbAsgi(RouteTable((*ROUTES, BROKEN), load=lambda name: handler), {}, pool, Limits())
        status, headers, body = call(app, "HEAD", "/v1/gb/broken")
    assert status == 200 and seen == ["GET"]  # the GET, its body not sent
    assert headers[b"Content-Length"] == b"8" and body == b""


def test_the_handler_runs_within_the_request_timeout_and_knows_its_client_left() -> None:
    """The adapter gives the handler (no Lambda context) the budget of
    GB_REQUEST_TIMEOUT and the client's ``http.disconnect``: the deadline's
    checks see both (deadline.py)."""
    import threading

    from gligabao import deadline

    seen: dict[str, Any] = {}
    left = threading.Event()

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        seen["remaining"] = deadline.remaining()
        seen["gone"] = left.wait(10) and _gone_within(10)
        return {"statusCode": 200, "headers": {}, "body": "{}"}

    messages = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        left.set()  # the body is read: the client now goes
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        return None

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/v1/gb/broken",
        "raw_path": b"/v1/gb/broken",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 1),
    }
    with ThreadPoolExecutor(2) as pool:
        limits = Limits(request_timeout_s=30.0)
        app = GbAsgi(RouteTable((*ROUTES, BROKEN), load=lambda name: handler), {}, pool, limits)
        asyncio.run(app(scope, receive, send))
    assert seen["remaining"] is not None and 0 < seen["remaining"] <= 30.0
    assert seen["gone"] is True


def _gone_within(seconds: float) -> bool:
    """Whether the call learns its client left (the event loop sets it)."""
    import time

    from gligabao import deadline

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if deadline.client_gone():
            return True
        time.sleep(0.01)
    return False
