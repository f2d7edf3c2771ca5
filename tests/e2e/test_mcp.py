"""End to end: the MCP endpoint of a running `gligabao serve`, driven by the
official `mcp` SDK's own client, and by raw JSON-RPC over HTTP for what a
well-behaved client never sends."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import jsonschema
import pytest

from conftest import Client
from fakes.anthropic_server import FakeAnthropic
from gligabao.api.requests import (
    DatasetsRequest,
    ForgetRequest,
    QueryRequest,
    RememberRequest,
    SearchRequest,
)
from served import ALICE_AT_ACME as EXTRACT
from served import ServedCounting

mcp_client = pytest.importorskip("mcp.client.client")
from mcp.shared.exceptions import MCPError  # noqa: E402

INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"},
}


def rpc(served: ServedCounting, message: Any, *, raw: bytes | None = None, **headers: str) -> Any:
    return Client(served.url).post("/mcp", message, raw=raw, headers=headers)


# ------------------------------------------------------------ the SDK's client


async def _session(url: str, user: str, mode: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with mcp_client.Client(url, mode=mode) as client:
        out["version"] = client.protocol_version
        out["server"] = client.server_info.name if client.server_info else None
        out["tools"] = {t.name: t for t in (await client.list_tools()).tools}
        out["remember"] = await client.call_tool(
            "remember",
            {"user_id": user, "text": "Alice works at Acme.", "idempotency_key": "k-1"},
        )
        out["search"] = await client.call_tool(
            "search", {"user_id": user, "query": "Where does Alice work?"}
        )
        out["query"] = await client.call_tool(
            "query", {"user_id": user, "query": "Where does Alice work?"}
        )
        out["datasets"] = await client.call_tool("list_datasets", {"user_id": user})
        out["missing"] = await client.call_tool(
            "query", {"user_id": user, "query": "x", "dataset": "nope"}
        )
        try:
            await client.call_tool("recall_everything", {"user_id": user})
        except MCPError as exc:
            out["unknown"] = exc
    return out


# The SDK's modes: "legacy" is the initialize handshake (the newest handshake
# revision); "auto" probes server/discover and stays stateless when the server
# speaks 2026-07-28; a version pins it without a probe.
SDK_MODES = [("legacy", "2025-11-25"), ("auto", "2026-07-28"), ("2026-07-28", "2026-07-28")]


@pytest.mark.parametrize(("mode", "version"), SDK_MODES)
def test_the_sdk_client_lists_and_calls_every_tool(
    served: ServedCounting, llm: FakeAnthropic, mode: str, version: str
) -> None:
    llm.script("extract", EXTRACT)
    llm.script("query", {"answer": "At Acme.", "entities": [], "edges": [1], "passages": []})
    user = f"sdk-user-{mode}"
    out = asyncio.run(_session(served.url + "/mcp", user, mode))

    assert out["version"] == version
    # A pinned version sends no server/discover: nothing named the server yet.
    assert out["server"] == (None if mode == version else "gligabao")
    if version == "2026-07-28":  # each result names it instead
        meta = out["remember"].meta or {}
        assert meta["io.modelcontextprotocol/serverInfo"]["name"] == "gligabao"
    tools = out["tools"]
    assert sorted(tools) == [
        "correct_fact",
        "forget",
        "forget_fact",
        "get_schema",
        "list_conflicts",
        "list_datasets",
        "put_schema",
        "query",
        "remember",
        "search",
    ]
    # The schemas are the HTTP API's request models: every field, no other.
    for name, model in [
        ("remember", RememberRequest),
        ("query", QueryRequest),
        ("search", SearchRequest),
        ("list_datasets", DatasetsRequest),
        ("forget", ForgetRequest),
    ]:
        assert set(tools[name].input_schema["properties"]) == set(model.model_fields), name
        assert "user_id" in tools[name].input_schema["required"]
        assert tools[name].output_schema["type"] == "object"
    assert tools["remember"].annotations.read_only_hint is False
    assert tools["search"].annotations.read_only_hint is True

    # Every result is valid against its tool's output schema.
    for name, key in [
        ("remember", "remember"),
        ("search", "search"),
        ("query", "query"),
        ("list_datasets", "datasets"),
    ]:
        jsonschema.validate(out[key].structured_content, tools[name].output_schema)

    remembered = out["remember"].structured_content
    assert not out["remember"].is_error
    assert [e["name"] for e in remembered["entities"]] == ["Alice", "Acme"]
    assert json.loads(out["remember"].content[0].text) == remembered

    found = out["search"].structured_content
    assert [e["relation"] for e in found["edges"]] == ["works_at"]
    assert {e["name"] for e in found["entities"]} == {"Alice", "Acme"}
    assert found["context_tokens"] > 0

    answered = out["query"].structured_content
    assert answered["answer"] == "At Acme."
    assert [e["id"] for e in answered["evidence"]["edges"]] == [1]

    [dataset] = out["datasets"].structured_content["datasets"]
    assert (dataset["name"], dataset["edges"]) == ("main", 1)

    # A use case's error is the tool's result, for the model: the HTTP API's
    # message as text, its status as structured content.
    missing = out["missing"]
    http = Client(served.url).post(
        "/v1/gb/query", {"user_id": user, "query": "x", "dataset": "nope"}
    )
    assert http.status == 404
    assert missing.is_error is True
    assert missing.content[0].text == http.body["error"]
    assert missing.structured_content["status"] == 404
    assert missing.structured_content["error"] == http.body["error"]
    # Its structured content conforms to the tool's output schema too (clients
    # such as the MCP Inspector check it even on an error).
    jsonschema.validate(missing.structured_content, tools["query"].output_schema)
    # An unknown tool is the protocol's error, raised by the client.
    assert out["unknown"].error.code == -32602
    assert "unknown tool" in out["unknown"].error.message
    # search made no LLM call; query one; remember one extraction.
    assert llm.calls("query") == 1
    assert llm.calls("extract") == 1


def test_remember_through_mcp_is_idempotent_with_its_key(
    served: ServedCounting, llm: FakeAnthropic
) -> None:
    llm.script("extract", EXTRACT)
    args = {"user_id": "idem-user", "text": "Alice works at Acme.", "idempotency_key": "same"}
    call = {"name": "remember", "arguments": args}
    empty = served.row_counts()
    first = rpc(served, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    before = served.row_counts()
    assert before != empty  # the counts see what a remember writes
    second = rpc(served, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
    assert first.status == second.status == 200
    replayed = second.body["result"]["structuredContent"]
    assert replayed == first.body["result"]["structuredContent"]
    assert json.loads(second.body["result"]["content"][0]["text"]) == replayed
    assert second.body["id"] == 2
    assert served.row_counts() == before
    assert llm.calls("extract") == 1


def test_remember_through_mcp_takes_chat_messages_in_one_extraction(
    served: ServedCounting, llm: FakeAnthropic
) -> None:
    llm.script("extract", EXTRACT)
    extractions = llm.calls("extract")
    messages = [
        {"role": "user", "name": "Alice", "content": "I started at Acme this week."},
        {"role": "assistant", "content": "Congratulations on the new job!"},
    ]
    args = {"user_id": "chat-user", "session_id": "c1", "messages": messages}
    reply = rpc(served, _tool_call("remember", args))
    assert reply.status == 200, reply.body
    result = reply.body["result"]
    assert "isError" not in result or result["isError"] is False, result
    artifacts = result["structuredContent"]["artifacts"]
    assert len(artifacts) == 2
    assert llm.calls("extract") == extractions + 1  # one extraction for the window
    listed = Client(served.url).get("/v1/gb/artifacts?user_id=chat-user&session_id=c1")
    assert listed.status == 200, listed.body
    said = [(a["speaker"], a["text"]) for a in listed.body["artifacts"]]
    assert said == [("Alice", messages[0]["content"]), ("assistant", messages[1]["content"])]


# ------------------------------------------------------------ raw JSON-RPC


def _tool_call(name: str, arguments: Any, id_: Any = 7) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


BAD_REMEMBERS = [
    {"user_id": "raw-user"},  # no text
    {"user_id": "raw-user", "text": 12},  # not a string
    {"user_id": "raw-user", "text": "hi", "colour": "red"},  # unknown field
    {"user_id": "raw-user", "text": "hi", "dataset": "a/b"},  # bad dataset name
    {"user_id": "raw-user", "text": "hi", "reasoning": "extreme"},  # unknown level
    {"text": "hi"},  # no user_id (no token names one)
]


def tool_error(reply: Any, status: int, message: str, id_: Any = 7) -> dict[str, Any]:
    """The reply is a tool's execution error: a result (not a JSON-RPC
    error) with isError, the HTTP API's message as its text and the status
    in its structured content, which it returns."""
    assert reply.status == 200, reply.body
    assert reply.body["id"] == id_
    assert "error" not in reply.body, reply.body
    result = reply.body["result"]
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": message}]
    assert result["structuredContent"]["status"] == status
    assert result["structuredContent"]["error"] == message
    return dict(result["structuredContent"])


@pytest.mark.parametrize("arguments", BAD_REMEMBERS)
def test_bad_tool_arguments_are_a_tool_error_with_the_http_message_and_write_nothing(
    served: ServedCounting, llm: FakeAnthropic, arguments: dict[str, Any]
) -> None:
    before = served.row_counts()
    reply = rpc(served, _tool_call("remember", arguments))
    http = Client(served.url).post("/v1/gb/remember", arguments)
    assert http.status == 400
    tool_error(reply, 400, http.body["error"])
    assert served.row_counts() == before
    assert llm.calls() == 0


def _graph_rows(served: ServedCounting) -> dict[str, int]:
    """The memory's rows, without the call records a failed call keeps."""
    return {t: n for t, n in served.row_counts().items() if not t.startswith(("call", "inference"))}


