"""A webhook receiver on loopback: a real HTTP server that keeps every
request (headers, body) and answers the statuses it is scripted with (200
once the script runs out). It checks nothing itself: the tests verify the
signatures, so that a wrong one fails the test, not the sender."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    status: int  # what the receiver answered

    @property
    def event(self) -> dict[str, Any]:
        return json.loads(self.body)


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def verify_by_hand(secret: str, r: Received) -> bool:
    """Standard Webhooks' check, spelled out (the library does it too)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    msg_id, ts = r.headers["webhook-id"], r.headers["webhook-timestamp"]
    signed = f"{msg_id}.{ts}.".encode() + r.body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    given = [
        s.split(",", 1)[1] for s in r.headers["webhook-signature"].split() if s.startswith("v1,")
    ]
    return any(hmac.compare_digest(expected, g) for g in given)


class WebhookReceiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.script: list[int] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with outer._lock:
                    status = outer.script.pop(0) if outer.script else 200
                    outer.received.append(
                        Received({k.lower(): v for k, v in self.headers.items()}, body, status)
                    )
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def events(self, type_: str | None = None) -> list[dict[str, Any]]:
        """The bodies answered 2xx, in order (``type_``: of that type only)."""
        with self._lock:
            out = [r.event for r in self.received if 200 <= r.status < 300]
        return [e for e in out if type_ is None or e["type"] == type_]

    def wait_for(self, type_: str, n: int = 1, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """Events are delivered after the answer in some paths (a queued
        batch): wait until ``n`` of the type came (a bound, not a measure)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            got = self.events(type_)
            if len(got) >= n:
                return got
            time.sleep(0.05)
        return self.events(type_)
