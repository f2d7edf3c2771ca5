"""Writes from a web page against `gligabao serve`: a POST a page can send
without a CORS preflight (``text/plain``, a form's types, no type) is 415
before anything runs, on the API and on /mcp (its forget tool); a write with
an ``Origin`` that is neither the server's own nor in GB_ALLOWED_ORIGINS is
403, even from another loopback port; nothing is written."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from rawhttp import exchange, request

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from served import ServedCounting

REMEMBER = json.dumps({"user_id": "u1", "text": "Alice works at Acme.", "extract": False})
FORGET = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "forget", "arguments": {"user_id": "u1", "artifact_id": 1}},
    }
)


def send(
    s: ServedCounting, method: str, path: str, body: str, **headers: str
) -> tuple[int, dict[str, str], object]:
    data = body.encode()
    head = {"Content-Length": str(len(data)), **headers}
    # the Host a browser sends: with the port
    answer = exchange(s.port, request(method, path, head, data, host=f"127.0.0.1:{s.port}"))
    return answer.status, answer.headers, answer.json if answer.raw else None


@pytest.mark.parametrize(
    "ctype",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"],
)
@pytest.mark.parametrize(("path", "body"), [("/v1/gb/remember", REMEMBER), ("/mcp", FORGET)])
def test_a_write_not_sent_as_json_is_a_415(
    served: ServedCounting, ctype: str | None, path: str, body: str
) -> None:
    stored = send(
        served, "POST", "/v1/gb/remember", REMEMBER, **{"Content-Type": "application/json"}
    )
    assert stored[0] == 200, stored
    before = served.row_counts()
    headers = {"Content-Type": ctype} if ctype else {}
    status, head, reply = send(served, "POST", path, body, **headers)
    assert status == 415, reply
    assert head.get("x-gb-call-id")
    assert served.row_counts() == before


def test_a_write_from_another_loopback_origin_is_a_403(served: ServedCounting) -> None:
    before = served.row_counts()
    for origin in ("http://127.0.0.1:3000", "http://localhost:5173", "null"):
        status, _, reply = send(
            served,
            "POST",
            "/v1/gb/remember",
            REMEMBER,
            **{"Content-Type": "application/json", "Origin": origin},
        )
        assert status == 403, (origin, reply)
    assert served.row_counts() == before


def test_the_servers_own_page_may_write_and_others_may_read(served: ServedCounting) -> None:
    own = f"http://127.0.0.1:{served.port}"
    status, _, reply = send(
        served,
        "POST",
        "/v1/gb/remember",
        REMEMBER,
        **{"Content-Type": "application/json", "Origin": own},
    )
    assert status == 200, reply
    read = exchange(
        served.port,
        request("GET", "/v1/gb/datasets?user_id=u1", {"Origin": "http://127.0.0.1:3000"}),
    )
    assert read.status == 200


def test_a_delete_without_a_body_needs_no_type(served: ServedCounting) -> None:
    status, _, reply = send(served, "DELETE", "/v1/gb/datasets/nothing?user_id=u1", "")
    assert status == 404, reply  # reached the handler: no such dataset


@pytest.fixture(scope="module")
def listed(
    fake_anthropic_session: FakeAnthropic, fake_openai_session: FakeOpenAI
) -> Iterator[ServedCounting]:
    env = {
        **fake_anthropic_session.env(),
        **fake_openai_session.env(),
        "GB_ALLOWED_ORIGINS": "http://127.0.0.1:3000",
    }
    s = ServedCounting(env)
    yield s
    s.stop()


def test_an_origin_in_gb_allowed_origins_may_write(listed: ServedCounting) -> None:
    json_type = {"Content-Type": "application/json"}
    status, _, reply = send(
        listed, "POST", "/v1/gb/remember", REMEMBER, **json_type, Origin="http://127.0.0.1:3000"
    )
    assert status == 200, reply
    status, _, reply = send(
        listed, "POST", "/v1/gb/remember", REMEMBER, **json_type, Origin="http://127.0.0.1:3001"
    )
    assert status == 403, reply
