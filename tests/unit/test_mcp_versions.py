"""The MCP server's choice of protocol era and its 2026-07-28 checks, on the
server object itself: the cases an HTTP client library will not send (control
characters in a header, a version that is not a string) and the order of the
checks. The HTTP end to end is tests/e2e/test_mcp_2026.py."""

from __future__ import annotations

import base64
import json
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel, ConfigDict

from gligabao.mcp.server import McpServer
from gligabao.mcp.tools import Caller, ToolSpec
from gligabao.mcp.versions import decode_header_value

V = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientCapabilities": {},
}


class EchoIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    word: str


class EchoOut(BaseModel):
    word: str


def _echo(caller: Caller, req: EchoIn, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"word": req.word}


SERVER = McpServer("t", "1", [ToolSpec("echo", "Echo a word.", EchoIn, EchoOut, _echo)])


def handle(message: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    reply = SERVER.handle(
        json.dumps(message),
        {k.lower(): v for k, v in headers.items()},
        lambda: None,
        lambda principal: Caller(principal, None),
        "call-1",
    )
    assert reply.body is not None
    return reply.status, reply.body


def call(word: Any = "hi", meta: Any = META, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"word": word}, "_meta": meta, **params},
    }


HEADERS = {"MCP-Protocol-Version": V, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}


def test_a_conforming_call_is_answered() -> None:
    status, body = handle(call(), HEADERS)
    assert status == 200
    assert body["result"]["structuredContent"] == {"word": "hi"}
    assert body["result"]["resultType"] == "complete"


@pytest.mark.parametrize(
    "headers",
    [
        {**HEADERS, "Mcp-Name": "ec\x01ho"},
        {**HEADERS, "Mcp-Method": "tools/call\x7f"},
        {**HEADERS, "MCP-Protocol-Version": "2026-07-28\x00"},
        {**HEADERS, "Mcp-Name": "echo, echo"},  # a header sent twice, joined by a proxy
    ],
)
def test_a_header_with_characters_it_may_not_have_or_doubled_is_a_mismatch(
    headers: dict[str, str],
) -> None:
    status, body = handle(call(), headers)
    assert (status, body["error"]["code"]) == (400, -32020)


def test_the_headers_are_checked_before_the_version() -> None:
    """A client whose header and body disagree is told so (-32020), not that
    its body's version is unsupported."""
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    status, body = handle(call(meta=meta), HEADERS)
    assert (status, body["error"]["code"]) == (400, -32020)


@pytest.mark.parametrize(
    ("meta", "code"),
    [
        ({**META, "io.modelcontextprotocol/protocolVersion": 2026}, -32020),  # header != body
        ({**META, "io.modelcontextprotocol/clientCapabilities": []}, -32602),
        ("not an object", -32602),
    ],
)
def test_a_malformed_meta_is_refused(meta: Any, code: int) -> None:
    status, body = handle(call(meta=meta), HEADERS)
    assert (status, body["error"]["code"]) == (400, code)


def test_a_handshake_version_in_the_header_is_the_handshake_era() -> None:
    """No _meta, no Mcp-Method asked for; no resultType in the result."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"word": "hi"}},
    }
    status, body = handle(message, {"MCP-Protocol-Version": "2025-11-25"})
    assert status == 200
    assert body["result"]["structuredContent"] == {"word": "hi"}
    assert "resultType" not in body["result"]


def test_a_request_with_no_version_anywhere_is_the_handshake_era() -> None:
    status, body = handle({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {})
    assert (status, body["result"]) == (200, {})


def test_a_2026_version_in_meta_alone_asks_for_the_header() -> None:
    status, body = handle(call(), {})
    assert (status, body["error"]["code"]) == (400, -32020)
    assert "MCP-Protocol-Version header is missing" in body["error"]["message"]


def test_the_tool_error_conforms_to_the_output_schema() -> None:
    status, body = handle(call(word=5), HEADERS)
    assert status == 200 and body["result"]["isError"] is True
    [tool] = handle(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META}},
        {"MCP-Protocol-Version": V, "Mcp-Method": "tools/list"},
    )[1]["result"]["tools"]
    jsonschema.validate(body["result"]["structuredContent"], tool["outputSchema"])
    jsonschema.validate({"word": "hi"}, tool["outputSchema"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"word": 5}, tool["outputSchema"])


@pytest.mark.parametrize(
    ("value", "decoded"),
    [
        ("echo", "echo"),
        ("=?base64?" + base64.b64encode("héllo".encode()).decode() + "?=", "héllo"),
        ("=?base64?!!!?=", "=?base64?!!!?="),  # not the sentinel's alphabet: itself
        ("=?base64?AA=A?=", None),  # the sentinel, but not base64
        ("=?base64?" + base64.b64encode(b"\xff").decode() + "?=", None),  # not UTF-8
    ],
)
def test_decode_header_value(value: str, decoded: str | None) -> None:
    assert decode_header_value(value) == decoded
