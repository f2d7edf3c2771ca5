"""CORS for the web page pointed at a deployed stack: none by default; with
UiOrigins, the listed origins, the methods the page calls and the headers it
sends (a preflight API Gateway answers itself: no OPTIONS route)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from cfn import Stack, load

PAGE_ORIGINS = "http://127.0.0.1:7878,http://localhost:7878"


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load()


def _api(stack: Stack) -> dict[str, Any]:
    [api] = stack.of_type("AWS::ApiGatewayV2::Api").values()
    return dict(api["Properties"])


def test_no_cors_by_default(template: dict[str, Any]) -> None:
    assert "CorsConfiguration" not in _api(Stack(template))


def test_the_listed_origins_get_the_page_methods_and_headers(template: dict[str, Any]) -> None:
    cors = _api(Stack(template, UiOrigins=PAGE_ORIGINS))["CorsConfiguration"]
    assert cors["AllowOrigins"] == {"Fn::Split": [",", {"Ref": "UiOrigins"}]}
    assert {"GET", "POST", "DELETE"} <= set(cors["AllowMethods"])
    assert {"authorization", "content-type"} <= {h.lower() for h in cors["AllowHeaders"]}
    assert "x-gb-call-id" in cors["ExposeHeaders"]
    routes = [
        r["Properties"]["RouteKey"]
        for r in Stack(template).of_type("AWS::ApiGatewayV2::Route").values()
    ]
    assert not [r for r in routes if r.startswith(("OPTIONS ", "ANY "))]


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("", True),
        ("http://127.0.0.1:7878", True),
        (PAGE_ORIGINS, True),
        ("https://memory.example.com", True),
        ("*", False),
        ("http://127.0.0.1:7878/ui/", False),
        ("127.0.0.1:7878", False),
        ("http://a.example, http://b.example", False),
    ],
)
def test_ui_origins_takes_origins_only(template: dict[str, Any], value: str, ok: bool) -> None:
    pattern = template["Parameters"]["UiOrigins"]["AllowedPattern"]
    assert bool(re.fullmatch(pattern, value)) is ok
