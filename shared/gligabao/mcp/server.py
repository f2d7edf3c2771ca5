"""MCP over streamable HTTP in its stateless form: each POST carries one
JSON-RPC message and is answered with one JSON response; no session, no
server-sent events, so that a Lambda function behind API Gateway can serve it.

The messages and results are the ``mcp_types`` models of the official SDK
(a small package: pydantic only). Its server is not used: it runs on an ASGI
stack (starlette, uvicorn, anyio) that a Lambda handler does not need.

Tools are the API's own request and response models: their input and output
schemas are generated from them, and a tool's arguments go through the same
validation as an HTTP body, so a field the API gains, the tool gains.

Two eras of the protocol, served side by side on the one endpoint:

- the handshake revisions (2025-06-18, 2025-11-25): ``initialize`` settles a
  version, which later requests repeat in the ``MCP-Protocol-Version`` header;
- the stateless revision 2026-07-28: no handshake; every request declares its
  version (and the client's capabilities) in ``params._meta`` and mirrors it,
  with its method and its tool's name, in the ``MCP-Protocol-Version``,
  ``Mcp-Method`` and ``Mcp-Name`` headers, which must agree with the body
  (``HeaderMismatch``, -32020); ``server/discover`` names the versions, the
  capabilities and the server. A request is of that era when its header or its
  ``_meta`` names a version that is not a handshake one; ``initialize``, or a
  handshake version in the header, or neither header nor ``_meta`` version, is
  served exactly as before.

Errors, as the 2025-11-25 specification divides them: what goes wrong in
running a tool (its arguments refused, a dataset missing, an upstream down,
a write to retry) is a ``CallToolResult`` with ``isError``, so that the model
reads the HTTP API's message and corrects itself; its status is in
``structuredContent``. JSON-RPC errors are for the protocol: an unknown tool
or method, a malformed request, the server's own failure (a 500).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as types
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from pydantic import BaseModel, ValidationError

from ..api.jsonin import UnsafeJson, loads
from ..api.requests import validate
from ..errors import Busy, GbError
from .tools import Caller, Reply, ToolSpec
from .versions import (
    CACHE_TTL_MS,
    HEADER_SAFE,
    LATEST,
    METHOD_HEADER,
    MODERN_STATUS,
    MODERN_VERSIONS,
    NAME_HEADER,
    NAMED_PARAM,
    PROTOCOL_VERSIONS,
    SUPPORTED_VERSIONS,
    VERSION_HEADER,
    decode_header_value,
    modern_version,
)

__all__ = ["Caller", "McpServer", "Reply", "ToolSpec", "error_envelope", "status_error"]

SERVER_ERROR = -32000  # JSON-RPC's implementation-defined range: any other HTTP status


class _RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None, status: int = 200) -> None:
        super().__init__(message)
        self.error = ErrorData(code=code, message=message, data=data)
        self.status = status


def _code(status: int) -> int:
    if status == 400:
        return INVALID_PARAMS
    if status >= 500 and status not in (502, 503, 504):
        return INTERNAL_ERROR
    return SERVER_ERROR


def status_error(status: int, message: str, **data: Any) -> ErrorData:
    """An HTTP error as a JSON-RPC error: the same message, the status in ``data``."""
    return ErrorData(code=_code(status), message=message, data={"status": status, **data})


def domain_error(exc: GbError, call_id: str) -> ErrorData:
    return status_error(exc.status, exc.message, call_id=call_id)


def tool_error(exc: GbError, call_id: str) -> types.CallToolResult:
    """A tool's execution error, for the model: the HTTP API's message as
    text; its status (and when to retry a 409) as structured content."""
    detail: dict[str, Any] = {"error": exc.message, "status": exc.status, "call_id": call_id}
    if isinstance(exc, Busy):
        detail["retry_after"] = exc.retry_after
    return types.CallToolResult(
        content=[types.TextContent(text=exc.message)], structured_content=detail, is_error=True
    )


def input_schema(model: type[BaseModel], principal_bound: bool) -> dict[str, Any]:
    schema = model.model_json_schema(mode="validation")
    # A tool's input is a plain object for the models that call it (function
    # calling refuses a top-level oneOf): remember's "text or messages" rule
    # is the server's to enforce, as a tool error.
    schema.pop("oneOf", None)
    if principal_bound:  # the token names the user: not an argument
        schema["properties"].pop("user_id", None)
        schema["required"] = [r for r in schema.get("required", []) if r != "user_id"]
    return schema


# The structured content of a tool's execution error (``tool_error``).
TOOL_ERROR_SCHEMA: dict[str, Any] = {
    "title": "ToolError",
    "type": "object",
    "properties": {
        "error": {"type": "string", "description": "the HTTP API's message"},
        "status": {"type": "integer", "description": "the HTTP API's status"},
        "call_id": {"type": "string"},
        "retry_after": {"type": "number", "description": "seconds, for a 409 to retry"},
    },
    "required": ["error", "status", "call_id"],
    "additionalProperties": False,
}


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The tool's result, or its execution error: structured content must
    conform to the output schema either way (a client may check it even when
    ``isError`` is set, as the MCP Inspector does)."""
    schema = model.model_json_schema(mode="serialization")
    defs = schema.pop("$defs", None)
    out: dict[str, Any] = {"type": "object", "anyOf": [schema, TOOL_ERROR_SCHEMA]}
    if defs is not None:
        out["$defs"] = defs  # where the result's references point (#/$defs/...)
    return out


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def _result(model: BaseModel) -> dict[str, Any]:
    out = _dump(model)
    out.pop("resultType", None)  # a 2026-07-28 field: not in the revisions served here
    return out