def test_an_upstream_failure_is_a_tool_error_with_its_status_and_writes_nothing(
    served: ServedCounting, llm: FakeAnthropic
) -> None:
    llm.script("extract", EXTRACT)
    user = "upstream-user"
    first = rpc(served, _tool_call("remember", {"user_id": user, "text": "Alice works at Acme."}))
    assert first.body["result"].get("isError") is not True, first.body
    before = _graph_rows(served)
    llm.fail_next(500, stage="query")
    reply = rpc(served, _tool_call("query", {"user_id": user, "query": "Where?"}))
    llm.fail_next(500, stage="query")
    http = Client(served.url).post("/v1/gb/query", {"user_id": user, "query": "Where?"})
    assert http.status == 502, http.body
    detail = tool_error(reply, 502, http.body["error"])
    assert detail["call_id"] == reply.headers["X-Gb-Call-Id"]
    assert _graph_rows(served) == before
    assert llm.calls("query") == 2


def test_a_remember_whose_key_is_in_progress_is_a_409_tool_error_and_writes_nothing(
    served: ServedCounting, llm: FakeAnthropic
) -> None:
    """The first remember waits 2 s in its extraction; the second, with the
    same key, is told to retry (409) and stores nothing of its own."""
    llm.delay_next(2.0, "extract")
    llm.script("extract", EXTRACT)
    args = {"user_id": "busy-user", "text": "Alice works at Acme.", "idempotency_key": "k"}
    first: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: first.update(reply=rpc(served, _tool_call("remember", args, 1)))
    )
    thread.start()
    deadline = time.monotonic() + 30
    while not llm.requests_for("extract"):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    before = _graph_rows(served)
    second = rpc(served, _tool_call("remember", args, 2))
    assert _graph_rows(served) == before
    thread.join(timeout=60)
    tool_error(second, 409, "a remember with this Idempotency-Key is still in progress", 2)
    assert first["reply"].body["result"]["structuredContent"]["entities"]
    assert llm.calls("extract") == 1


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"\xff\xfe", -32700),
        (b"", -32700),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', -32600),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', -32600),
        (b'"just a string"', -32600),
    ],
)
def test_malformed_json_rpc_is_a_json_rpc_error_and_writes_nothing(
    served: ServedCounting, llm: FakeAnthropic, body: bytes, code: int
) -> None:
    before = served.row_counts()
    reply = rpc(served, None, raw=body)
    assert reply.status == 400
    assert reply.body["jsonrpc"] == "2.0"
    assert reply.body["id"] is None
    assert reply.body["error"]["code"] == code
    assert served.row_counts() == before
    assert llm.calls() == 0


