"""The few MCP wire messages this server reads and writes, as plain JSON.

The official SDK's ``mcp_types`` models cover the whole protocol (every
revision's requests, results and notifications: some 300 pydantic models);
importing them cost 300-800 ms of the MCP function's cold start, for the
envelope, two request params and four results used here. The shapes follow
the 2025-06-18 and 2025-11-25 schemas; the e2e tests drive this server with
the official SDK's client, which validates every reply.
"""

from __future__ import annotations

from typing import Any

# JSON-RPC's codes, and MCP's for a protocol version the server does not speak.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022

RequestId = int | str


class WireError(ValueError):
    """A message or params that do not have the expected shape; ``where``
    names the field ("loc: reason", as the HTTP API's messages read)."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WireError(where, "Input should be a valid dictionary")
    return value


def _string(obj: dict[str, Any], key: str, where: str = "") -> str:
    loc = f"{where}{key}"
    if key not in obj:
        raise WireError(loc, "Field required")
    value = obj[key]
    if not isinstance(value, str):
        raise WireError(loc, "Input should be a valid string")
    return value


def request_id(value: Any) -> RequestId:
    # An integer (not a bool) or a string: JSON-RPC's id, null left out.
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise WireError("id", "Input should be a valid integer or string")
    return value


def envelope(raw: dict[str, Any]) -> tuple[RequestId | None, str, dict[str, Any] | None]:
    """(id or None for a notification, method, params) of a request."""
    rid = request_id(raw["id"]) if "id" in raw else None
    method = _string(raw, "method")
    params = raw.get("params")
    return rid, method, None if params is None else _object(params, "params")


def initialize_version(params: dict[str, Any]) -> str:
    """The protocol version an ``initialize`` offers (its params checked)."""
    version = _string(params, "protocolVersion")
    if "capabilities" not in params:
        raise WireError("capabilities", "Field required")
    _object(params["capabilities"], "capabilities")
    if "clientInfo" not in params:
        raise WireError("clientInfo", "Field required")
    info = _object(params["clientInfo"], "clientInfo")
    _string(info, "name", "clientInfo.")
    _string(info, "version", "clientInfo.")
    return version


def tool_call(params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(tool name, arguments) of a ``tools/call``."""
    name = _string(params, "name")
    arguments = params.get("arguments")
    return name, {} if arguments is None else dict(_object(arguments, "arguments"))


def error_data(code: int, message: str, data: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        out["data"] = data
    return out


def error_response(request_id: RequestId | None, error: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC error response; its id is null when the request's is unknown."""
    return {"jsonrpc": "2.0", "error": error, "id": request_id}


def response(request_id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def initialize_result(
    version: str, name: str, server_version: str, instructions: str | None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": name, "version": server_version},
    }
    if instructions is not None:
        out["instructions"] = instructions
    return out


def tool(
    name: str,
    description: str,
    input_schema: dict[str, Any],
    output_schema: dict[str, Any],
    read_only: bool,
) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "inputSchema": input_schema,
        "outputSchema": output_schema,
        "annotations": {
            "readOnlyHint": read_only,
            "destructiveHint": False,
            "openWorldHint": False,
        },
    }


def tool_result(text: str, structured: dict[str, Any]) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "isError": False,
    }
