"""The OpenAPI document: in sync with the code, served by the local server,
and every response of a bounded schemathesis run conforms to it."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from conftest import Harness
from gligabao.api.openapi import DOC, build, render


@pytest.fixture
def gb(gb_http: Harness) -> Harness:
    """Over a loopback socket: /openapi.json is the server's own page; schemathesis speaks HTTP."""
    return gb_http


def test_committed_document_is_current() -> None:
    assert DOC.read_text() == render(), "run: python -m gligabao.api.openapi"


def test_document_lists_every_route_of_the_handlers() -> None:
    """Every route but /mcp, which speaks JSON-RPC (its tools' schemas are
    the same models as the document's)."""
    from gligabao.handlers import browse, datasets, query, records, remember

    in_code = set()
    for mod in (remember, query, datasets, records, browse):
        app: Any = mod.app
        for route in app._static_routes + app._dynamic_routes:
            path = route.openapi_path.replace("<", "{").replace(">", "}")
            in_code.add((route.method.lower(), path))
    in_doc = {(m, p) for p, ops in build()["paths"].items() for m in ops}
    assert in_code == in_doc


def test_local_server_serves_it(gb: Harness) -> None:
    """As it is configured: geo off (the default), no nearby search's fields."""
    r = gb.client.get("/openapi.json")
    assert r.status == 200
    assert r.body == json.loads(render(geo=False))
    for model in ("QueryRequest", "SearchRequest"):
        assert "geo_nearby" not in r.body["components"]["schemas"][model]["properties"]


@pytest.mark.parametrize("gb_env", [{"GB_GEO": "on"}])
def test_local_server_with_geo_serves_the_committed_document(gb: Harness) -> None:
    r = gb.client.get("/openapi.json")
    assert r.status == 200
    assert r.body == json.loads(DOC.read_text())
    assert "geo_radius_km" in r.body["components"]["schemas"]["QueryRequest"]["properties"]


MAX_EXAMPLES = int(os.environ.get("GB_SCHEMATHESIS_EXAMPLES", "30"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def test_api_conforms(gb: Harness) -> None:
    """A bounded schemathesis run over every operation against the real HTTP
    stack: no 5xx, and every response matches the document."""
    gb.llm.default("extract", {"entities": [{"name": "Alice", "type": "person"}], "edges": []})
    gb.llm.default("query", {"answer": "ok", "entities": [1], "edges": [], "passages": []})
    gb.remember("Alice is here.", user="u1")
    schema = schemathesis.openapi.from_dict(build())
    schema.config.update(base_url=gb.client.base)
    tried = 0
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def check(case: Any) -> None:
            nonlocal tried
            tried += 1
            case.call_and_validate(checks=CHECKS)

        check()
    print(f"schemathesis tried {tried} cases")
    assert tried >= 6
