"""Hostile framing against `gligabao serve`, on raw loopback sockets: lengths
that are negative, not numbers or in conflict, a Transfer-Encoding beside a
Content-Length (a request hidden in the body must not run), chunked bodies
(served, and held to the 64 KiB limit while they arrive), a body announced
past the limit (refused before it is sent), clients that stall (a read
timeout), more requests than the server runs at once (503), and SIGTERM with
a request in flight (answered before the server stops)."""

from __future__ import annotations

import json
import signal
import socket
from collections.abc import Iterator

import pytest
from rawhttp import await_continue, connect, exchange, post_json, read_answer, request

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from served import ServedCounting

REMEMBER = {"user_id": "u1", "text": "Alice works at Acme.", "extract": False}


@pytest.fixture(scope="module")
def quick(
    fake_anthropic_session: FakeAnthropic, fake_openai_session: FakeOpenAI
) -> Iterator[ServedCounting]:
    """A server that gives a stalled client one second."""
    env = {**fake_anthropic_session.env(), **fake_openai_session.env(), "GB_READ_TIMEOUT": "1"}
    s = ServedCounting(env)
    yield s
    s.stop()


def refused(s: ServedCounting, data: bytes, status: int) -> dict[str, object]:
    before = s.row_counts()
    answer = exchange(s.port, data)
    assert answer.status == status, (answer.status, answer.raw)
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers.get("x-gb-call-id")
    assert s.row_counts() == before
    body: dict[str, object] = answer.json
    return body


@pytest.mark.parametrize("length", ["-5", "abc", "1_0", "+10", "0x10", "5, 6"])
def test_a_malformed_content_length_is_a_400(quick: ServedCounting, length: str) -> None:
    data = request(
        "POST",
        "/v1/gb/remember",
        {"Content-Type": "application/json", "Content-Length": length},
        b'{"user_id": "u1"}',
    )
    assert "error" in refused(quick, data, 400)


def test_conflicting_content_lengths_are_a_400(quick: ServedCounting) -> None:
    body = json.dumps(REMEMBER).encode()
    head = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    data = request("POST", "/v1/gb/remember", head, body)
    data = data.replace(b"\r\n\r\n", b"\r\nContent-Length: 3\r\n\r\n", 1)
    refused(quick, data, 400)


def test_a_request_hidden_behind_two_framings_never_runs(quick: ServedCounting) -> None:
    kept = exchange(quick.port, post_json("/v1/gb/remember", {**REMEMBER, "dataset": "kept"}))
    assert kept.status == 200, kept.raw
    hidden = b"DELETE /v1/gb/datasets/kept?user_id=u1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    body = b"0\r\n\r\n" + hidden
    data = request(
        "POST",
        "/v1/gb/query",
        {
            "Content-Type": "application/json",
            "Transfer-Encoding": "chunked",
            "Content-Length": str(len(body)),
        },
        body,
    )
    with connect(quick.port) as sock:
        sock.sendall(data)
        answer = read_answer(sock)
        assert answer.status == 400, answer.raw
        assert answer.closed  # nothing after it is read as a request
    listed = exchange(quick.port, request("GET", "/v1/gb/datasets?user_id=u1", {})).json
    assert "kept" in [d["name"] for d in listed["datasets"]]


