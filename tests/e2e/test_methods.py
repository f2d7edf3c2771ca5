"""End to end: every HTTP method on `gligabao serve` gets a JSON answer: a
known path with the wrong method is 405 with an `Allow` header, an unknown
path 404, and nothing is written."""

from __future__ import annotations

import json
import socket

import pytest

from conftest import Client
from served import ServedCounting


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/v1/gb/remember", "POST"),
        ("PATCH", "/v1/gb/query", "POST"),
        ("GET", "/v1/gb/search", "POST"),
        ("TRACE", "/v1/gb/remember", "POST"),
        ("OPTIONS", "/v1/gb/query", "POST"),
        ("POST", "/v1/gb/datasets?user_id=u1", "GET, HEAD"),
        ("PUT", "/v1/gb/datasets/main?user_id=u1", "DELETE"),
        ("POST", "/v1/gb/artifacts/1?user_id=u1", "DELETE, GET, HEAD"),
        ("DELETE", "/v1/gb/calls/abc?user_id=u1", "GET, HEAD"),
        ("GET", "/v1/gb/entities/1/split", "POST"),
        ("POST", "/openapi.json", "GET, HEAD"),
        ("PUT", "/ui", "GET, HEAD"),
        ("DELETE", "/mcp", "POST"),
    ],
)
def test_a_known_path_with_the_wrong_method_is_a_json_405_with_allow(
    served: ServedCounting, method: str, path: str, allow: str
) -> None:
    before = served.row_counts()
    r = Client(served.url).request(method, path, {"user_id": "u1", "text": "Alice."})
    assert r.status == 405, (method, path, r.body)
    assert r.headers["Allow"] == allow
    assert r.headers["Content-Type"].startswith("application/json")
    assert isinstance(r.body["error"], str) and r.body["error"]
    assert served.row_counts() == before


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "TRACE", "OPTIONS", "PROPFIND"])
def test_an_unknown_path_is_a_json_404_for_any_method(served: ServedCounting, method: str) -> None:
    r = Client(served.url).request(method, "/v1/gb/nowhere")
    assert r.status == 404, r.body
    assert r.body == {"error": "no such route"}


def test_what_http_server_refuses_itself_is_answered_in_json(served: ServedCounting) -> None:
    """A header line over http.server's 64 KiB limit: its 431, in JSON."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(b"GET /v1/gb/datasets HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
        sock.sendall(b"a" * 70000 + b"\r\n\r\n")
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.split(b" ", 2)[1] == b"431", head
    assert b"application/json" in head
    assert "error" in json.loads(body)
