"""MCP over streamable HTTP in its stateless form: each POST carries one
JSON-RPC message and is answered with one JSON response; no session, no
server-sent events, so that a Lambda function behind API Gateway can serve it.

The messages are plain JSON (:mod:`.wire`): the official SDK's models and its
server (an ASGI stack: starlette, uvicorn, anyio) are not loaded by the
function; the e2e tests drive it with the SDK's client.

Tools are the API's own request and response models: their input and output
schemas are generated from them (on the first ``tools/list``), and a tool's
arguments go through the same validation as an HTTP body, so a field the API
gains, the tool gains. Errors keep the HTTP API's messages; the HTTP status
travels in ``error.data``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..errors import GbError
from . import wire
from .wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    RequestId,
    WireError,
)

# The handshake revisions from 2025-06-18 on; a client that offers another is
# answered with the newest, as the specification asks.
PROTOCOL_VERSIONS = ("2025-06-18", "2025-11-25")
LATEST = PROTOCOL_VERSIONS[-1]
SERVER_ERROR = -32000  # JSON-RPC's implementation-defined range: any other HTTP status


@dataclass(frozen=True)
class Caller:
    """Who calls: ``principal`` is the token's user_id (it fills ``user_id``
    and the tools' schemas leave it out), None for a trusted caller that names
    the user in each call."""

    principal: str | None
    event: Any  # the API Gateway event, for the same authorization as HTTP
    lambda_context: Any = None


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    # The arguments' and the structured result's pydantic model classes, as
    # loaders: the models load with the first tools/list or tools/call.
    request: Callable[[], Any]
    result: Callable[[], Any]
    run: Callable[[Caller, Any, dict[str, Any]], dict[str, Any]]
    read_only: bool = True


@dataclass(frozen=True)
class Reply:
    status: int
    body: dict[str, Any] | None  # None: 202 Accepted, nothing to answer (a notification)


class _RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None, status: int = 200) -> None:
        super().__init__(message)
        self.error = wire.error_data(code, message, data)
        self.status = status


def _code(status: int) -> int:
    if status == 400:
        return INVALID_PARAMS
    if status >= 500 and status not in (502, 503, 504):
        return INTERNAL_ERROR
    return SERVER_ERROR


def status_error(status: int, message: str, **data: Any) -> dict[str, Any]:
    """An HTTP error as a JSON-RPC error: the same message, the status in ``data``."""
    return wire.error_data(_code(status), message, {"status": status, **data})


def domain_error(exc: GbError, call_id: str) -> dict[str, Any]:
    return status_error(exc.status, exc.message, call_id=call_id)


def input_schema(model: Any, principal_bound: bool) -> dict[str, Any]:
    schema = dict(_schema(model, "validation"))
    if principal_bound:  # the token names the user: not an argument
        schema["properties"] = {k: v for k, v in schema["properties"].items() if k != "user_id"}
        schema["required"] = [r for r in schema.get("required", []) if r != "user_id"]
    return schema


def output_schema(model: Any) -> dict[str, Any]:
    return _schema(model, "serialization")


@cache
def _schema(model: Any, mode: str) -> dict[str, Any]:
    # Built once per process (pydantic's schema generation is the costly part
    # of tools/list), and copied by the callers that change it.
    return dict(model.model_json_schema(mode=mode))


def error_envelope(request_id: RequestId | None, error: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC error response; its id is null when the request's is unknown."""
    return wire.error_response(request_id, error)


def _error_reply(status: int, request_id: RequestId | None, error: dict[str, Any]) -> Reply:
    return Reply(status, error_envelope(request_id, error))


