"""JSON over HTTP to a server on loopback (standard library only)."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from . import HOST


def request(
    base: str,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = 120,
) -> tuple[int, Any, dict[str, str]]:
    """(status, JSON body or text, headers). An error status is an answer, not
    an exception; a connection that fails (refused, reset, timed out) is
    status 0 with the error as the body, so that a load run counts it."""
    assert base.startswith(f"http://{HOST}:"), base  # nothing leaves this machine
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, payload, got = resp.status, resp.read(), dict(resp.headers.items())
    except urllib.error.HTTPError as err:
        status, payload, got = err.code, err.read(), dict(err.headers.items())
    except OSError as exc:
        return 0, f"{type(exc).__name__}: {exc}", {}
    try:
        return status, json.loads(payload or b"null"), got
    except ValueError:
        return status, payload.decode(errors="replace"), got


def post(
    base: str, path: str, body: Any, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    status, payload, _ = request(base, "POST", path, body, headers)
    return status, payload


def get(base: str, path: str) -> tuple[int, Any]:
    status, payload, _ = request(base, "GET", path)
    return status, payload


class Connection:
    """One kept-alive HTTP/1.1 connection to ``base``, as an agent's client
    holds one: each request pays no connect (the latency benchmarks)."""

    def __init__(self, base: str, timeout: float = 120) -> None:
        assert base.startswith(f"http://{HOST}:"), base
        self._netloc, self._timeout = urlsplit(base).netloc, timeout
        self._conn = http.client.HTTPConnection(self._netloc, timeout=timeout)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any, dict[str, str]]:
        """(status, JSON body, headers); once more on a fresh connection when
        the server closed the kept one."""
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"}
        try:
            self._conn.request(method, path, body=data, headers=headers)
            resp = self._conn.getresponse()
        except (http.client.HTTPException, OSError):
            self._conn.close()
            self._conn = http.client.HTTPConnection(self._netloc, timeout=self._timeout)
            self._conn.request(method, path, body=data, headers=headers)
            resp = self._conn.getresponse()
        raw = resp.read()
        return resp.status, json.loads(raw or b"null"), dict(resp.headers.items())

    def close(self) -> None:
        self._conn.close()
