"""The request rules every endpoint shares (spec: remember.md, "Conventions
shared by every endpoint"), exercised on POST /v1/gb/remember."""

from __future__ import annotations

import json
from typing import Any

from remember_helpers import assert_nothing_written, key

from conftest import Harness, Reply

PATH = "/v1/gb/remember"
OK = {"user_id": "u1", "text": "Alice works at Acme."}


def _check_error(r: Reply, status: int, case: object) -> None:
    assert r.status == status, (case, r.status, r.body)
    assert isinstance(r.body, dict) and set(r.body) == {"error"}, (case, r.body)
    assert isinstance(r.body["error"], str) and r.body["error"], case
    assert r.call_id, (case, r.headers)
    assert r.headers.get("Content-Type", "").startswith("application/json"), case


def _nothing_happened(gb: Harness) -> None:
    assert gb.llm.calls() == 0
    assert gb.emb.calls() == 0
    assert_nothing_written(gb)
    assert gb.scan("calls") == []  # rejected before any work: not even a call record


RAW_BODIES: list[bytes] = [
    b"",
    b"{",
    b"{'user_id': 'u1'}",
    b'{"user_id": "u1", "text": "x"',
    b'{"user_id": "u1", "text": "x"} trailing',
    b"[]",
    b'[{"user_id": "u1", "text": "x"}]',
    b'"a string"',
    b"42",
    b"null",
    b"true",
    b"\xff\xfe\x00garbage",
    b'{"user_id": "u1", "text": "\xe9"}',  # Latin-1, not UTF-8
]


def test_bodies_that_are_not_a_json_object_are_400(gb: Harness) -> None:
    for raw in RAW_BODIES:
        _check_error(gb.client.post(PATH, raw=raw), 400, raw)
    _nothing_happened(gb)


BAD_FIELDS: list[dict[str, Any]] = [
    # unknown fields
    {**OK, "foo": 1},
    {**OK, "User_Id": "u1"},
    {**OK, "query": "where?"},
    # missing required fields
    {"text": "x"},
    {"user_id": "u1"},
    {},
    # wrong types (strict: no coercion)
    {**OK, "user_id": 5},
    {**OK, "user_id": None},
    {**OK, "user_id": ["u1"]},
    {**OK, "text": 5},
    {**OK, "text": None},
    {**OK, "text": True},
    {**OK, "text": ["a", "b"]},
    {**OK, "dataset": 5},
    {**OK, "dataset": None},
    {**OK, "session_id": 5},
    {**OK, "session_id": {"id": 1}},
    {**OK, "reference_time": 1738314000},
    {**OK, "idempotency_key": 5},
    # text
    {**OK, "text": ""},
    {**OK, "text": " \n\t "},
    # reference_time
    {**OK, "reference_time": "yesterday"},
    {**OK, "reference_time": "2025-13-01T00:00:00Z"},
    {**OK, "reference_time": ""},
    # user_id: 1 to 128 bytes, no control characters
    {**OK, "user_id": ""},
    {**OK, "user_id": "u" * 129},
    {**OK, "user_id": "é" * 65},  # 65 characters, 130 bytes
    {**OK, "user_id": "u\n1"},
    {**OK, "user_id": "u\x001"},
    {**OK, "user_id": "u\x1f1"},
    {**OK, "user_id": "u\x7f1"},
    {**OK, "user_id": "u\x851"},  # a C1 control
    # dataset: 1 to 64 of [A-Za-z0-9._-]
    {**OK, "dataset": ""},
    {**OK, "dataset": "d" * 65},
    {**OK, "dataset": "my dataset"},
    {**OK, "dataset": "a/b"},
    {**OK, "dataset": "café"},
    {**OK, "dataset": "main\n"},
    {**OK, "dataset": "a#b"},
    # session_id: at most 128 bytes, no control characters
    {**OK, "session_id": "s" * 129},
    {**OK, "session_id": "é" * 65},
    {**OK, "session_id": "chat\t42"},
    {**OK, "session_id": "chat\r\n42"},
    # idempotency_key
    {**OK, "idempotency_key": ""},
]


def test_invalid_fields_are_400(gb: Harness) -> None:
    for body in BAD_FIELDS:
        _check_error(gb.client.post(PATH, body), 400, body)
    _nothing_happened(gb)


def test_the_error_names_the_field(gb: Harness) -> None:
    for body, field in [
        ({**OK, "foo": 1}, "foo"),
        ({"text": "x"}, "user_id"),
        ({**OK, "dataset": "a/b"}, "dataset"),
        ({**OK, "session_id": "s" * 129}, "session_id"),
        ({**OK, "text": 5}, "text"),
    ]:
        r = gb.client.post(PATH, body)
        assert r.status == 400 and field in r.body["error"], (body, r.body)


def test_body_over_64_kib_is_413(gb: Harness) -> None:
    big = json.dumps({**OK, "text": "a" * (64 * 1024)}).encode()
    assert len(big) > 64 * 1024
    _check_error(gb.client.post(PATH, raw=big), 413, "64 KiB")
    # invalid JSON that is also too large: the size is checked first
    _check_error(gb.client.post(PATH, raw=b"{" * (64 * 1024 + 1)), 413, "big garbage")
    _nothing_happened(gb)


def test_body_of_exactly_64_kib_is_accepted(gb: Harness) -> None:
    prefix = json.dumps({**OK, "text": ""}).encode()
    body = json.dumps({**OK, "text": "x" * (64 * 1024 - len(prefix))}).encode()
    assert len(body) == 64 * 1024
    # a long text: chunked, so make the extraction cheap
    r = gb.client.post(PATH, raw=body)
    assert r.status == 200, r.body
    assert r.body["chunks"] > 0


def test_limits_are_inclusive(gb: Harness) -> None:
    user = "é" * 64  # 128 bytes
    body = {
        "user_id": user,
        "text": "Alice.",
        "dataset": "D" * 60 + "._-9",
        "session_id": "s" * 128,
        "reference_time": "2025-01-31T09:00:00Z",
        "idempotency_key": "k",
    }
    r = gb.client.post(PATH, body)
    assert r.status == 200, r.body
    assert r.body["session_id"] == "s" * 128
    assert r.call_id
    assert gb.graph.get_dataset(key(user, "D" * 60 + "._-9")) is not None
    # a unicode session id within 128 bytes is fine and echoed as sent
    r = gb.client.post(PATH, {**OK, "session_id": "チャット-42"})
    assert r.status == 200 and r.body["session_id"] == "チャット-42"


def test_every_response_carries_a_call_id(gb: Harness) -> None:
    ok = gb.client.post(PATH, OK)
    bad = gb.client.post(PATH, {"user_id": "u1"})
    wrong_method = gb.client.get(f"{PATH}?user_id=u1")
    replies = (ok, bad, wrong_method)
    ids = [r.call_id for r in replies]
    assert (ok.status, bad.status) == (200, 400)
    assert wrong_method.status in (404, 405)
    assert all(ids), [r.headers for r in replies]
    assert len(set(ids)) == 3
    assert gb.client.get(f"/v1/gb/calls/{ok.call_id}?user_id=u1").body["status"] == "ok"
