"""End to end: MCP 2026-07-28, the stateless revision, on a running
`gligabao serve`, in raw JSON-RPC over HTTP: no initialize; each request
declares its version in ``params._meta`` and mirrors it, its method and its
tool's name in headers the server checks against the body. The handshake
revisions (2025-06-18, 2025-11-25) on the same endpoint, unchanged.

Every 2026-07-28 result is checked against that revision's wire types in the
official SDK (``mcp_types.methods``)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from conftest import Client, Reply
from fakes.anthropic_server import FakeAnthropic
from served import ALICE_AT_ACME, AT_ACME, ServedCounting

methods = pytest.importorskip("mcp_types.methods")

V = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
TOOLS = [
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


def request(method: str, id_: Any = 1, meta: Any = META, **params: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if meta is not None:
        params["_meta"] = meta
    body["params"] = params
    return body


def headers_of(message: dict[str, Any]) -> dict[str, str]:
    """The headers a conforming client sends with ``message``."""
    out = {"MCP-Protocol-Version": V, "Mcp-Method": message["method"]}
    if message["method"] == "tools/call":
        out["Mcp-Name"] = message["params"]["name"]
    return out


def post(served: ServedCounting, message: dict[str, Any], **headers: str | None) -> Reply:
    sent = {k: v for k, v in {**headers_of(message), **headers}.items() if v is not None}
    return Client(served.url).post("/mcp", message, headers=sent)


def result_of(reply: Reply, method: str, id_: Any = 1) -> dict[str, Any]:
    """A successful reply's result, valid on the 2026-07-28 wire."""
    assert reply.status == 200, reply.body
    assert reply.headers["Content-Type"].startswith("application/json")
    assert reply.body["id"] == id_ and "error" not in reply.body, reply.body
    result: dict[str, Any] = reply.body["result"]
    methods.validate_server_result(method, V, result)
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "gligabao"
    return result


def error_of(reply: Reply, status: int, code: int, id_: Any = 1) -> dict[str, Any]:
    assert reply.status == status, reply.body
    assert reply.body["id"] == id_, reply.body
    assert "result" not in reply.body
    error: dict[str, Any] = reply.body["error"]
    assert error["code"] == code, error
    return error


# ------------------------------------------------------------ what works