@pytest.mark.parametrize(
    ("message", "code", "text"),
    [
        (_tool_call("forget_everything", {"user_id": "raw-user"}), -32602, "unknown tool"),
        (
            {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"arguments": {}}},
            -32602,
            "name",
        ),
        (_tool_call("remember", "not an object"), -32602, "arguments"),
        ({"jsonrpc": "2.0", "id": 3, "method": "resources/list"}, -32601, "method not found"),
        (
            {"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"capabilities": {}}},
            -32602,
            "protocolVersion",
        ),
    ],
)
def test_unknown_tools_and_methods_are_json_rpc_errors_and_write_nothing(
    served: ServedCounting, llm: FakeAnthropic, message: dict[str, Any], code: int, text: str
) -> None:
    before = served.row_counts()
    reply = rpc(served, message)
    assert reply.status == 200
    assert reply.body["id"] == message["id"]
    assert reply.body["error"]["code"] == code
    assert text in reply.body["error"]["message"]
    assert served.row_counts() == before
    assert llm.calls() == 0


def test_the_handshake_notifications_and_what_a_stateless_server_refuses(
    served: ServedCounting,
) -> None:
    init = rpc(served, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
    assert init.status == 200
    assert init.body["result"]["protocolVersion"] == "2025-06-18"
    assert init.body["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert "mcp-session-id" not in {k.lower() for k in init.headers}
    # An older revision is offered the newest one (the client then decides).
    old = {**INIT, "protocolVersion": "2024-11-05"}
    init = rpc(served, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": old})
    assert init.body["result"]["protocolVersion"] == "2025-11-25"

    note = rpc(served, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert (note.status, note.body) == (202, None)
    ping = rpc(served, {"jsonrpc": "2.0", "id": 9, "method": "ping"})
    assert ping.body == {"jsonrpc": "2.0", "id": 9, "result": {}}

    bad = rpc(
        served,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        **{"MCP-Protocol-Version": "2099-01-01"},
    )
    assert bad.status == 400
    assert bad.body["error"]["code"] == -32022
    assert bad.body["error"]["data"] == {
        "supported": ["2026-07-28", "2025-11-25", "2025-06-18"],
        "requested": "2099-01-01",
    }
    ok = rpc(
        served,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        **{"MCP-Protocol-Version": "2025-06-18"},
    )
    from gligabao.handlers.mcp import TOOLS

    assert len(ok.body["result"]["tools"]) == len(TOOLS)

    for method in ("GET", "DELETE"):
        r = Client(served.url).request(method, "/mcp")
        assert r.status == 405, method
        assert r.headers.get("Allow") == "POST"