def error_envelope(request_id: RequestId | None, error: ErrorData) -> dict[str, Any]:
    """A JSON-RPC error response; its id is null when the request's is unknown."""
    envelope = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
    return {**_dump(envelope), "id": request_id}


def _error_reply(status: int, request_id: RequestId | None, error: ErrorData) -> Reply:
    return Reply(status, error_envelope(request_id, error))


def _unsupported(requested: str) -> _RpcError:
    return _RpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"unsupported protocol version {requested!r}: this server speaks "
        + ", ".join(SUPPORTED_VERSIONS),
        _dump(
            types.UnsupportedProtocolVersionErrorData(
                supported=list(SUPPORTED_VERSIONS), requested=requested
            )
        ),
        status=400,
    )


def _mismatch(message: str) -> _RpcError:
    return _RpcError(HEADER_MISMATCH, f"header mismatch: {message}", status=400)


class McpServer:
    def __init__(
        self, name: str, version: str, tools: list[ToolSpec], instructions: str | None = None
    ) -> None:
        self.info = types.Implementation(name=name, version=version)
        self.tools = {t.name: t for t in tools}
        self.instructions = instructions

    def handle(
        self,
        body: str | None,
        headers: Mapping[str, str],
        authenticate: Callable[[], str | None],
        caller: Callable[[str | None], Caller],
        call_id: str,
    ) -> Reply:
        """One POST. ``authenticate`` raises a GbError for a caller the HTTP
        routes would refuse, and returns the principal; ``caller`` builds the
        Caller of a tool call from it. ``headers`` are the request's, their
        names in lowercase."""
        try:
            message = self._parse(body)
        except _RpcError as exc:
            return _error_reply(exc.status, None, exc.error)
        request_id = message.id if isinstance(message, JSONRPCRequest) else None
        try:
            principal = authenticate()
        except GbError as exc:
            return _error_reply(exc.status, request_id, domain_error(exc, call_id))
        if not isinstance(message, JSONRPCRequest):
            return Reply(202, None)  # a notification or a response: nothing to answer
        modern = modern_version(message, headers) is not None
        try:
            if modern:
                version = self._check_modern(message, headers)
                result = self._dispatch_modern(
                    message, version, caller(principal), principal is not None, call_id
                )
            else:  # initialize, a handshake version in the header, or no version at all
                result = self._dispatch(message, caller(principal), principal is not None, call_id)
        except _RpcError as exc:
            status = MODERN_STATUS.get(exc.error.code, exc.status) if modern else exc.status
            return _error_reply(status, request_id, exc.error)
        except GbError as exc:
            return _error_reply(200, request_id, domain_error(exc, call_id))
        return Reply(200, _dump(JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)))

    # ------------------------------------------------------------ the envelope

    def _parse(self, body: str | None) -> JSONRPCRequest | JSONRPCNotification | None:
        if body is None:
            raise _RpcError(PARSE_ERROR, "the body must be JSON in UTF-8", status=400)
        try:
            raw = loads(body)
        except json.JSONDecodeError as exc:
            raise _RpcError(PARSE_ERROR, f"invalid JSON: {exc.msg}", status=400) from exc
        except UnsafeJson as exc:
            raise _RpcError(PARSE_ERROR, f"invalid JSON: {exc}", status=400) from exc
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
        model: type[JSONRPCRequest] | type[JSONRPCNotification] = (
            JSONRPCRequest if "id" in raw else JSONRPCNotification
        )
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            raise _RpcError(INVALID_REQUEST, _first_error(exc), status=400) from exc

    def _check_modern(self, req: JSONRPCRequest, headers: Mapping[str, str]) -> str:
        """A 2026-07-28 request's envelope, in the order the specification
        gives: ``_meta``'s required fields (-32602), the headers against the
        body (-32020), the version (-32022). Returns the version."""
        params = req.params or {}
        meta = params.get("_meta")
        header = headers.get(VERSION_HEADER)
        required = (PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY)
        missing = [k for k in required if not isinstance(meta, dict) or k not in meta]
        if missing:
            if header is not None and header not in SUPPORTED_VERSIONS:
                raise _unsupported(header)
            raise _RpcError(
                INVALID_PARAMS,
                f"params._meta lacks {' and '.join(missing)}: without an initialize "
                f"handshake, each request declares its protocol version and the "
                f"client's capabilities",
                status=400,
            )
        assert isinstance(meta, dict)
        version = meta[PROTOCOL_VERSION_META_KEY]
        # Mirrors of the body that a gateway may route on: they must agree with it.
        for name in (VERSION_HEADER, METHOD_HEADER, NAME_HEADER):
            value = headers.get(name)
            if value is not None and not HEADER_SAFE.fullmatch(value):
                raise _mismatch(f"the {name} header has characters a header value may not")
        if header is None:
            raise _mismatch("the MCP-Protocol-Version header is missing")
        if header != version:
            raise _mismatch(
                f"MCP-Protocol-Version header {header!r} is not the request's "
                f"{PROTOCOL_VERSION_META_KEY} {version!r}"
            )
        method = headers.get(METHOD_HEADER)
        if method is None:
            raise _mismatch("the Mcp-Method header is missing")
        if method != req.method:
            raise _mismatch(f"Mcp-Method header {method!r} is not the body's {req.method!r}")
        key = NAMED_PARAM.get(req.method)
        if key is not None and params.get(key) is not None:
            target = headers.get(NAME_HEADER)
            if target is None:
                raise _mismatch(f"the Mcp-Name header is missing (a {req.method} names its {key})")
            if decode_header_value(target) != params[key]:
                raise _mismatch(f"Mcp-Name header {target!r} is not the body's {key}")
        if not isinstance(version, str):
            raise _RpcError(INVALID_PARAMS, f"{PROTOCOL_VERSION_META_KEY} must be a string")
        if version not in MODERN_VERSIONS:
            raise _unsupported(version)
        if not isinstance(meta[CLIENT_CAPABILITIES_META_KEY], dict):
            raise _RpcError(INVALID_PARAMS, f"{CLIENT_CAPABILITIES_META_KEY} must be an object")
        return version

    # ------------------------------------------------------------ the methods

    def _dispatch_modern(
        self,
        req: JSONRPCRequest,
        version: str,
        caller: Caller,
        principal_bound: bool,
        call_id: str,
    ) -> dict[str, Any]:
        """A 2026-07-28 method: its result with ``resultType`` and, in its
        ``_meta``, the server's identity (no handshake told the client)."""
        params = req.params or {}
        result: BaseModel
        if req.method == "server/discover":
            result = types.DiscoverResult(
                supported_versions=list(SUPPORTED_VERSIONS),
                capabilities=self._capabilities(),
                instructions=self.instructions,
                ttl_ms=CACHE_TTL_MS,
                cache_scope="private",
            )
        elif req.method == "tools/list":
            result = self._list_tools(principal_bound, ttl_ms=CACHE_TTL_MS)
        elif req.method == "tools/call":
            result = self._call_tool(params, caller, call_id)
        else:
            raise _RpcError(
                METHOD_NOT_FOUND,
                f"method not found: {req.method} (under {version}: server/discover, "
                "tools/list, tools/call)",
            )
        out = _dump(result)
        out["_meta"] = {**out.get("_meta", {}), SERVER_INFO_META_KEY: _dump(self.info)}
        return out

    def _capabilities(self) -> types.ServerCapabilities:
        return types.ServerCapabilities(tools=types.ToolsCapability(list_changed=False))

    def _dispatch(
        self, req: JSONRPCRequest, caller: Caller, principal_bound: bool, call_id: str
    ) -> dict[str, Any]:
        params = req.params or {}
        if req.method == "initialize":
            return self._initialize(params)
        if req.method == "ping":
            return {}
        if req.method == "tools/list":
            return _result(self._list_tools(principal_bound))
        if req.method == "tools/call":
            return _result(self._call_tool(params, caller, call_id))
        raise _RpcError(METHOD_NOT_FOUND, f"method not found: {req.method}")

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            init = types.InitializeRequestParams.model_validate(params)
        except ValidationError as exc:
            raise _RpcError(INVALID_PARAMS, _first_error(exc)) from exc
        version = init.protocol_version if init.protocol_version in PROTOCOL_VERSIONS else LATEST
        result = types.InitializeResult(
            protocol_version=version,
            capabilities=self._capabilities(),
            server_info=self.info,
            instructions=self.instructions,
        )
        return _result(result)

    def _list_tools(self, principal_bound: bool, ttl_ms: int = 0) -> types.ListToolsResult:
        return types.ListToolsResult(
            ttl_ms=ttl_ms,
            cache_scope="private",
            tools=[
                types.Tool(
                    name=t.name,
                    description=t.description,
                    input_schema=input_schema(t.request, principal_bound),
                    output_schema=output_schema(t.result),
                    annotations=types.ToolAnnotations(
                        read_only_hint=t.read_only, destructive_hint=False, open_world_hint=False
                    ),
                )
                for t in self.tools.values()
            ],
        )

    def _call_tool(
        self, params: dict[str, Any], caller: Caller, call_id: str
    ) -> types.CallToolResult:
        try:
            call = types.CallToolRequestParams.model_validate(params)
        except ValidationError as exc:
            raise _RpcError(INVALID_PARAMS, _first_error(exc)) from exc
        spec = self.tools.get(call.name)
        if spec is None:
            raise _RpcError(INVALID_PARAMS, f"unknown tool: {call.name}")
        arguments = dict(call.arguments or {})
        if caller.principal is not None:
            arguments.setdefault("user_id", caller.principal)
        try:
            req = validate(spec.request, arguments)  # BadRequest: the HTTP API's message
            result = spec.run(caller, req, arguments)
        except GbError as exc:
            if exc.status == 500:  # the server's own failure: a protocol error
                raise
            return tool_error(exc, call_id)
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(result))], structured_content=result
        )


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "params"
    return f"{loc}: {err['msg']}"
