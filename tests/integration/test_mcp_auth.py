"""The MCP endpoint under the HTTP routes' authorization: the JWT principal
is the user (events as API Gateway's JWT authorizer delivers them), the dev
key guards the local server, and the body limit holds; each refusal is a
JSON-RPC error with the HTTP API's message, and writes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import Harness
from gligabao.local.server import make_event


@pytest.fixture
def gb(gb_http: Harness) -> Harness:
    """Over a loopback socket: the server's Origin check is a subject here."""
    return gb_http


def _event(
    method: str, target: str, body: Any = None, claims: dict[str, Any] | None = None, **headers: str
) -> dict[str, Any]:
    raw = (
        body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else b""
    )
    event = make_event(
        method, target, {"Content-Type": "application/json", **headers}, raw, "127.0.0.1"
    )
    if claims is not None:
        event["requestContext"]["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
    return event


def _call(handler: Any, event: dict[str, Any]) -> tuple[int, Any]:
    out = handler(event, None)
    return out["statusCode"], json.loads(out["body"]) if out.get("body") else None


def _rpc(method: str, params: dict[str, Any] | None = None, id_: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params else {})}


def _tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return _rpc("tools/call", {"name": name, "arguments": arguments})


def test_the_jwt_principal_is_the_user(gb: Harness) -> None:
    from gligabao.handlers import datasets, mcp

    gb.remember("Alice works at Acme.", user="alice")
    alice = {"sub": "alice"}
    status, body = _call(mcp.lambda_handler, _event("POST", "/mcp", _rpc("tools/list"), alice))
    assert status == 200
    for tool in body["result"]["tools"]:
        assert "user_id" not in tool["inputSchema"]["properties"], tool["name"]
        assert "user_id" not in tool["inputSchema"].get("required", []), tool["name"]

    event = _event("POST", "/mcp", _tool("list_datasets", {}), alice)
    status, body = _call(mcp.lambda_handler, event)
    assert status == 200, body
    assert [d["name"] for d in body["result"]["structuredContent"]["datasets"]] == ["main"]

    # Another user's memory: 403 over HTTP, the same refusal over MCP.
    before = gb.row_counts()
    http_status, http = _call(
        datasets.lambda_handler,
        _event("GET", "/v1/gb/datasets?user_id=alice", claims={"sub": "mallory"}),
    )
    assert http_status == 403
    for name, arguments in [
        ("list_datasets", {"user_id": "alice"}),
        ("remember", {"user_id": "alice", "text": "Mallory was here."}),
        ("query", {"user_id": "alice", "query": "Where does Alice work?"}),
        ("search", {"user_id": "alice", "query": "Where does Alice work?"}),
    ]:
        event = _event("POST", "/mcp", _tool(name, arguments), {"sub": "mallory"})
        status, body = _call(mcp.lambda_handler, event)
        assert status == 200, name
        # a refusal in running the tool: its error result, for the model
        assert body["result"]["isError"] is True, name
        assert body["result"]["content"][0]["text"] == http["error"], name
        assert body["result"]["structuredContent"]["status"] == 403, name
    # Mallory's own (empty) memory, with no user_id: hers, not Alice's.
    status, body = _call(
        mcp.lambda_handler, _event("POST", "/mcp", _tool("list_datasets", {}), {"sub": "mallory"})
    )
    assert body["result"]["structuredContent"] == {"datasets": []}
    assert gb.row_counts() == before
    assert gb.llm.calls() == 1  # Alice's one extraction, nothing since


@pytest.fixture
def gb_env(request: pytest.FixtureRequest) -> dict[str, str]:
    return dict(getattr(request, "param", {}))


@pytest.mark.parametrize("gb_env", [{"GB_DEV_API_KEY": "s3cret"}], indirect=True)
def test_the_dev_key_guards_every_message(gb: Harness) -> None:
    before = gb.row_counts()
    http = gb.client.get("/v1/gb/datasets?user_id=u1")
    assert http.status == 401
    for message in [
        _rpc(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "0"},
            },
        ),
        _rpc("tools/list"),
        _tool("remember", {"user_id": "u1", "text": "Alice works at Acme."}),
    ]:
        r = gb.client.post("/mcp", message)
        assert r.status == 401, message
        assert r.body["id"] == 1
        assert r.body["error"]["message"] == http.body["error"]
        assert r.body["error"]["data"]["status"] == 401
    r = gb.client.post("/mcp", _rpc("tools/list"), headers={"x-api-key": "s3cret"})
    from gligabao.handlers.mcp import TOOLS

    assert r.status == 200 and len(r.body["result"]["tools"]) == len(TOOLS)
    r = gb.client.post("/mcp", _rpc("tools/list"), headers={"Authorization": "Bearer s3cret"})
    assert r.status == 200
    assert gb.row_counts() == before
    assert gb.llm.calls() == 0


def test_the_body_limit_is_a_json_rpc_error(gb: Harness) -> None:
    before = gb.row_counts()
    big = _tool("remember", {"user_id": "u1", "text": "x" * (65 * 1024)})
    r = gb.client.post("/mcp", big)
    assert r.status == 413
    http = gb.client.post("/v1/gb/remember", big["params"]["arguments"])
    assert http.status == 413
    assert r.body == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32000, "message": http.body["error"], "data": {"status": 413}},
    }
    assert gb.row_counts() == before
    assert gb.llm.calls() == 0


def test_the_open_local_server_refuses_web_pages_of_other_origins(gb: Harness) -> None:
    """DNS rebinding: a page of another origin cannot use the keyless local
    server (MCP asks servers to check Origin); its own pages and clients
    that are not browsers (no Origin) can."""
    before = gb.row_counts()
    for origin in ("http://evil.example", "http://127.0.0.1.evil.example:7878", "null"):
        for path, body in [
            ("/mcp", _tool("remember", {"user_id": "u1", "text": "Alice works at Acme."})),
            ("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."}),
        ]:
            r = gb.client.post(path, body, headers={"Origin": origin})
            assert r.status == 403, (origin, path)
    assert gb.row_counts() == before
    assert gb.llm.calls() == 0
    # A page of this server may post; one on another loopback port (a dev
    # server, an inspector) only when GB_ALLOWED_ORIGINS lists it (below).
    r = gb.client.post("/mcp", _rpc("tools/list"), headers={"Origin": gb.client.base})
    assert r.status == 200
    for origin in ("http://localhost:6274", "http://127.0.0.1:7878", "http://[::1]:8080"):
        r = gb.client.post("/mcp", _rpc("tools/list"), headers={"Origin": origin})
        assert r.status == 403, origin


@pytest.mark.parametrize("gb_env", [{"GB_ALLOWED_ORIGINS": "http://localhost:6274"}], indirect=True)
def test_an_allowed_origin_may_post(gb: Harness) -> None:
    r = gb.client.post("/mcp", _rpc("tools/list"), headers={"Origin": "http://localhost:6274"})
    assert r.status == 200
    r = gb.client.post("/mcp", _rpc("tools/list"), headers={"Origin": "http://localhost:3000"})
    assert r.status == 403


@pytest.mark.parametrize("gb_env", [{"GB_DEV_API_KEY": "s3cret"}], indirect=True)
def test_with_a_key_the_key_decides_not_the_origin(gb: Harness) -> None:
    headers = {"Origin": "https://app.example", "x-api-key": "s3cret"}
    assert gb.client.post("/mcp", _rpc("tools/list"), headers=headers).status == 200
    r = gb.client.post("/mcp", _rpc("tools/list"), headers={"Origin": "https://app.example"})
    assert r.status == 401
