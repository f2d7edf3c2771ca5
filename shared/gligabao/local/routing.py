"""The local server's routing, from the route table (api/routes.py): a path
and method go to the Lambda function of that route, as API Gateway sends it;
a method no route has at that path goes to the path's function, whose
resolver answers it (405 with ``Allow``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ..api.routes import ROUTES, Route, segments_match

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


class RouteTable:
    """Paths to handlers. ``load`` imports a function's handler when its
    first request comes (as Lambda loads one function, not all of them)."""

    def __init__(
        self,
        routes: tuple[Route, ...] = ROUTES,
        load: Callable[[str], Handler] | None = None,
    ) -> None:
        self.routes = routes
        self._load = load or _handler_of
        self._loaded: dict[str, Handler] = {}

    def function(self, path: str, method: str | None = None) -> str | None:
        """The function of the route with this method and path; else of the
        first route with the path (its resolver answers 405 for the method):
        one path may be served by two functions (a fact's PATCH and GET)."""
        at = [r for r in self.routes if segments_match(r.path, path)]
        for r in at:
            if method is not None and r.method == ("GET" if method == "HEAD" else method):
                return r.function
        return at[0].function if at else None

    def handler(self, path: str, method: str | None = None) -> Handler | None:
        name = self.function(path, method)
        if name is None:
            return None
        if name not in self._loaded:
            self._loaded[name] = self._load(name)
        return self._loaded[name]


def _handler_of(function: str) -> Handler:
    module = importlib.import_module(f"gligabao.handlers.{function}")
    handler: Handler = module.lambda_handler
    return handler
