"""Round trips made visible: a proxy that holds every DynamoDB request before
forwarding it, an embeddings fake that holds its answer, and the count of
sequential waves in what they recorded.

    proxy = LatencyProxy(moto_url, hold_s=0.02).start()   # GB_DYNAMODB_ENDPOINT=proxy.url
    emb = HeldOpenAI(dim=64, hold_s=0.1).start()          # OPENAI_BASE_URL=emb.base_url

Every request the proxy forwards is held ``hold_s`` first, so two requests
sent one after the other (the second needs the first's answer) never overlap,
and two sent together always do: the number of waves is then a property of the
code, not of the machine (bench/query_waves.py, tests/integration/
test_query_waves.py). All times are ``time.monotonic()`` of this process.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from ._server import RecordedRequest, Response
from .openai_server import FakeOpenAI

# Not forwarded: they describe one hop, not the message.
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade"}


@dataclass(frozen=True)
class Interval:
    """One request: its operation (``GetItem``, or ``embeddings``), the tables
    it named, and when it arrived and when its answer was sent."""

    op: str
    tables: tuple[str, ...]
    start: float
    end: float

    def overlaps(self, start: float, end: float) -> bool:
        return self.start < end and start < self.end

    def on(self, short: str) -> bool:
        """It named a table whose name ends with ``short`` (``datasets``)."""
        return any(t.endswith(short) for t in self.tables)


def tables_of(body: bytes) -> tuple[str, ...]:
    """The table names a DynamoDB request body names (one, or a batch's)."""
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        return ()
    if not isinstance(data, dict):
        return ()
    if isinstance(data.get("TableName"), str):
        return (data["TableName"],)
    names: set[str] = set()
    for field in ("RequestItems",):
        if isinstance(data.get(field), dict):
            names.update(data[field])
    for item in data.get("TransactItems") or []:
        for op in item.values() if isinstance(item, dict) else []:
            if isinstance(op, dict) and isinstance(op.get("TableName"), str):
                names.add(op["TableName"])
    return tuple(sorted(names))


@dataclass
class Gate:
    """Requests that ``match`` (operation, tables) wait for ``open`` before
    their hold, at most ``timeout_s``; after one timeout the gate stays
    open (``timed_out``), so a run that never opens it pays the wait once."""

    match: Callable[[str, tuple[str, ...]], bool]
    open: threading.Event
    timeout_s: float
    timed_out: bool = False

    def wait(self, op: str, tables: tuple[str, ...]) -> None:
        if self.timed_out or not self.match(op, tables):
            return
        if not self.open.wait(self.timeout_s):
            self.timed_out = True


class LatencyProxy:
    """HTTP on 127.0.0.1 in front of ``upstream`` (a DynamoDB endpoint): each
    request is held ``hold_s`` (settable at any time; 0 while a setup writes),
    then forwarded as is, and its answer sent back as is (the CRC32 header
    botocore checks included). With a ``gate``, the requests it matches wait
    for it first."""

    def __init__(self, upstream: str, hold_s: float = 0.02) -> None:
        parsed = urllib.parse.urlsplit(upstream)
        self.upstream_host = parsed.hostname or "127.0.0.1"
        self.upstream_port = parsed.port or 80
        self.hold_s = hold_s
        self.gate: Gate | None = None
        self.url = ""
        self._cond = threading.Condition()
        self._seen: list[tuple[str, tuple[str, ...], float]] = []
        self._done: list[Interval] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def start(self) -> Self:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _proxy_handler(self))
        httpd.daemon_threads = True
        self._httpd = httpd
        self.url = f"http://127.0.0.1:{httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()  # held requests go on at once
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def reset(self) -> None:
        with self._cond:
            self._seen.clear()
            self._done.clear()

    @property
    def intervals(self) -> list[Interval]:
        """The answered requests, in the order they were answered."""
        with self._cond:
            return list(self._done)

    @property
    def seen(self) -> list[tuple[str, tuple[str, ...], float]]:
        """(operation, tables, arrival) of every request received, answered or not."""
        with self._cond:
            return list(self._seen)

    def wait_until(
        self, pred: Callable[[list[tuple[str, tuple[str, ...], float]]], bool], timeout: float
    ) -> bool:
        """Wait until ``pred(seen)`` holds (True), or ``timeout`` seconds (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: pred(list(self._seen)), timeout)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every request received has been answered."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self._done) == len(self._seen), timeout)

    def _arrived(self, op: str, tables: tuple[str, ...], at: float) -> None:
        with self._cond:
            self._seen.append((op, tables, at))
            self._cond.notify_all()

    def _answered(self, interval: Interval) -> None:
        with self._cond:
            self._done.append(interval)
            self._cond.notify_all()

    def _forward(
        self, method: str, path: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        conn = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=60)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for k, v in headers:
                if k.lower() not in HOP_BY_HOP:
                    conn.putheader(k, v)
            conn.endheaders(body)
            resp = conn.getresponse()
            data = resp.read()
            out = [(k, v) for k, v in resp.getheaders() if k.lower() not in HOP_BY_HOP]
            return resp.status, out, data
        finally:
            conn.close()


def _proxy_handler(proxy: LatencyProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # Keep-alive, as botocore expects of DynamoDB: one connection, many requests.
        protocol_version = "HTTP/1.1"
        # The answer's headers and body are two writes: with Nagle's algorithm
        # the body waits for the client's delayed ACK, ~40 ms a request that
        # no DynamoDB endpoint adds (it showed as gaps between the waves).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            self._relay()

        def do_GET(self) -> None:
            self._relay()

        def _relay(self) -> None:
            start = time.monotonic()
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            target = self.headers.get("x-amz-target") or self.command
            op = target.rsplit(".", 1)[-1]
            tables = tables_of(body)
            proxy._arrived(op, tables, start)
            if proxy.gate is not None:
                proxy.gate.wait(op, tables)
            if proxy.hold_s > 0:
                proxy._stopping.wait(proxy.hold_s)
            try:
                status, headers, data = proxy._forward(
                    self.command, self.path, list(self.headers.items()), body
                )
            except OSError as exc:
                status, headers, data = 502, [], f"proxy: {exc}".encode()
            # Recorded before the client can have the answer: a caller that
            # resets the records after an answer never sees it come in late.
            proxy._answered(Interval(op, tables, start, time.monotonic()))
            self.send_response(status)
            for k, v in headers:
                if k.lower() != "content-length":
                    self.send_header(k, v)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

    return Handler


class HeldOpenAI(FakeOpenAI):
    """The embeddings fake, answering each request ``hold_s`` late, and, with
    a ``gate``, only once the gate is set (at most ``gate_timeout_s``) too.
    ``arrived`` is set when a request comes in; ``intervals`` records each."""

    name = "held-openai"

    def __init__(
        self,
        dim: int = 64,
        hold_s: float = 0.0,
        gate: threading.Event | None = None,
        gate_timeout_s: float = 60.0,
    ) -> None:
        super().__init__(dim=dim)
        self.hold_s = hold_s
        self.gate = gate
        self.gate_timeout_s = gate_timeout_s
        self._intervals: list[Interval] = []
        self.arrived = threading.Event()

    @property
    def intervals(self) -> list[Interval]:
        with self._lock:
            return list(self._intervals)

    def reset(self) -> None:
        super().reset()
        with self._lock:
            self._intervals.clear()
        self.arrived.clear()

    def _handle(self, req: RecordedRequest) -> Response:
        self.arrived.set()
        if self.gate is not None:
            self.gate.wait(self.gate_timeout_s)
        if self.hold_s > 0:
            self._sleep(self.hold_s)
        resp = super()._handle(req)
        with self._lock:
            self._intervals.append(Interval("embeddings", (), req.received_at, time.monotonic()))
        return resp


# --- waves ---------------------------------------------------------------------

#: The tables a call's record is written to (once, at its end): not a read.
RECORD_TABLES = ("calls", "inferences")


def is_record(i: Interval) -> bool:
    return any(i.on(t) for t in RECORD_TABLES)


def waves(intervals: Sequence[Interval]) -> int:
    """The longest chain of requests each starting after the previous one
    ended: the round trips a caller waits for one after another (requests
    sent together count once; a request that needed another's answer, or
    waited for a free worker, counts again)."""
    ordered = sorted(intervals, key=lambda i: i.start)
    depth: list[int] = []
    for n, cur in enumerate(ordered):
        before = [depth[k] for k in range(n) if ordered[k].end <= cur.start]
        depth.append(1 + max(before, default=0))
    return max(depth, default=0)


@dataclass(frozen=True)
class Split:
    """A query's DynamoDB requests around its embeddings request."""

    requests: int
    total: int  # sequential waves, all of them
    before: int  # waves of the requests that ended before the embedding started
    during: int  # of those that overlapped it
    after: int  # of those that started after it ended


def split(intervals: Sequence[Interval], embed: Interval) -> Split:
    before = [i for i in intervals if i.end <= embed.start]
    after = [i for i in intervals if i.start >= embed.end]
    during = [i for i in intervals if i.overlaps(embed.start, embed.end)]
    return Split(len(intervals), waves(intervals), waves(before), waves(during), waves(after))
