"""A dataset's schema over MCP (issue 47): ``put_schema`` and ``get_schema``
say what the HTTP routes say (a bad schema is a tool error with the API's 400
and stores nothing), and ``search`` and ``query`` take ``entity_types`` and
``edge_types``; on both stores."""

from __future__ import annotations

from typing import Any

from test_dataset_schema import STORED
from test_edge_attributes import SCHEMA, TEXT, WORLD

from conftest import Harness


def _tool(gb: Harness, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": {"user_id": "u1", **arguments}},
    }
    r = gb.client.post("/mcp", call)
    assert r.status == 200, r.body
    result: dict[str, Any] = r.body["result"]
    return result


def test_the_schema_tools_put_and_get_it(server: Harness) -> None:
    from test_dataset_schema import CRM

    put = _tool(server, "put_schema", {"dataset": "crm", **CRM})
    assert put.get("isError") is not True, put
    assert put["structuredContent"] == {"dataset": "crm", **STORED}
    got = _tool(server, "get_schema", {"dataset": "crm"})
    assert got["structuredContent"] == {"dataset": "crm", **STORED}
    http = server.client.get("/v1/gb/datasets/crm/schema?user_id=u1")
    assert http.body == got["structuredContent"]

    # a bad one is the API's 400, and the stored schema stays
    bad = {"dataset": "crm", "entity_types": {"Customer": {"attributes": {"x": {"type": "money"}}}}}
    refused = _tool(server, "put_schema", bad)
    assert refused["isError"] is True and refused["structuredContent"]["status"] == 400
    assert "money" in refused["structuredContent"]["error"]
    assert (
        _tool(server, "get_schema", {"dataset": "crm"})["structuredContent"]
        == got["structuredContent"]
    )
    # an argument no schema has is refused too, before anything runs
    extra = _tool(server, "put_schema", {"dataset": "crm", "types": {}})
    assert extra["isError"] is True and extra["structuredContent"]["status"] == 400
    missing = _tool(server, "get_schema", {"dataset": "nope"})
    assert missing["isError"] is True and missing["structuredContent"]["status"] == 404


def test_search_and_query_tools_take_the_type_filters(server: Harness) -> None:
    assert _tool(server, "put_schema", {"dataset": "crm", **SCHEMA}).get("isError") is not True
    server.llm.script("extract", WORLD)
    server.remember(TEXT, dataset="crm")
    ask = {"dataset": "crm", "query": "Who owns which account?"}
    who = {**ask, "query": "Who is Acme?", "entity_types": ["Customer"]}
    found = _tool(server, "search", who)["structuredContent"]
    assert [e["name"] for e in found["entities"]] == ["Acme"]
    typed = _tool(server, "search", {**ask, "edge_types": ["OWNS_ACCOUNT"]})["structuredContent"]
    (fact,) = typed["edges"]
    assert fact["relation"] == "OWNS_ACCOUNT" and fact["attributes"]["share"] == 0.5

    server.llm.script("query", {"answer": "Acme.", "entities": [], "edges": [fact["id"]]})
    answered = _tool(server, "query", {**who, "entity_types": ["customer", "account"]})
    assert answered["structuredContent"]["answer"] == "Acme."
    prompt = str(server.llm.requests_for("query")[-1]["messages"])
    graph = prompt.split("<graph>")[1].split("</graph>")[0]
    assert "Acme Savings" in graph and "Bob" not in graph
