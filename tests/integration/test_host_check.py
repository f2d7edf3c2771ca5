"""DNS rebinding: the local server answers only requests whose Host is a
loopback name or address, or one that GB_ALLOWED_HOSTS lists; anything else
is a 421 with a JSON error, before any route runs (no Origin needed: a
rebound page's requests are same-origin and carry none)."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest
from remember_helpers import works_at

from conftest import Harness


@pytest.fixture
def gb(gb_http: Harness) -> Harness:
    """Over a loopback socket: the server's Host check is the subject."""
    return gb_http


def send(
    gb: Harness, method: str, path: str, host: str, body: object = None
) -> tuple[int, dict[str, str], bytes]:
    """One request with exactly this Host header (http.client sends the one
    given instead of its own)."""
    where = urlsplit(gb.client.base)
    conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=60)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host)
        if data is not None:
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


@pytest.fixture
def gb_env(request: pytest.FixtureRequest) -> dict[str, str]:
    return getattr(request, "param", {})


FOREIGN = [
    "evil.example:7878",
    "evil.example",
    "127.0.0.1.evil.example:7878",
    "localhost.evil.example",
]


@pytest.mark.parametrize("host", FOREIGN)
def test_a_foreign_host_gets_421_json_and_nothing_runs(gb: Harness, host: str) -> None:
    gb.llm.script("extract", works_at("Alice", "Acme"))
    gb.remember("Alice works at Acme.")
    calls = gb.llm.calls()
    before = gb.row_counts()
    for method, path, body in [
        ("GET", "/v1/gb/datasets?user_id=u1", None),
        ("GET", "/v1/gb/inferences?user_id=u1", None),
        ("POST", "/v1/gb/remember", {"user_id": "u1", "text": "Bob works at Initech."}),
        ("POST", "/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"}),
        ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("DELETE", "/v1/gb/datasets/main?user_id=u1", None),
        ("GET", "/ui/", None),
        ("GET", "/openapi.json", None),
    ]:
        status, headers, raw = send(gb, method, path, host, body)
        assert status == 421, (method, path, status)
        assert headers["content-type"] == "application/json"
        payload = json.loads(raw)
        assert set(payload) == {"error"} and "GB_ALLOWED_HOSTS" in payload["error"]
        assert b"Alice" not in raw and b"Acme" not in raw
    assert gb.row_counts() == before
    assert gb.llm.calls() == calls


def test_a_request_without_host_is_refused(gb: Harness) -> None:
    where = urlsplit(gb.client.base)
    conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=60)
    try:
        conn.putrequest("GET", "/v1/gb/datasets?user_id=u1", skip_host=True)
        conn.endheaders()
        resp = conn.getresponse()
        # HTTP/1.1 without Host is malformed (RFC 9112 3.2: 400), refused by h11 itself
        assert resp.status == 400
        assert "Host" in json.loads(resp.read())["error"]
    finally:
        conn.close()


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "localhost:7878",
        "127.0.0.1:1",
        "127.8.9.10",
        "[::1]:7878",
        "[::1]",
        "LOCALHOST:80",
    ],
)
def test_loopback_hosts_are_answered(gb: Harness, host: str) -> None:
    status, _, raw = send(gb, "GET", "/v1/gb/datasets?user_id=u1", host)
    assert status == 200, raw
    assert json.loads(raw) == {"datasets": []}
    status, headers, page = send(gb, "GET", "/ui/", host)
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert b'<script type="module" src="js/app.js">' in page


@pytest.mark.parametrize(
    "gb_env", [{"GB_ALLOWED_HOSTS": "memory.internal, gb.example:8443"}], indirect=True
)
def test_allowed_hosts_are_answered_with_their_port(gb: Harness) -> None:
    for host in ["memory.internal", "memory.internal:7878", "MEMORY.internal:1", "gb.example:8443"]:
        status, _, raw = send(gb, "GET", "/v1/gb/datasets?user_id=u1", host)
        assert status == 200, (host, raw)
    # a listed port is that port only; other names stay refused
    for host in ["gb.example", "gb.example:7878", "evil.example", "internal"]:
        assert send(gb, "GET", "/v1/gb/datasets?user_id=u1", host)[0] == 421, host
