"""uvicorn's pieces, with what they lack here. Its HTTP/1.1 protocol (h11):
a time limit on a request's headers (uvicorn has one for an idle kept-alive
connection only), and its own refusals (a malformed request line or header)
in JSON with a call id, like every other answer. Its server: stopped at once
from another thread."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import uuid
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..api.app import CALL_ID_HEADER

# What a client has to send a request's headers in, once it has begun
# (a connection that opens and sends nothing is held as long, then closed).
HEADER_TIMEOUT_S = 10.0
REASONS = {
    400: b"Bad Request",
    408: b"Request Timeout",
    431: b"Request Header Fields Too Large",
    501: b"Not Implemented",
}


class _Connection(h11.Connection):
    """h11's connection, keeping the error it raised: uvicorn answers every
    refusal 400, h11 knows better (431 a header too long, 501 a transfer
    coding it does not serve)."""

    error: h11.RemoteProtocolError | None = None

    def next_event(self) -> Any:
        try:
            return super().next_event()
        except h11.RemoteProtocolError as exc:
            self.error = exc
            raise


class GbH11Protocol(H11Protocol):
    header_timeout_s = HEADER_TIMEOUT_S
    _header_timer: asyncio.TimerHandle | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = _Connection(h11.SERVER, self.conn._max_incomplete_event_size)

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            # part of a request's headers (uvicorn just dropped its idle timer)
            if self._header_timer is None and not self.transport.is_closing():
                self._arm_header_timer()
        else:
            self._cancel_header_timer()  # the headers are in: the app times the body

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        self._cancel_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_late)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self.cycle is not None and not self.cycle.response_complete:
            return  # a response is being written: not a client that stalled
        self._write_error(408, "the request headers did not arrive in time")

    def send_400_response(self, msg: str) -> None:
        error = getattr(self.conn, "error", None)
        status = error.error_status_hint if error is not None else 400
        detail = (str(error) if error is not None else msg)[:200]
        self._write_error(status if status in REASONS else 400, f"malformed HTTP request: {detail}")

    def _write_error(self, status: int, message: str) -> None:
        """A refusal h11 cannot frame as a response (its state is an error,
        or no request came): written raw, then the connection closes."""
        body = json.dumps({"error": message}).encode()
        reason = REASONS[status]
        head = [
            b"HTTP/1.1 %d %s" % (status, reason),
            b"content-type: application/json",
            f"{CALL_ID_HEADER.lower()}: {uuid.uuid4().hex}".encode(),
            b"content-length: %d" % len(body),
            b"connection: close",
        ]
        self.transport.write(b"\r\n".join(head) + b"\r\n\r\n" + body)
        self.transport.close()


class PromptServer(uvicorn.Server):
    """uvicorn's server, woken at once by ``stop`` (its loop looks every
    0.1 s, and its shutdown waits 0.1 s more even when no connection is
    left: 170 ms a start and stop, which the tests pay often)."""

    _wake: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    async def main_loop(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.server_state.connections or self.server_state.tasks:
            await super().shutdown(sockets)  # the requests in flight are answered
            return
        for server in self.servers:  # nothing in flight: close, and do not wait
            server.close()
        for server in self.servers:
            await server.wait_closed()

    def stop(self) -> None:
        """From another thread: stop as SIGTERM does, now."""
        self.should_exit = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(wake.set)
