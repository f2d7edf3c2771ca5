"""The handlers called in this process with API Gateway v2 events: no socket,
no thread, no subprocess. For the suites whose subject is what the handlers
answer, not the HTTP server (those keep `gb_http` or `served`).

It goes through the local server's own event builder and route table
(`gligabao.local.server.make_event`, `gligabao.local.routing.RouteTable`: the
route table's), so an event is the
one the server would build for the same request; what it skips is only what
the server adds around the handlers (the Host and Origin checks, the body
limit, /ui and /openapi.json), whose tests run over a socket.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from conftest import Reply

# What urllib (the socket `Client`) sends on its own.
_DEFAULT_HEADERS = {
    "Host": "127.0.0.1",
    "User-Agent": "Python-urllib/3",
    "Accept-Encoding": "identity",
    "Connection": "close",
    "Content-Type": "application/json",
}


class InProcessClient:
    """The `Client` interface (request/post/get/delete -> Reply) over the
    handlers, in this process."""

    def __init__(self) -> None:
        from gligabao import wiring
        from gligabao.handlers.remember_worker import process_job
        from gligabao.local.routing import RouteTable
        from gligabao.queue.local import LocalJobQueue

        # What `make_server` does as the local process's composition root.
        wiring.use_local_queue(LocalJobQueue(process_job))
        self.routes = RouteTable()

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        from gligabao.local.server import make_event

        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        sent = {**_DEFAULT_HEADERS, **(headers or {})}
        if data:
            sent["Content-Length"] = str(len(data))
        target = path.split("?", 1)[0]
        assert target != "/openapi.json" and not target.startswith("/ui"), (
            f"{target} is the server's own page, not a handler's: use gb_http"
        )
        handler = self.routes.handler(target, method)
        if handler is None:  # as the server answers it: JSON, with a call id
            return Reply(404, {"error": "no such route"}, _own_headers())
        result = handler(make_event(method, path, sent, data, "127.0.0.1"), None)
        payload = result.get("body") or ""
        raw_out = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode()
        out = {k: str(v) for k, v in (result.get("headers") or {}).items()}
        for name, values in (result.get("multiValueHeaders") or {}).items():
            out[name] = ", ".join(values)
        out.setdefault("Content-Length", str(len(raw_out)))
        return Reply(int(result.get("statusCode", 200)), _parsed(raw_out, method), out)

    def post(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return self.request("POST", path, body, **kw)

    def get(self, path: str, **kw: Any) -> Reply:
        return self.request("GET", path, **kw)

    def delete(self, path: str, **kw: Any) -> Reply:
        return self.request("DELETE", path, **kw)


def _own_headers() -> dict[str, str]:
    import uuid

    from gligabao.api.app import CALL_ID_HEADER

    return {"Content-Type": "application/json", CALL_ID_HEADER: uuid.uuid4().hex}


def _parsed(payload: bytes, method: str) -> Any:
    # As the socket client reads it: no body for HEAD, JSON otherwise.
    if method == "HEAD" or not payload:
        return None
    return json.loads(payload)
