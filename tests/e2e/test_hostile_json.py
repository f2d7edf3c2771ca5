"""Extreme but valid JSON against `gligabao serve`: an integer of 5,000 digits
and 30,000 nested arrays are bad input on every route (400), a parse error
on /mcp (-32700), never a 500; nothing is written."""

from __future__ import annotations

import pytest
from rawhttp import exchange, request

from served import ServedCounting

HUGE_INT = "1" * 5000
DEEP = "[" * 30000 + "]" * 30000
ROUTES = [
    "/v1/gb/remember",
    "/v1/gb/remember/batch",
    "/v1/gb/query",
    "/v1/gb/search",
    "/v1/gb/entities/1/split",
]


def post(s: ServedCounting, path: str, body: str) -> tuple[int, object]:
    data = body.encode()
    head = {"Content-Type": "application/json", "Content-Length": str(len(data))}
    answer = exchange(s.port, request("POST", path, head, data))
    assert answer.headers.get("x-gb-call-id")
    return answer.status, answer.json


@pytest.mark.parametrize("path", ROUTES)
@pytest.mark.parametrize(
    "body",
    [
        '{"user_id": "u1", "text": "Alice.", "n": ' + HUGE_INT + "}",
        '{"user_id": "u1", "text": "Alice.", "n": -' + HUGE_INT + "}",
        '{"user_id": "u1", "text": "Alice.", "n": ' + DEEP + "}",
        DEEP,
    ],
    ids=["huge-int", "huge-negative-int", "deep-field", "deep-body"],
)
def test_extreme_json_is_a_400_on_every_route(served: ServedCounting, path: str, body: str) -> None:
    before = served.row_counts()
    status, reply = post(served, path, body)
    assert status == 400, reply
    assert isinstance(reply, dict) and "invalid JSON body" in reply["error"]
    assert served.row_counts() == before


@pytest.mark.parametrize(
    "body",
    [
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"n": ' + HUGE_INT + "}}",
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"n": ' + DEEP + "}}",
    ],
    ids=["huge-int", "deep"],
)
def test_extreme_json_on_mcp_is_a_parse_error(served: ServedCounting, body: str) -> None:
    before = served.row_counts()
    status, reply = post(served, "/mcp", body)
    assert status == 400, reply
    assert isinstance(reply, dict) and reply["error"]["code"] == -32700
    assert served.row_counts() == before


def test_a_sane_nesting_and_number_still_pass(served: ServedCounting) -> None:
    body = '{"user_id": "u1", "query": "Alice?", "max_context_tokens": 1000}'
    status, reply = post(served, "/v1/gb/search", body)
    assert status in (200, 404), reply  # parsed and run: found, or no dataset yet
