"""The small ones, on raw sockets against `gligabao serve`: HEAD where GET is
(the GET's headers, no body), Allow that lists only what is served (PUT
/mcp: POST), a malformed request line or a NUL in a path answered in JSON
with a status line and a call id, like every other error."""

from __future__ import annotations

import pytest
from rawhttp import connect, exchange, request

from served import ServedCounting


def test_head_is_answered_where_get_is(served: ServedCounting) -> None:
    got = exchange(served.port, request("GET", "/v1/gb/datasets?user_id=u1", {}))
    assert got.status == 200
    with connect(served.port) as sock:
        sock.sendall(request("HEAD", "/v1/gb/datasets?user_id=u1", {}))
        sock.settimeout(5)
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(65536)
    status_line, _, rest = head.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.1 200"), head
    assert rest.endswith(b"\r\n\r\n")  # the headers, and no body after them
    assert f"content-length: {len(got.raw)}".encode() in head.lower()


@pytest.mark.parametrize("path", ["/openapi.json", "/ui/"])
def test_head_on_the_servers_own_documents(served: ServedCounting, path: str) -> None:
    with connect(served.port) as sock:
        sock.sendall(request("HEAD", path, {}))
        head = sock.recv(65536)
    assert head.startswith(b"HTTP/1.1 200"), head


def test_allow_lists_only_what_is_served(served: ServedCounting) -> None:
    for method in ("PUT", "GET", "DELETE"):
        answer = exchange(served.port, request(method, "/mcp", {}))
        assert answer.status == 405, (method, answer.raw)
        assert answer.headers["allow"] == "POST"


@pytest.mark.parametrize(
    "data",
    [
        b"GARBAGE\r\n\r\n",
        b"GET /v1/gb/datasets HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /ui/a\x00b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /v1/gb/datasets HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n",
    ],
    ids=["no-request-line", "bad-version", "nul-in-path", "bad-header"],
)
def test_a_malformed_request_is_a_json_400_with_a_call_id(
    served: ServedCounting, data: bytes
) -> None:
    answer = exchange(served.port, data)
    assert answer.status in (400, 505), answer.raw
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers.get("x-gb-call-id")
    assert "error" in answer.json


def test_an_encoded_nul_in_a_ui_path_is_a_json_404(served: ServedCounting) -> None:
    answer = exchange(served.port, request("GET", "/ui/a%00b.html", {}))
    assert answer.status == 404, answer.raw
    assert answer.headers.get("x-gb-call-id")
    assert answer.json == {"error": "no such file"}


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/nowhere"), ("POST", "/openapi.json"), ("GET", "/ui/nothing.html")],
)
def test_every_error_has_a_call_id(served: ServedCounting, method: str, path: str) -> None:
    answer = exchange(served.port, request(method, path, {"Content-Length": "0"}))
    assert answer.status >= 400
    assert answer.headers.get("x-gb-call-id")
    assert "error" in answer.json
