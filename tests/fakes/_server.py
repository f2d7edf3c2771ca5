"""The HTTP plumbing the fakes share: a stdlib ``ThreadingHTTPServer`` on
127.0.0.1 (an ephemeral port) in a daemon thread, JSON in and out, a
thread-safe record of every request, and one-shot fault queues.

Subclasses implement :meth:`FakeServer._handle`.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

JSON = Any

T = TypeVar("T")


class RecordedRequest(dict[str, Any]):
    """A received JSON body (a ``dict``: ``req["model"]``) that also carries the
    HTTP details as attributes.

    ``headers`` has lower-cased names. ``status`` is the HTTP status the fake
    answered with (set once the answer is decided). ``stage`` is set by
    FakeAnthropic (None elsewhere). ``reply`` is the decoded JSON the fake sent.
    ``received_at`` is ``time.monotonic()`` on arrival (to measure retry gaps).
    ``query`` is the raw query string of the request line ("" when none).
    """

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    status: int | None
    stage: str | None
    reply: JSON
    received_at: float
    query: str

    def __init__(
        self,
        body: dict[str, Any],
        *,
        method: str,
        path: str,
        headers: dict[str, str],
        raw: bytes,
        query: str = "",
    ) -> None:
        super().__init__(body)
        self.method = method
        self.path = path
        self.headers = headers
        self.raw = raw
        self.status = None
        self.stage = None
        self.reply = None
        self.received_at = time.monotonic()
        self.query = query

    @property
    def body(self) -> dict[str, Any]:
        """A plain-dict copy of the body."""
        return dict(self)


@dataclass
class Response:
    status: int
    body: JSON
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Pending(Generic[T]):
    stage: str | None  # None: matches any request
    times: int
    payload: T


class FaultQueue(Generic[T]):
    """A thread-safe FIFO of one-shot effects, each matching a stage (or any)
    and good for ``times`` requests."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[_Pending[T]] = []

    def add(self, payload: T, *, stage: str | None = None, times: int = 1) -> None:
        if times < 1:
            raise ValueError("times must be >= 1")
        with self._lock:
            self._items.append(_Pending(stage, times, payload))

    def take(self, stage: str | None) -> T | None:
        """The first pending effect that matches ``stage``, consuming one use."""
        with self._lock:
            for i, item in enumerate(self._items):
                if item.stage is None or item.stage == stage:
                    item.times -= 1
                    if item.times <= 0:
                        del self._items[i]
                    return item.payload
        return None

    def pending(self) -> int:
        with self._lock:
            return sum(item.times for item in self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def estimate_tokens(text: str) -> int:
    """The fakes' token count: a quarter of the characters, at least 1."""
    return max(1, len(text) // 4)


class FakeServer:
    """Base class: lifecycle, request recording, JSON handling."""

    #: Name used in the server thread's name and in error messages.
    name = "fake"
    #: HTTP/1.1 with persistent connections (the benchmarks: a real API keeps
    #: the connection open, so a request does not pay a connect and a new
    #: server thread). Off for the tests: a stopped fake must never keep
    #: answering on a pooled connection.
    keep_alive = False

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._requests: list[RecordedRequest] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._delays: FaultQueue[float] = FaultQueue()
        self.url: str = ""
        self.host: str = "127.0.0.1"
        self.port: int = 0
        #: Exceptions raised by script callables / vector rules while answering.
        self.errors: list[Exception] = []

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> Self:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread. Sets
        ``.url`` (``http://127.0.0.1:PORT``, no trailing slash)."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = ThreadingHTTPServer((self.host, 0), _make_handler(self))
        httpd.daemon_threads = True
        self._httpd = httpd
        self.port = int(httpd.server_address[1])
        self.url = f"http://{self.host}:{self.port}"
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{self.name}-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket. Wakes any ``delay_next`` sleeper."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @property
    def running(self) -> bool:
        return self._httpd is not None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget the recorded requests. Subclasses also drop scripts and faults."""
        with self._lock:
            self._requests.clear()
            self.errors.clear()
        self._delays.clear()

    # -- records -----------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot (a new list) of every request received, in arrival order,
        faulted ones included."""
        with self._lock:
            return list(self._requests)

    def last_request(self) -> RecordedRequest:
        with self._lock:
            if not self._requests:
                raise AssertionError(f"{self.name}: no request received")
            return self._requests[-1]

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(req)

    def _sleep(self, seconds: float) -> None:
        """Sleep, but wake up at once when the server stops."""
        self._stopping.wait(seconds)

    # -- to implement ------------------------------------------------------

    def _classify(self, req: RecordedRequest) -> None:
        """Set ``req.stage`` (and the like) before the request is recorded."""

    def _delay_for(self, req: RecordedRequest) -> float | None:
        """Seconds to sleep before answering ``req`` (a ``delay_next``), if any."""
        return self._delays.take(req.stage)

    def _handle(self, req: RecordedRequest) -> Response:
        raise NotImplementedError

    def _bad_request(self, status: int, message: str) -> Response:
        """The error reply for malformed requests and fake-side bugs."""
        return Response(status, {"error": {"message": message}})

    def _internal_error(self, exc: Exception) -> Response:
        """A bug in a script callable or a rule: a 500 the SDKs will not retry."""
        with self._lock:
            self.errors.append(exc)
        resp = self._bad_request(500, f"{self.name}: {type(exc).__name__}: {exc}")
        resp.headers["x-should-retry"] = "false"
        return resp


def _make_handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.0: one request per connection, so a stopped fake never keeps
        # answering on a pooled keep-alive connection.
        protocol_version = "HTTP/1.1" if server.keep_alive else "HTTP/1.0"
        # Headers and body go out in two writes: without TCP_NODELAY a kept-
        # alive connection waits for the client's delayed ACK (40 ms).
        disable_nagle_algorithm = server.keep_alive
        server_version = "gligabao-fake/1.0"

        def log_message(self, format: str, *args: Any) -> None:  # silence stderr
            return

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def do_DELETE(self) -> None:  # the gligabao API's dataset delete
            self._serve()

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            path, _, query = self.path.partition("?")
            body: Any
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = None
            req = RecordedRequest(
                body if isinstance(body, dict) else {},
                method=self.command,
                path=path,
                headers=headers,
                raw=raw,
                query=query,
            )
            if isinstance(body, dict):
                server._classify(req)
            server._record(req)
            if not isinstance(body, dict):
                resp = server._bad_request(400, "request body is not a JSON object")
            else:
                delay = server._delay_for(req)
                if delay:
                    server._sleep(delay)
                    if self._client_gone():
                        # The client timed out and hung up: answer nothing and
                        # consume no scripted reply, as if it never arrived.
                        req.status = 0
                        self.close_connection = True
                        return
                try:
                    resp = server._handle(req)
                except Exception as exc:
                    resp = server._internal_error(exc)
            req.status = resp.status
            req.reply = resp.body
            self._send(resp)

        def _client_gone(self) -> bool:
            try:
                readable, _, _ = select.select([self.connection], [], [], 0)
                if not readable:
                    return False
                return self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True

        def _send(self, resp: Response) -> None:
            data = json.dumps(resp.body).encode()
            try:
                self.send_response(resp.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in resp.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (a timeout test): nothing to answer.
                self.close_connection = True

    return Handler


def iter_text_blocks(value: Any) -> Iterator[str]:
    """The text of an Anthropic ``system``/``content`` value: a string or a
    list of blocks (``{"type": "text", "text": ...}``)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for block in value:
            if isinstance(block, str):
                yield block
            elif isinstance(block, dict):
                text = block.get("text")
                if isinstance(text, str):
                    yield text
                content = block.get("content")
                if content is not None:  # e.g. tool_result blocks
                    yield from iter_text_blocks(content)
