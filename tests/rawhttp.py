"""Raw HTTP/1.1 on a loopback socket, for the hostile-client tests: bytes in,
the server's answer parsed (status, headers, JSON body), every wait bounded."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from typing import Any

TIMEOUT_S = 20.0


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # names in lowercase
    raw: bytes
    closed: bool  # the server closed the connection after it

    @property
    def json(self) -> Any:
        return json.loads(self.raw)


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)
    sock.settimeout(TIMEOUT_S)
    return sock


def read_answer(sock: socket.socket) -> Answer:
    """One response off ``sock``: its head, then Content-Length bytes."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response: {data!r}")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    body, extra = rest[:length], rest[length:]
    closed = False
    if headers.get("connection", "").lower() == "close":
        closed = _drained(sock, extra)
    return Answer(status, headers, body, closed)


def _drained(sock: socket.socket, extra: bytes) -> bool:
    """Whether the server closes after the answer (with nothing more sent)."""
    if extra:
        return False
    try:
        return sock.recv(65536) == b""
    except (ConnectionResetError, TimeoutError):
        return True


def exchange(port: int, data: bytes) -> Answer:
    """Send ``data`` on a new connection and read one answer."""
    with connect(port) as sock:
        sock.sendall(data)
        return read_answer(sock)


def request(
    method: str, path: str, headers: dict[str, str], body: bytes = b"", host: str = "127.0.0.1"
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def post_json(path: str, payload: Any, **headers: str) -> bytes:
    body = json.dumps(payload).encode()
    return request(
        "POST",
        path,
        {"Content-Type": "application/json", "Content-Length": str(len(body)), **headers},
        body,
    )


def await_continue(sock: socket.socket) -> None:
    """Read the server's ``100 Continue``: it has read the headers and its
    handler waits for the body (a request is in flight, observably)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(1)
        if not chunk:
            raise ConnectionError(f"closed before 100 Continue: {data!r}")
        data += chunk
    assert data.startswith(b"HTTP/1.1 100"), data
