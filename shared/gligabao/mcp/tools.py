"""What a tool is and who calls it: plain dataclasses, so that the MCP handler
can declare its tools at import without loading the MCP SDK's models
(``mcp_types``, which ``server.py`` loads with the first request)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel


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
    request: type[BaseModel]
    result: type[BaseModel]
    run: Callable[[Caller, Any, dict[str, Any]], dict[str, Any]]
    read_only: bool = True


@dataclass(frozen=True)
class Reply:
    status: int
    body: dict[str, Any] | None  # None: 202 Accepted, nothing to answer (a notification)