def test_server_discover_names_the_versions_capabilities_and_server(
    served: ServedCounting,
) -> None:
    result = result_of(post(served, request("server/discover")), "server/discover")
    assert result["supportedVersions"] == ["2026-07-28", "2025-11-25", "2025-06-18"]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert "memory" in result["instructions"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"]
    assert (result["cacheScope"], result["ttlMs"]) == ("private", 300_000)


def test_tools_list_and_call_without_initialize(served: ServedCounting, llm: FakeAnthropic) -> None:
    llm.script("extract", ALICE_AT_ACME)
    llm.script("query", AT_ACME)
    user = "modern-user"
    listed = result_of(post(served, request("tools/list")), "tools/list")
    assert sorted(t["name"] for t in listed["tools"]) == TOOLS
    assert all(t["inputSchema"]["type"] == "object" for t in listed["tools"])
    assert (listed["cacheScope"], listed["ttlMs"]) == ("private", 300_000)

    def call(name: str, id_: int, **arguments: Any) -> dict[str, Any]:
        message = request("tools/call", id_, name=name, arguments={"user_id": user, **arguments})
        return result_of(post(served, message), "tools/call", id_)

    remembered = call("remember", 2, text="Alice works at Acme.", idempotency_key="m-1")
    assert remembered.get("isError") is not True, remembered
    assert [e["name"] for e in remembered["structuredContent"]["entities"]] == ["Alice", "Acme"]
    answered = call("query", 3, query="Where does Alice work?")
    assert answered["structuredContent"]["answer"] == "At Acme."
    found = call("search", 4, query="Where does Alice work?")
    assert [e["relation"] for e in found["structuredContent"]["edges"]] == ["works_at"]
    [dataset] = call("list_datasets", 5)["structuredContent"]["datasets"]
    assert (dataset["name"], dataset["edges"]) == ("main", 1)
    # A tool's execution error is still a result the model reads (isError).
    missing = call("query", 6, query="x", dataset="nope")
    assert missing["isError"] is True
    assert missing["structuredContent"]["status"] == 404
    assert llm.calls("extract") == 1 and llm.calls("query") == 1


def test_a_notification_is_accepted_without_an_answer(served: ServedCounting) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    reply = Client(served.url).post(
        "/mcp", note, headers={"MCP-Protocol-Version": V, "Mcp-Method": note["method"]}
    )
    assert (reply.status, reply.body) == (202, None)


@pytest.mark.parametrize("method", ["ping", "resources/list", "logging/setLevel"])
def test_a_method_this_revision_does_not_serve_is_404_method_not_found(
    served: ServedCounting, method: str
) -> None:
    error = error_of(post(served, request(method)), 404, -32601)
    assert method in error["message"]


def test_an_unknown_tool_is_a_protocol_error(served: ServedCounting) -> None:
    message = request("tools/call", name="forget_everything", arguments={"user_id": "u"})
    error = error_of(post(served, message), 400, -32602)
    assert "unknown tool" in error["message"]


# ------------------------------------------------------------ the version


@pytest.mark.parametrize(
    "meta",
    [
        None,  # no _meta at all
        {"io.modelcontextprotocol/clientCapabilities": {}},  # no version
        {"io.modelcontextprotocol/protocolVersion": V},  # no client capabilities
    ],
)
def test_a_request_without_its_required_meta_is_invalid_params(
    served: ServedCounting, meta: Any
) -> None:
    error = error_of(post(served, request("tools/list", meta=meta)), 400, -32602)
    assert "_meta" in error["message"]


@pytest.mark.parametrize("version", ["2099-01-01", "1900-01-01", "2024-11-05"])
def test_an_unsupported_version_is_refused_with_the_supported_ones(
    served: ServedCounting, version: str
) -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": version}
    reply = post(served, request("tools/list", meta=meta), **{"MCP-Protocol-Version": version})
    error = error_of(reply, 400, -32022)
    assert error["data"] == {
        "supported": ["2026-07-28", "2025-11-25", "2025-06-18"],
        "requested": version,
    }


def test_an_unsupported_version_in_the_header_alone_is_refused_too(
    served: ServedCounting,
) -> None:
    reply = post(served, request("tools/list", meta=None), **{"MCP-Protocol-Version": "2099-01-01"})
    assert error_of(reply, 400, -32022)["data"]["requested"] == "2099-01-01"


# ------------------------------------------------------------ the headers


REMEMBER = request(
    "tools/call", 9, name="remember", arguments={"user_id": "hdr-user", "text": "Bob is here."}
)


@pytest.mark.parametrize(
    ("headers", "text"),
    [
        ({"MCP-Protocol-Version": None}, "MCP-Protocol-Version header is missing"),
        ({"MCP-Protocol-Version": "2025-07-28"}, "MCP-Protocol-Version"),
        ({"Mcp-Method": None}, "Mcp-Method header is missing"),
        ({"Mcp-Method": "tools/list"}, "Mcp-Method"),
        ({"Mcp-Method": "Tools/Call"}, "Mcp-Method"),  # values compare with case
        ({"Mcp-Name": None}, "Mcp-Name header is missing"),
        ({"Mcp-Name": "forget"}, "Mcp-Name"),
        ({"Mcp-Name": "=?base64?" + base64.b64encode(b"forget").decode() + "?="}, "Mcp-Name"),
        ({"Mcp-Name": "=?base64?not base64?="}, "Mcp-Name"),
        ({"Mcp-Name": "rémember"}, "characters"),  # not visible ASCII
    ],
)
def test_headers_that_do_not_match_the_body_are_refused_and_write_nothing(
    served: ServedCounting, llm: FakeAnthropic, headers: dict[str, str | None], text: str
) -> None:
    before = served.row_counts()
    error = error_of(post(served, REMEMBER, **headers), 400, -32020, id_=9)
    assert text in error["message"]
    assert served.row_counts() == before
    assert llm.calls() == 0


def test_header_names_compare_without_case_and_mcp_name_may_be_base64(
    served: ServedCounting,
) -> None:
    message = request("tools/call", name="list_datasets", arguments={"user_id": "case-user"})
    encoded = "=?base64?" + base64.b64encode(b"list_datasets").decode() + "?="
    sent = {"mcp-protocol-version": V, "MCP-METHOD": "tools/call", "mcp-NAME": encoded}
    reply = Client(served.url).post("/mcp", message, headers=sent)
    assert result_of(reply, "tools/call")["structuredContent"] == {"datasets": []}


# ------------------------------------------------------------ the older revisions


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_the_handshake_revisions_are_served_as_before(served: ServedCounting, version: str) -> None:
    client = Client(served.url)
    init = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }
    reply = client.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    assert reply.status == 200
    result = reply.body["result"]
    assert result["protocolVersion"] == version
    assert result["serverInfo"]["name"] == "gligabao"
    assert "resultType" not in result and "_meta" not in result
    header = {"MCP-Protocol-Version": version}
    ping = client.post("/mcp", {"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=header)
    assert ping.body == {"jsonrpc": "2.0", "id": 2, "result": {}}
    listed = client.post(
        "/mcp", {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=header
    ).body["result"]
    assert sorted(t["name"] for t in listed["tools"]) == TOOLS
    assert "resultType" not in listed and "_meta" not in listed
    # No Mcp-Method or Mcp-Name is asked of them: those headers are 2026-07-28's.
    call = {"name": "list_datasets", "arguments": {"user_id": "old-user"}}
    called = client.post(
        "/mcp", {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call}, headers=header
    )
    assert called.status == 200
    assert called.body["result"]["structuredContent"] == {"datasets": []}
    assert "resultType" not in called.body["result"]
    # server/discover is 2026-07-28's: not a method of theirs.
    discover = client.post(
        "/mcp", {"jsonrpc": "2.0", "id": 5, "method": "server/discover"}, headers=header
    )
    assert (discover.status, discover.body["error"]["code"]) == (200, -32601)


def test_initialize_is_answered_with_a_handshake_revision_even_if_2026_is_offered(
    served: ServedCounting,
) -> None:
    """2026-07-28 has no handshake: an initialize that offers it is answered
    with the newest revision that has one."""
    init = {"protocolVersion": V, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    reply = Client(served.url).post(
        "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
    )
    assert reply.body["result"]["protocolVersion"] == "2025-11-25"
