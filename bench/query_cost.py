"""The fixed cost of a query on the local default: what `gligabao serve` adds
around the embedding and the LLM request, at 1k / 10k / 100k facts, alone in
its SQLite file or beside other users' data; and the same for a short remember.

    .venv/bin/python -m bench.query_cost [--sizes 1000,10000,100000] [--questions 100]
        [--neighbours-mb 0] [--remember 0] [--dim 384] [--against DIR/shared] [--rounds 1]

Setup: the synthetic graph of bench/harness/synthetic_graph.py written into a
fresh SQLite file through the SQLite adapters (bench.sqlite_serve), then
`gligabao serve --data FILE` in a child process, its LLM the fake Anthropic
server and its embeddings the fake OpenAI server (tests/fakes, loopback,
answering at once on kept-alive connections, as a provider's API does). With
``--neighbours-mb N`` the file first gets about N MB of other users' graphs
(10k facts each, the same word lists) and the call records their remembers
would have left, so that a read or an index not partitioned by dataset shows.

Each question is one POST /v1/gb/query on one kept-alive connection, timed by
this client (``wall``). Its call record (GET /v1/gb/calls/{id}) gives the
trajectory: the ``llm`` step (the model request) and the embedding request
(its inference row's latency, whole milliseconds: up to 1 ms of it is counted
as ours); ``ours`` = wall - embed - llm: the HTTP server, the event, routing,
validation, the reads and scoring, the record's save, the JSON. ``in call``
is the record's own duration less the same two; ``outside`` = wall -
duration. The keyword reads overlap the embedding: what they take within it
is not counted as ours. ``server CPU``: the server process's CPU time per
question (user + system, /proc), which includes its side of the two
provider requests (the SDKs' request building and JSON parsing) but none of
the waits: on a loaded machine the steadier figure.

``--against DIR/shared``: the same file served in turn by another tree's
code (``git archive main shared | tar -x -C DIR``), ``--rounds`` times each,
alternating, so that both rows are measured at the same load (the rows:
``before`` and ``now``, every question of every round).

With ``--neighbours-mb`` the same graph is also written alone into a file
of its own, and the two files are served in turn (``--rounds``): the rows
``alone`` and ``beside others``, at the same load.

``--remember N``: N short remembers (one sentence each) into a fresh dataset,
the fake LLM answering extraction at once: their wall time, and the steps that
dominate it. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from gligabao.models import DatasetKey

from .harness.fakes import ANSWER, FakeAnthropic, start_fakes
from .harness.http import Connection
from .harness.servers import Child, fakes_env, free_port, start_serve
from .harness.synthetic_graph import generate
from .harness.tables import table
from .harness.timing import load_average, median, ms_since, pct
from .harness.workload import extract_reply, make_text
from .sqlite_serve import Question, questions, write_graph

NEIGHBOUR_EDGES = 10_000


def add_neighbours(path: Path, mb: int, dim: int) -> int:
    """Other users' graphs in the same file until it holds about ``mb`` MB,
    each with the call records its remembers would have left (one call and
    two inferences per fact, expiring in 30 days): how many users."""
    from gligabao.records.model import Inference, Step, new_call
    from gligabao.records.sqlite.store import SqliteRecordStore
    from gligabao.sqlite.db import Database

    n = 0
    while not path.exists() or path.stat().st_size / 1e6 < mb:
        key = DatasetKey(f"neighbour{n}", "main")
        write_graph(path, generate(key, NEIGHBOUR_EDGES, random.Random(1000 + n)), dim)
        db = Database(path)
        records = SqliteRecordStore(db, retention_days=30)
        for i in range(NEIGHBOUR_EDGES):
            call = new_call(f"{n}-{i}", "remember", key.user_id, key.dataset, None)
            call.steps = [Step("extract", 1.0, {"entities": 2}), Step("write", 1.0)]
            call.inferences = [
                Inference(
                    f"{n}-{i}-{s}",
                    key.user_id,
                    key.dataset,
                    None,
                    call.call_id,
                    "remember",
                    s,
                    "m",
                    "none",
                    100,
                    20,
                    None,
                    0.0,
                    1,
                    "ok",
                    call.started_at,
                    "anthropic",
                )
                for s in ("extract", "embed")
            ]
            records.save_call(call)
        db.close()
        n += 1
    return n


def serve(
    path: Path, llm: FakeAnthropic, emb: Any, dim: int, shared: str | None = None
) -> tuple[Child, str]:
    """`gligabao serve --data path` on the fakes, this tree's code or that of
    ``shared`` (another tree's ``shared`` folder); (the child, its base URL)."""
    port = free_port()
    env = {**fakes_env(llm, emb), "GB_EMBEDDING_DIMENSION": str(dim)}
    if shared:
        env["PYTHONPATH"] = shared
    child = start_serve(path.with_suffix(".log"), port, env, "--data", str(path))
    return child, f"http://127.0.0.1:{port}"


def merge(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The rounds of one side as one run: every question's figures, the
    CPU per question averaged, the steps' medians of the rounds' medians."""
    out: dict[str, Any] = {
        k: [x for r in runs for x in r[k]] for k in ("wall", "hits", "ours", "in_call", "outside")
    }
    out["cpu"] = sum(r["cpu"] for r in runs) / len(runs)
    out["steps"] = {
        k: median([r["steps"][k] for r in runs if k in r["steps"]]) for k in runs[0]["steps"]
    }
    return out


def call_of(conn: Connection, call_id: str, user: str) -> dict[str, Any]:
    """The call record, with its inference rows under ``inferences``."""
    status, call, _ = conn.request("GET", f"/v1/gb/calls/{call_id}?user_id={user}")
    assert status == 200, call
    status, rows, _ = conn.request("GET", f"/v1/gb/inferences?user_id={user}&call_id={call_id}")
    assert status == 200, rows
    return {**call, "inferences": rows["inferences"]}


def step_ms(call: dict[str, Any], name: str) -> float:
    return sum(float(s["ms"]) for s in call["steps"] if s["name"] == name)


def embed_ms(call: dict[str, Any]) -> float:
    return sum(float(i["latency_ms"]) for i in call["inferences"] if i["stage"] == "embed")


def ask(child: Child, base: str, qs: list[Question], llm: FakeAnthropic) -> dict[str, Any]:
    conn = Connection(base)
    conn.request("POST", "/v1/gb/query", {"user_id": "bench", "query": "warm up"})
    walls, ids, hits = [], [], []
    cpu0 = child.cpu_ms()
    for q in qs:
        t0 = time.perf_counter()
        status, body, headers = conn.request(
            "POST", "/v1/gb/query", {"user_id": "bench", "query": q.text}
        )
        walls.append(ms_since(t0))
        assert status == 200, body
        ids.append(headers["X-Gb-Call-Id"])
        hits.append(q.line in str(llm.requests_for("query")[-1]["messages"]))
    cpu = (child.cpu_ms() - cpu0) / len(qs)
    out: dict[str, Any] = {
        "wall": walls,
        "hits": hits,
        "ours": [],
        "in_call": [],
        "outside": [],
        "cpu": cpu,
    }
    per_step: dict[str, list[float]] = {}
    for wall, call_id in zip(walls, ids, strict=True):
        call = call_of(conn, call_id, "bench")
        providers = embed_ms(call) + step_ms(call, "llm")
        out["ours"].append(wall - providers)
        out["in_call"].append(float(call["duration_ms"]) - providers)
        out["outside"].append(wall - float(call["duration_ms"]))
        for s in call["steps"]:
            per_step.setdefault(s["name"], []).append(float(s["ms"]))
        per_step.setdefault("(embed request)", []).append(embed_ms(call))
    conn.close()
    out["steps"] = {k: median(v) for k, v in per_step.items()}
    return out


def remember_run(child: Child, base: str, llm: FakeAnthropic, n: int) -> dict[str, Any]:
    conn = Connection(base)
    walls: list[float] = []
    cpu = 0.0
    per_step: dict[str, list[float]] = {}
    rng = random.Random(7)
    llm.default("extract", extract_reply)
    for i in range(n + 1):  # the first one warms up
        text = make_text(rng)
        cpu0 = child.cpu_ms()
        t0 = time.perf_counter()
        status, body, headers = conn.request(
            "POST", "/v1/gb/remember", {"user_id": "rem", "text": text}
        )
        wall = ms_since(t0)
        assert status == 200, body
        if i == 0:
            continue
        cpu += child.cpu_ms() - cpu0
        walls.append(wall)
        call = call_of(conn, headers["X-Gb-Call-Id"], "rem")
        for s in call["steps"]:
            per_step.setdefault(s["name"], []).append(float(s["ms"]))
        per_step.setdefault("(outside the call)", []).append(wall - float(call["duration_ms"]))
    conn.close()
    return {"wall": walls, "cpu": cpu / n, "steps": {k: median(v) for k, v in per_step.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--neighbours-mb", type=int, default=0)
    ap.add_argument("--remember", type=int, default=0, help="short remembers to time")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--against", default="", help="another tree's shared/ folder, served in turn")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args(argv)
    np.seterr(all="ignore")
    print(load_average())
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else []
    key = DatasetKey("bench", "main")
    rows, steps = [], []
    llm, emb = start_fakes({"query": ANSWER}, dim=args.dim, keep_alive=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for size in sizes:
                path = Path(tmp) / f"gb-{size}.db"
                others = (
                    add_neighbours(path, args.neighbours_mb, args.dim) if args.neighbours_mb else 0
                )
                rng = random.Random(size)
                g = generate(key, size, rng)
                write_graph(path, g, args.dim)
                qs = questions(g, args.questions, rng, emb, args.dim)
                # (label, file, tree): before/now on one file, or the dataset
                # alone in a file of its own against beside the neighbours
                sides: dict[str, tuple[Path, str | None]] = {"": (path, None)}
                if args.against:
                    sides = {"before": (path, args.against), "now": (path, None)}
                elif args.neighbours_mb:
                    alone = Path(tmp) / f"gb-{size}-alone.db"
                    write_graph(alone, generate(key, size, random.Random(size)), args.dim)
                    sides = {"alone": (alone, None), "beside others": (path, None)}
                runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
                for _ in range(max(1, args.rounds)):
                    for name, (file, shared) in sides.items():
                        child, base = serve(file, llm, emb, args.dim, shared)
                        try:
                            runs[name].append(ask(child, base, qs, llm))
                        finally:
                            child.stop()
                for name, side in runs.items():
                    r = merge(side)
                    file = sides[name][0]
                    rows.append(
                        [
                            f"{size} {name}".strip(),
                            others if file == path else 0,
                            f"{file.stat().st_size / 1e6:.0f}",
                            *(
                                f"{pct(r[k], p):.2f}"
                                for k, p in (
                                    ("wall", 50),
                                    ("wall", 95),
                                    ("ours", 50),
                                    ("ours", 95),
                                    ("in_call", 50),
                                    ("outside", 50),
                                )
                            ),
                            f"{r['cpu']:.1f}",
                            f"{sum(r['hits'])}/{len(r['hits'])}",
                        ]
                    )
                    steps.append(
                        f"{size} {name}: "
                        + ", ".join(f"{k} {v:.2f}" for k, v in r["steps"].items())
                    )
            if rows:
                print(
                    table(
                        [
                            "facts",
                            "other users",
                            "file MB",
                            "wall p50",
                            "p95",
                            "ours p50",
                            "p95",
                            "in call",
                            "outside",
                            "server CPU",
                            "hits",
                        ],
                        rows,
                    )
                )
                print("steps, median ms:\n  " + "\n  ".join(steps))
            trees = {"before": args.against, "now": None} if args.against else {"": None}
            for name, shared in trees.items() if args.remember else ():
                db = Path(tmp) / f"gb-remember-{name or 'now'}.db"
                child, base = serve(db, llm, emb, args.dim, shared)
                try:
                    r = remember_run(child, base, llm, args.remember)
                finally:
                    child.stop()
                print(
                    f"remember x{args.remember} {name}: wall p50 {pct(r['wall'], 50):.2f} ms, "
                    f"p95 {pct(r['wall'], 95):.2f} ms, server CPU {r['cpu']:.1f} ms each"
                )
                ranked = sorted(r["steps"].items(), key=lambda kv: -kv[1])
                print("  steps, median ms: " + ", ".join(f"{k} {v:.2f}" for k, v in ranked))
    finally:
        llm.stop()
        emb.stop()
    print(load_average())
    return 0


if __name__ == "__main__":
    sys.exit(main())
