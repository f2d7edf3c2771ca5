"""Where a query's own time goes on the local default: cProfile of
`gligabao serve`'s whole request path (HTTP parsing, the event, routing,
validation, the reads, scoring, the record's save, the JSON) over N questions.

    .venv/bin/python -m bench.query_profile [--facts 1000] [--questions 300]
        [--dim 384] [--timer cpu|wall] [--sort tottime] [--top 40] [--out FILE.prof]

Setup as bench.query_cost: the synthetic graph in a fresh SQLite file, the
fake Anthropic and OpenAI servers (in this process) answering at once on
kept-alive connections, the questions one at a time on one kept-alive
connection. The server is `gligabao serve` in a child process, started
through this module (``--child``) so that each connection's thread and each
read worker's task run under a cProfile of their own (cProfile follows one
thread); the child merges them when it stops. ``--timer cpu``: each thread's
own CPU time (what the code burns; a wait for the GIL, a lock or an fsync
costs nothing); ``wall``: the time as it passes. Profiling slows Python code
down about twice: read the shares, not the absolute times. Figures are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gligabao.models import DatasetKey

from .harness.fakes import ANSWER, start_fakes
from .harness.http import Connection
from .harness.servers import Child, child_env, fakes_env, free_port
from .harness.synthetic_graph import generate
from .harness.timing import load_average
from .sqlite_serve import questions, write_graph

TIMERS: dict[str, Callable[[], float]] = {"cpu": time.thread_time, "wall": time.perf_counter}


def child(out: str, timer: str, serve_args: list[str]) -> int:
    """`gligabao serve` with its request threads and read workers profiled;
    the merged profile written to ``out`` when it stops (SIGTERM)."""
    from gligabao.local import cli, server
    from gligabao.memory import parallel

    profiles: list[cProfile.Profile] = []
    lock = threading.Lock()

    def profiled(fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kw: Any) -> Any:
            prof = cProfile.Profile(TIMERS[timer])
            with lock:
                profiles.append(prof)
            return prof.runcall(fn, *args, **kw)

        return run

    def reset(*_: Any) -> None:  # after the warm-up (imports, the matrices' first load)
        with lock:
            profiles.clear()

    server._RequestHandler.handle = profiled(server._RequestHandler.handle)  # type: ignore[method-assign,assignment]
    submit = parallel._POOL.submit
    parallel._POOL.submit = lambda fn, *a: submit(profiled(fn), *a)  # type: ignore[method-assign,assignment]
    signal.signal(signal.SIGUSR1, reset)
    try:
        return cli.main(["serve", *serve_args])
    finally:
        with lock:
            stats = None
            for prof in profiles:
                if stats is None:
                    stats = pstats.Stats(prof, stream=io.StringIO())
                else:
                    stats.add(prof)
        if stats is not None:
            stats.dump_stats(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--facts", type=int, default=1000)
    ap.add_argument("--questions", type=int, default=300)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--timer", choices=sorted(TIMERS), default="cpu")
    ap.add_argument("--sort", default="tottime")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--out", default="")
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        return child(args.out, args.timer, args.child)
    np.seterr(all="ignore")
    print(load_average())
    llm, emb = start_fakes({"query": ANSWER}, dim=args.dim, keep_alive=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            key = DatasetKey("bench", "main")
            rng = random.Random(args.facts)
            g = generate(key, args.facts, rng)
            path = Path(tmp) / "gb.db"
            write_graph(path, g, args.dim)
            qs = questions(g, args.questions, rng, emb, args.dim)
            out = args.out or str(Path(tmp) / "query.prof")
            port = free_port()
            env = child_env({**fakes_env(llm, emb), "GB_EMBEDDING_DIMENSION": str(args.dim)})
            cmd = [
                sys.executable,
                "-m",
                "bench.query_profile",
                "--out",
                out,
                "--timer",
                args.timer,
                "--child",
                "--port",
                str(port),
                "--quiet",
                "--data",
                str(path),
            ]
            proc = Child.start(cmd, env, path.with_suffix(".log")).wait_for("listening on")
            try:
                conn = Connection(f"http://127.0.0.1:{port}")
                conn.request("POST", "/v1/gb/query", {"user_id": "bench", "query": "warm up"})
                conn.close()
                time.sleep(0.2)
                os.kill(proc.proc.pid, signal.SIGUSR1)
                time.sleep(0.2)
                conn = Connection(f"http://127.0.0.1:{port}")
                t0 = time.perf_counter()
                for q in qs:
                    status, body, _ = conn.request(
                        "POST", "/v1/gb/query", {"user_id": "bench", "query": q.text}
                    )
                    assert status == 200, body
                wall = (time.perf_counter() - t0) * 1000 / len(qs)
                conn.close()
            finally:
                proc.stop()
            print(f"{len(qs)} questions, {wall:.2f} ms each (wall, profiled)")
            stats = pstats.Stats(out)
            stats.sort_stats(args.sort).print_stats(args.top)
    finally:
        llm.stop()
        emb.stop()
    print(load_average())
    return 0


if __name__ == "__main__":
    sys.exit(main())
