"""A small resolver for API Gateway HTTP API (payload 2.0) events: routes by
method and path, exception handlers by class, and the request's event and
Lambda context for the route to read.

Powertools' APIGatewayHttpResolver did this; importing its event_handler
package costs 80-140 ms of a cold start (it loads every resolver it has:
AppSync, Bedrock agents, OpenAPI validation, asyncio), for the five routes
and three of its features used here. The event and context are per request
(context variables), so the threads of the local server never read each
other's request.
"""

from __future__ import annotations

import base64
import contextvars
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

APPLICATION_JSON = "application/json"
# A path parameter's characters: RFC 3986's unreserved and sub-delims, and
# what API Gateway passes through undecoded (as Powertools matched them).
_PARAM = r"[-._~()'!*:@,;=+&$%<> \[\]{}|^\w]+"
_PATH_PARAM = re.compile(r"<(\w+)>")
T = TypeVar("T")


@dataclass
class Response(Generic[T]):
    status_code: int
    body: T
    content_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def to_event(self) -> dict[str, Any]:
        headers = dict(self.headers)
        if self.content_type is not None:
            headers.setdefault("Content-Type", self.content_type)
        return {
            "statusCode": self.status_code,
            "body": self.body,
            "isBase64Encoded": False,
            "headers": headers,
            "cookies": [],
        }


class Authorizer:
    """``requestContext.authorizer``: the JWT claims or the IAM caller."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw

    @property
    def jwt_claim(self) -> dict[str, Any]:
        return dict((self.raw.get("jwt") or {}).get("claims") or {})

    @property
    def iam(self) -> IamCaller:
        return IamCaller(self.raw.get("iam") or {})


class IamCaller:
    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.user_arn: str = raw.get("userArn") or ""
        self.caller_id: str = raw.get("callerId") or ""


class RequestContext:
    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw

    @property
    def authorizer(self) -> Authorizer | None:
        raw = self.raw.get("authorizer")
        return Authorizer(raw) if raw else None


class HttpEvent(dict[str, Any]):
    """An HTTP API payload 2.0 event, with the accessors the routes use."""

    @property
    def headers(self) -> dict[str, str]:
        # API Gateway sends lower-case names; a test or an event built by hand may not.
        return {k.lower(): v for k, v in (self.get("headers") or {}).items()}

    @property
    def query_string_parameters(self) -> dict[str, str]:
        return dict(self.get("queryStringParameters") or {})

    @property
    def decoded_body(self) -> str | None:
        """The body as text; ValueError when it is not UTF-8 (or not base64)."""
        body: str | None = self.get("body")
        if self.get("isBase64Encoded") and body:
            return base64.b64decode(body.encode(), validate=False).decode()
        return body

    @property
    def request_context(self) -> RequestContext:
        return RequestContext(self.get("requestContext") or {})

    @property
    def method(self) -> str:
        return str(((self.get("requestContext") or {}).get("http") or {}).get("method", "")).upper()

    http_method = method

    @property
    def path(self) -> str:
        return str(self.get("rawPath") or "/")


Route = Callable[..., Response[Any]]


class Router:
    """``@app.get(path)`` / ``post`` / ``delete``; ``<name>`` in a path is a
    parameter passed to the route by name."""

    def __init__(self) -> None:
        self._routes: list[tuple[str, re.Pattern[str], Route]] = []
        self._keys: list[str] = []
        self._handlers: dict[type[BaseException], Callable[[Any], Response[Any]]] = {}
        self._not_found: Callable[[Exception | None], Response[Any]] | None = None
        self._event: contextvars.ContextVar[HttpEvent] = contextvars.ContextVar("gb_event")
        self._context: contextvars.ContextVar[Any] = contextvars.ContextVar("gb_lambda_context")

    # --- the request being served ---------------------------------------------

    @property
    def current_event(self) -> HttpEvent:
        return self._event.get()

    @property
    def lambda_context(self) -> Any:
        return self._context.get(None)

    # --- registration ---------------------------------------------------------

    def route(self, method: str, path: str) -> Callable[[Route], Route]:
        pattern = re.compile(
            "^" + _PATH_PARAM.sub(lambda m: f"(?P<{m.group(1)}>{_PARAM})", path) + "$"
        )

        def register(fn: Route) -> Route:
            self._routes.append((method.upper(), pattern, fn))
            self._keys.append(method.upper() + " " + _PATH_PARAM.sub(r"{\1}", path))
            return fn

        return register

    def get(self, path: str) -> Callable[[Route], Route]:
        return self.route("GET", path)

    def post(self, path: str) -> Callable[[Route], Route]:
        return self.route("POST", path)

    def delete(self, path: str) -> Callable[[Route], Route]:
        return self.route("DELETE", path)

    def exception_handler(
        self, exc_class: type[BaseException]
    ) -> Callable[[Callable[[Any], Response[Any]]], Callable[[Any], Response[Any]]]:
        def register(fn: Callable[[Any], Response[Any]]) -> Callable[[Any], Response[Any]]:
            self._handlers[exc_class] = fn
            return fn

        return register

    def not_found(self, fn: Callable[[Exception | None], Response[Any]]) -> Any:
        self._not_found = fn
        return fn

    def allowed_methods(self, path: str) -> list[str]:
        """The methods the routes answer at ``path`` (HEAD with GET), for a
        405's ``Allow``; empty for a path none of them knows."""
        found = {method for method, pattern, _ in self._routes if pattern.match(path)}
        if "GET" in found:
            found.add("HEAD")
        return sorted(found)

    def route_keys(self) -> list[str]:
        """The routes as API Gateway route keys ("GET /v1/gb/datasets/{name}")."""
        return list(self._keys)

    # --- resolving ------------------------------------------------------------

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        ev = event if isinstance(event, HttpEvent) else HttpEvent(event)
        t_event, t_context = self._event.set(ev), self._context.set(context)
        try:
            return self._respond(ev).to_event()
        finally:
            self._event.reset(t_event)
            self._context.reset(t_context)

    def _respond(self, ev: HttpEvent) -> Response[Any]:
        method, path = ev.method, ev.path
        for route_method, pattern, fn in self._routes:
            if route_method != method:
                continue
            match = pattern.match(path)
            if match is None:
                continue
            try:
                return fn(**match.groupdict())
            except Exception as exc:
                handler = self._handler_for(exc)
                if handler is None:
                    raise
                return handler(exc)
        if self._not_found is None:
            return Response(404, '{"error": "no such route"}', APPLICATION_JSON)
        return self._not_found(None)

    def _handler_for(self, exc: Exception) -> Callable[[Any], Response[Any]] | None:
        for cls in type(exc).__mro__:
            if cls in self._handlers:
                return self._handlers[cls]
        return None