def chunked(payload: bytes, size: int) -> bytes:
    parts = [payload[i : i + size] for i in range(0, len(payload), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


def test_a_chunked_body_is_served(quick: ServedCounting) -> None:
    before = quick.row_counts()
    body = json.dumps({**REMEMBER, "text": "Bob lives in Lyon."}).encode()
    head = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    answer = exchange(quick.port, request("POST", "/v1/gb/remember", head, chunked(body, 7)))
    assert answer.status == 200, answer.raw
    assert quick.row_counts()["artifacts"] == before["artifacts"] + 1


def test_a_body_announced_past_the_limit_is_refused_before_it_is_sent(
    quick: ServedCounting,
) -> None:
    head = {"Content-Type": "application/json", "Content-Length": str(10 * 1024 * 1024)}
    with connect(quick.port) as sock:
        sock.sendall(request("POST", "/v1/gb/remember", head))  # and not one byte of the body
        answer = read_answer(sock)
    assert answer.status == 413, answer.raw
    assert answer.closed
    assert "64 KiB" in answer.json["error"]


def test_a_chunked_body_past_the_limit_is_refused_as_it_arrives(quick: ServedCounting) -> None:
    before = quick.row_counts()
    text = "a" * (80 * 1024)
    body = json.dumps({**REMEMBER, "text": text}).encode()
    head = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    answer = exchange(quick.port, request("POST", "/v1/gb/remember", head, chunked(body, 16384)))
    assert answer.status == 413, answer.raw
    assert answer.closed
    assert quick.row_counts() == before


def test_a_client_that_stalls_in_the_body_gets_a_408(quick: ServedCounting) -> None:
    head = {"Content-Type": "application/json", "Content-Length": "100"}
    with connect(quick.port) as sock:
        sock.sendall(request("POST", "/v1/gb/remember", head, b'{"u'))
        answer = read_answer(sock)  # after GB_READ_TIMEOUT (1 s), not never
    assert answer.status == 408, answer.raw
    assert answer.closed


def test_a_client_that_stalls_in_the_headers_gets_a_408(quick: ServedCounting) -> None:
    with connect(quick.port) as sock:
        sock.sendall(b"POST /v1/gb/remember HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        answer = read_answer(sock)
    assert answer.status == 408, answer.raw
    assert answer.json["error"]


def test_fifty_stalled_connections_do_not_stop_a_request(quick: ServedCounting) -> None:
    stalled: list[socket.socket] = []
    try:
        for _ in range(50):
            sock = connect(quick.port)
            sock.sendall(request("POST", "/v1/gb/remember", {"Content-Length": "50"}, b'{"a'))
            stalled.append(sock)
        answer = exchange(quick.port, request("GET", "/v1/gb/datasets?user_id=u1", {}))
        assert answer.status == 200, answer.raw
    finally:
        for sock in stalled:
            sock.close()


def test_past_the_concurrency_cap_a_clear_503(
    fake_anthropic_session: FakeAnthropic, fake_openai_session: FakeOpenAI
) -> None:
    env = {
        **fake_anthropic_session.env(),
        **fake_openai_session.env(),
        "GB_MAX_CONCURRENT_REQUESTS": "2",
    }
    s = ServedCounting(env)
    held: list[tuple[socket.socket, bytes]] = []
    try:
        for i in range(2):  # two requests in flight: their bodies arrive slowly
            body = json.dumps({**REMEMBER, "text": f"Text number {i}."}).encode()
            head = {
                "Content-Type": "application/json",
                "Content-Length": str(len(body)),
                "Expect": "100-continue",
            }
            sock = connect(s.port)
            sock.sendall(request("POST", "/v1/gb/remember", head))
            await_continue(sock)  # counted: the server waits for its body
            held.append((sock, body))
        third = refused(s, post_json("/v1/gb/remember", REMEMBER), 503)
        assert "2 requests" in str(third["error"])
        for sock, rest in held:  # the two in flight are served all the same
            sock.sendall(rest)
            assert read_answer(sock).status == 200
    finally:
        for sock, _ in held:
            sock.close()
        s.stop()


def test_sigterm_answers_the_request_in_flight_before_stopping(
    fake_anthropic_session: FakeAnthropic, fake_openai_session: FakeOpenAI
) -> None:
    s = ServedCounting({**fake_anthropic_session.env(), **fake_openai_session.env()})
    body = json.dumps(REMEMBER).encode()
    head = {
        "Content-Type": "application/json",
        "Content-Length": str(len(body)),
        "Expect": "100-continue",
    }
    with connect(s.port) as sock:
        sock.sendall(request("POST", "/v1/gb/remember", head))
        await_continue(sock)  # in flight: the server waits for its body
        s.proc.send_signal(signal.SIGTERM)
        sock.sendall(body)
        answer = read_answer(sock)
    code, _ = s.stop()
    assert answer.status == 200, answer.raw
    assert code == 0
    assert s.row_counts()["artifacts"] == 1
