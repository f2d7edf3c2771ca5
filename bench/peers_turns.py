"""The sides of bench.peers_compare, each asked one question at a time by a
driver that goes round them in turn (so that a change of the machine's load
falls on every side alike, not on whichever ran during it).

A side answers a question with an ``Answer``: the wall milliseconds of its
call (a worker's own measure, in its process; an HTTP side's, the round trip
measured here), the CPU milliseconds of the call where the side is a worker
(its process's, every thread: what the call cost whatever else the machine
runs), the embedding's milliseconds, and whether the asked fact was found.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from .harness.fakes import FakeAnthropic
from .harness.http import Connection
from .harness.timing import ms_since
from .query_cost import call_of, embed_ms
from .sqlite_serve import Question

MARK = "@@ "  # a worker's protocol lines (a library's own prints pass through)


@dataclass
class Answer:
    ms: float
    cpu_ms: float | None
    embed_ms: float
    hit: bool


class Side(Protocol):
    name: str

    def ask(self, q: Question) -> Answer: ...

    def stop(self) -> None: ...


def pairs_hit(q: Question, found: list[list[str]]) -> bool:
    """A hit from (edge id, target id) pairs, ``d<id>``, ``e<id>``."""
    if q.edge is not None:
        return any(e == f"d{q.edge}" for e, _ in found)
    return any(t == f"e{q.place}" for _, t in found)


class Worker:
    """A side in a child process of its own (ours through
    ``gligabao.Memory``, a peer through its in-process call): questions on
    its stdin, answers on its stdout (bench.peers_sides' ``worker``)."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self._err = log.open("w")
        self.proc = subprocess.Popen(
            args, env=env, cwd=env.get("BENCH_ROOT"), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._err, text=True, bufsize=1,
        )  # fmt: skip
        self.log = log
        self.build_s = float(self._read()["ready"])

    def _read(self) -> dict[str, Any]:
        out: IO[str] | None = self.proc.stdout
        assert out is not None
        for line in out:
            if line.startswith(MARK):
                return dict(json.loads(line[len(MARK) :]))
        self._err.flush()
        raise SystemExit(f"{self.name} ended: {self.log.read_text(errors='replace')[-3000:]}")

    def ask(self, q: Question) -> Answer:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"text": q.text}) + "\n")
        self.proc.stdin.flush()
        r = self._read()
        return Answer(r["ms"], r["cpu_ms"], r["embed_ms"], pairs_hit(q, r["found"]))

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._err.close()


class Ours:
    """`gligabao serve`'s POST /v1/gb/search or /query, on one kept-alive
    connection; the embedding's time from the call's inference row."""

    def __init__(self, base: str, route: str, llm: FakeAnthropic) -> None:
        self.name = f"gligabao {route} (HTTP)"
        self.route, self.llm = route, llm
        self.conn = Connection(base)
        self.conn.request("POST", f"/v1/gb/{route}", {"user_id": "bench", "query": "warm up"})
        self.build_s = 0.0

    def ask(self, q: Question) -> Answer:
        t0 = time.perf_counter()
        status, body, headers = self.conn.request(
            "POST", f"/v1/gb/{self.route}", {"user_id": "bench", "query": q.text}
        )
        ms = ms_since(t0)
        assert status == 200, body
        if self.route == "search":
            hit = pairs_hit(q, [[f"d{e['id']}", f"e{e['target_id']}"] for e in body["edges"]])
        else:
            hit = q.line in str(self.llm.requests_for("query")[-1]["messages"])
        embed = embed_ms(call_of(self.conn, headers["X-Gb-Call-Id"], "bench"))
        return Answer(ms, None, embed, hit)

    def stop(self) -> None:
        self.conn.close()


class Shim:
    """A peer behind bench.peers_sides' minimal HTTP server (POST /search)."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log: Path,
                 port: int) -> None:  # fmt: skip
        self.name = name
        self._err = log.open("w")
        self.proc = subprocess.Popen(args, env=env, cwd=env.get("BENCH_ROOT"),
                                     stdout=self._err, stderr=subprocess.STDOUT)  # fmt: skip
        while not _listening(port):  # the port opens once the graph is built
            if self.proc.poll() is not None:
                self._err.flush()
                raise SystemExit(f"{name} ended: {log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)
        built = [ln for ln in log.read_text().splitlines() if ln.startswith('{"build_s"')]
        self.build_s = float(json.loads(built[-1])["build_s"])
        self.conn = Connection(f"http://127.0.0.1:{port}")
        self.conn.request("POST", "/search", {"query": "warm up"})

    def ask(self, q: Question) -> Answer:
        t0 = time.perf_counter()
        status, body, _ = self.conn.request("POST", "/search", {"query": q.text})
        ms = ms_since(t0)
        assert status == 200, body
        return Answer(ms, None, float(body["embed_ms"]), pairs_hit(q, body["found"]))

    def stop(self) -> None:
        self.conn.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._err.close()


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def in_turn(sides: list[Side], qs: list[Question]) -> dict[str, list[Answer]]:
    """Every question to every side, the sides' order turning by one each
    question (none is always first after the driver's own work)."""
    got: dict[str, list[Answer]] = {s.name: [] for s in sides}
    for i, q in enumerate(qs):
        k = i % len(sides)
        for side in sides[k:] + sides[:k]:
            got[side.name].append(side.ask(q))
    return got
