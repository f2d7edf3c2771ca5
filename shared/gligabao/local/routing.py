"""The local server's routing, from the route table (api/routes.py): a path
goes to the Lambda function whose routes have it, as API Gateway sends it;
the function's resolver then answers the method (405 with ``Allow``)."""

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

    def function(self, path: str) -> str | None:
        for r in self.routes:
            if segments_match(r.path, path):
                return r.function
        return None

    def handler(self, path: str) -> Handler | None:
        name = self.function(path)
        if name is None:
            return None
        if name not in self._loaded:
            self._loaded[name] = self._load(name)
        return self._loaded[name]


def _handler_of(function: str) -> Handler:
    module = importlib.import_module(f"gligabao.handlers.{function}")
    handler: Handler = module.lambda_handler
    return handler
