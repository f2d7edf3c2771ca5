"""The one route table (api/routes.py): the OpenAPI document's paths and the
local server's routing come from it, and template.yaml is checked against it
(each route has its two ``AWS::ApiGatewayV2::Route`` resources, one per auth
family, to its function's integration). A fake route added here shows in the
first two, and the check names it as missing from the template."""

from __future__ import annotations

import json
import re
import threading
import urllib.request
from pathlib import Path
from typing import Any

from gligabao.api.openapi import build
from gligabao.api.routes import ROUTES, Route
from gligabao.local.routing import RouteTable

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"
FAKE = Route("GET", "/v1/gb/fakes/{id}", "fakes", "user", "A fake route", "getFake")


def template_routes(text: str) -> list[tuple[str, str]]:
    """(RouteKey, integration) of every ApiGatewayV2::Route resource."""
    found = []
    for block in re.split(r"\n  (?=\w+:\n)", text):
        if "Type: AWS::ApiGatewayV2::Route\n" not in block:
            continue
        key = re.search(r"RouteKey: (.+)", block)
        target = re.search(r"Target: !Sub \"integrations/\$\{(\w+)Integration\}\"", block)
        assert key and target, block
        found.append((key.group(1).strip(), target.group(1)))
    return found


def template_gaps(routes: tuple[Route, ...], text: str) -> list[str]:
    """What template.yaml lacks (or has besides) against the table."""
    have = template_routes(text)
    gaps = []
    for r in routes:
        for key in r.gateway_keys:  # a served GET's HEAD too
            mine = [t for k, t in have if k == key]
            if len(mine) != 2:
                gaps.append(f"{key}: {len(mine)} ApiGatewayV2::Route resources, not 2")
            elif any(t.lower() != r.function.replace("_", "") for t in mine):
                gaps.append(f"{key}: integration {mine} is not the {r.function} function's")
    keys = {k for r in routes for k in r.gateway_keys}
    gaps += [f"{k}: in template.yaml, not in the route table" for k, _ in have if k not in keys]
    return gaps


def test_the_template_has_every_route_of_the_table_and_no_other() -> None:
    assert template_gaps(ROUTES, TEMPLATE.read_text()) == []


def test_the_template_check_names_a_route_the_template_lacks() -> None:
    gaps = template_gaps((*ROUTES, FAKE), TEMPLATE.read_text())
    assert gaps == [
        "GET /v1/gb/fakes/{id}: 0 ApiGatewayV2::Route resources, not 2",
        "HEAD /v1/gb/fakes/{id}: 0 ApiGatewayV2::Route resources, not 2",
    ]


def test_every_served_get_has_its_head_in_the_template() -> None:
    """HEAD is answered wherever GET is (api/app.py turns it into the GET):
    API Gateway routes it only to a HEAD (or ANY) route, so each served GET
    has one, to the same function; the 405-only GET /mcp has none."""
    keys = {k for k, _ in template_routes(TEMPLATE.read_text())}
    gets = [r for r in ROUTES if r.method == "GET"]
    assert gets
    for r in gets:
        assert (f"HEAD {r.path}" in keys) == r.served, r.path


def test_the_openapi_paths_are_the_tables() -> None:
    doc = build(routes=(*ROUTES, FAKE))
    assert doc["paths"]["/v1/gb/fakes/{id}"]["get"]["operationId"] == "getFake"
    assert "/v1/gb/fakes/{id}" not in build()["paths"]
    listed = {(p, m.upper()) for p, ops in build()["paths"].items() for m in ops}
    assert listed == {(r.path, r.method) for r in ROUTES if r.operation}


def fake_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    body = {"path": event["rawPath"], "method": event["requestContext"]["http"]["method"]}
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body),
    }


def test_the_local_routing_is_the_tables() -> None:
    table = RouteTable((*ROUTES, FAKE), load=lambda name: fake_handler)
    assert table.handler("/v1/gb/fakes/7") is fake_handler
    assert table.function("/v1/gb/artifacts/3") == "browse"
    assert RouteTable().function("/v1/gb/fakes/7") is None


def test_a_fake_route_is_served_by_the_local_server(monkeypatch: Any, tmp_path: Path) -> None:
    from gligabao import wiring
    from gligabao.local.server import make_server

    monkeypatch.setenv("GB_LOCAL", "1")
    monkeypatch.setenv("GB_DATA", str(tmp_path / "gb.db"))
    wiring.reset()
    table = RouteTable((*ROUTES, FAKE), load=lambda name: fake_handler)
    server = make_server("127.0.0.1", 0, quiet=True, table=table)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1/gb/fakes/7"
        with urllib.request.urlopen(url, timeout=30) as resp:
            assert json.loads(resp.read()) == {"path": "/v1/gb/fakes/7", "method": "GET"}
    finally:
        server.shutdown()
        server.server_close()
        wiring.reset()
