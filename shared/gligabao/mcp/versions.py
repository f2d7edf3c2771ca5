"""MCP's protocol versions and the 2026-07-28 request headers: which
revisions this server speaks, which era a request belongs to, and a header
value as the client meant it. The JSON-RPC server (server.py) applies them."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping

from mcp_types import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSION_META_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPCRequest,
)

# The handshake revisions from 2025-06-18 on; a client that offers another is
# answered with the newest, as the specification asks.
PROTOCOL_VERSIONS = ("2025-06-18", "2025-11-25")
LATEST = PROTOCOL_VERSIONS[-1]
# The stateless revisions: the version travels in each request (no handshake).
MODERN_VERSIONS = ("2026-07-28",)
SUPPORTED_VERSIONS = (*reversed(MODERN_VERSIONS), *reversed(PROTOCOL_VERSIONS))  # newest first

# The request headers of the 2026-07-28 streamable HTTP transport (lowercase:
# header names compare without case; their values with it).
VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
NAME_HEADER = "mcp-name"
# The methods whose target the Mcp-Name header mirrors, and the param it mirrors.
NAMED_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# How long a client may cache server/discover and tools/list (the tools change
# only with a deployment); "private": the endpoint is behind authorization.
CACHE_TTL_MS = 300_000
# HTTP status of a 2026-07-28 error, by JSON-RPC code (streamable HTTP, "Protocol
# Version Header" and "Server Validation"; basic, "Per-request protocol fields").
MODERN_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
HEADER_SAFE = re.compile(r"[\x20-\x7e\t]*")
_BASE64_SENTINEL = re.compile(r"=\?base64\?(?P<payload>[A-Za-z0-9+/=]*)\?=")


def decode_header_value(value: str) -> str | None:
    """A header value as the client meant it: ``=?base64?...?=`` is the UTF-8
    text it encodes (None if it encodes none); any other value is itself."""
    found = _BASE64_SENTINEL.fullmatch(value)
    if found is None:
        return value
    try:
        return base64.b64decode(found["payload"], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def modern_version(message: JSONRPCRequest, headers: Mapping[str, str]) -> str | None:
    """The version a request of the stateless era declares (its ``_meta``'s,
    else its header's); None for a request of the handshake era."""
    header = headers.get(VERSION_HEADER)
    if message.method == "initialize" or header in PROTOCOL_VERSIONS:
        return None
    meta = (message.params or {}).get("_meta")
    declared = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    if declared is None:
        return header  # None: no version anywhere, a handshake-era request as before
    return declared if isinstance(declared, str) else repr(declared)