class McpServer:
    def __init__(
        self, name: str, version: str, tools: list[ToolSpec], instructions: str | None = None
    ) -> None:
        self.name = name
        self.version = version
        self.tools = {t.name: t for t in tools}
        self.instructions = instructions

    def handle(
        self,
        body: str | None,
        protocol_header: str | None,
        authenticate: Callable[[], str | None],
        caller: Callable[[str | None], Caller],
        call_id: str,
    ) -> Reply:
        """One POST. ``authenticate`` raises a GbError for a caller the HTTP
        routes would refuse, and returns the principal; ``caller`` builds the
        Caller of a tool call from it."""
        try:
            message = self._parse(body)
        except _RpcError as exc:
            return _error_reply(exc.status, None, exc.error)
        request_id = message[0] if message is not None else None
        try:
            principal = authenticate()
        except GbError as exc:
            return _error_reply(exc.status, request_id, domain_error(exc, call_id))
        if message is None or request_id is None:
            return Reply(202, None)  # a notification or a response: nothing to answer
        _, method, params = message
        try:
            self._check_version(protocol_header, method)
            result = self._dispatch(method, params or {}, caller(principal), principal is not None)
        except _RpcError as exc:
            return _error_reply(exc.status, request_id, exc.error)
        except GbError as exc:
            return _error_reply(200, request_id, domain_error(exc, call_id))
        return Reply(200, wire.response(request_id, result))

    # ------------------------------------------------------------ the envelope

    def _parse(self, body: str | None) -> tuple[RequestId | None, str, dict[str, Any] | None] | None:
        if body is None:
            raise _RpcError(PARSE_ERROR, "the body must be JSON in UTF-8", status=400)
        try:
            raw = json.loads(body)
        except json.JSONDecodeError as exc:
            raise _RpcError(PARSE_ERROR, f"invalid JSON: {exc.msg}", status=400) from exc
        if isinstance(raw, list):
            raise _RpcError(
                INVALID_REQUEST, "one JSON-RPC message per request (no batches)", status=400
            )
        if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0":
            raise _RpcError(
                INVALID_REQUEST, 'not a JSON-RPC 2.0 message ("jsonrpc": "2.0")', status=400
            )
        if "method" not in raw:
            if ("result" in raw or "error" in raw) and "id" in raw:
                return None  # a response to a server request: this server sends none
            raise _RpcError(INVALID_REQUEST, "a JSON-RPC request needs a method", status=400)
        try:
            return wire.envelope(raw)
        except WireError as exc:
            raise _RpcError(INVALID_REQUEST, str(exc), status=400) from exc

    def _check_version(self, header: str | None, method: str) -> None:
        # The header is absent before the handshake settles a version.
        if header is None or method == "initialize" or header in PROTOCOL_VERSIONS:
            return
        raise _RpcError(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"unsupported MCP-Protocol-Version {header!r}",
            {"supported": list(PROTOCOL_VERSIONS), "requested": header},
            status=400,
        )

    # ------------------------------------------------------------ the methods

    def _dispatch(
        self, method: str, params: dict[str, Any], caller: Caller, principal_bound: bool
    ) -> dict[str, Any]:
        try:
            if method == "initialize":
                version = wire.initialize_version(params)
                if version not in PROTOCOL_VERSIONS:
                    version = LATEST
                return wire.initialize_result(version, self.name, self.version, self.instructions)
            if method == "ping":
                return {}
            if method == "tools/list":
                return {"tools": self._list_tools(principal_bound)}
            if method == "tools/call":
                name, arguments = wire.tool_call(params)
                return self._call_tool(name, arguments, caller)
        except WireError as exc:
            raise _RpcError(INVALID_PARAMS, str(exc)) from exc
        raise _RpcError(METHOD_NOT_FOUND, f"method not found: {method}")

    def _list_tools(self, principal_bound: bool) -> list[dict[str, Any]]:
        return [
            wire.tool(
                t.name,
                t.description,
                input_schema(t.request(), principal_bound),
                output_schema(t.result()),
                t.read_only,
            )
            for t in self.tools.values()
        ]

    def _call_tool(self, name: str, arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
        spec = self.tools.get(name)
        if spec is None:
            raise _RpcError(INVALID_PARAMS, f"unknown tool: {name}")
        if caller.principal is not None:
            arguments.setdefault("user_id", caller.principal)
        from ..api.requests import validate

        req = validate(spec.request(), arguments)  # BadRequest: the HTTP API's message
        result = spec.run(caller, req, arguments)
        return wire.tool_result(json.dumps(result), result)
