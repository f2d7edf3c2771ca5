"""The fixed cost of a query on the local default: what `gligabao serve` adds
around the embedding and the LLM request, at 1k / 10k / 100k facts, alone in
its SQLite file or beside other users' data; and the same for a short remember.

    .venv/bin/python bench/query_cost.py [--sizes 1000,10000,100000] [--questions 100]
        [--neighbours-mb 0] [--remember 0] [--dim 384]

Setup: the synthetic graph of bench/query_scale.py written into a fresh SQLite
file through the SQLite adapters (bench/sqlite_serve.py), then `gligabao serve
--data FILE` in a child process, its LLM the fake Anthropic server and its
embeddings the fake OpenAI server (tests/fakes, loopback, answering at once).
With ``--neighbours-mb N`` the file first gets about N MB of other users'
graphs (10k facts each, the same word lists), so that a read or an index not
partitioned by dataset shows.

Each question is one POST /v1/gb/query, timed by this client (``wall``: the
HTTP server, the event, routing, validation, the reads, the call record's
writes, the JSON). Then its call record (GET /v1/gb/calls/{id}) gives the
trajectory: ``embed`` (the embedding request) and ``llm`` (the model request)
are the providers' time; ``ours`` = wall - embed - llm. ``in call`` is the
call record's own duration less the same two; ``outside`` = wall - duration
(the HTTP server, event, routing, validation, the record's save, the JSON).

``--remember N``: N short remembers (one sentence each) into a fresh dataset,
the fake LLM answering extraction at once: their wall time, and the steps that
dominate it. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import sqlite_serve as ours
from query_scale import generate

from gligabao.models import DatasetKey

ROOT = Path(__file__).resolve().parents[1]
NEIGHBOUR_EDGES = 10_000


_conns: dict[str, http.client.HTTPConnection] = {}


def request(url: str, body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request on a kept-alive connection (as an agent's HTTP client
    sends them; ``GB_BENCH_NEW_CONNECTIONS=1``: a new connection each time)."""
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    method = "POST" if body is not None else "GET"
    headers = {"Content-Type": "application/json"}
    if os.environ.get("GB_BENCH_NEW_CONNECTIONS"):
        req = urllib.request.Request(url, data=body, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, dict(resp.headers.items()), resp.read()
    conn = _conns.get(parts.netloc)
    if conn is None:
        conn = _conns[parts.netloc] = http.client.HTTPConnection(parts.netloc, timeout=120)
    try:
        conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
    except (http.client.HTTPException, OSError):  # the server closed it: once more
        conn.close()
        conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
    return resp.status, dict(resp.headers.items()), resp.read()


def pct(values: list[float], p: float) -> float:
    return ours.pct(values, p) if values else float("nan")


def add_neighbours(path: Path, mb: int, dim: int) -> int:
    """Other users' graphs in the same file until it holds about ``mb`` MB,
    each with the call records its remembers would have left (one call and
    two inferences per fact, expiring in 30 days)."""
    from gligabao.records.model import Inference, Step, new_call
    from gligabao.records.sqlite.store import SqliteRecordStore
    from gligabao.sqlite.db import Database

    n = 0
    while not path.exists() or path.stat().st_size / 1e6 < mb:
        key = DatasetKey(f"neighbour{n}", "main")
        ours.write_graph(path, generate(key, NEIGHBOUR_EDGES, random.Random(1000 + n)), dim)
        db = Database(path)
        with db.connect() as conn:
            conn.execute("PRAGMA synchronous=OFF")  # the set-up only
        records = SqliteRecordStore(db, retention_days=30)
        for i in range(NEIGHBOUR_EDGES):
            call = new_call(f"{n}-{i}", "remember", key.user_id, key.dataset, None)
            call.steps = [Step("extract", 1.0, {"entities": 2}), Step("write", 1.0)]
            call.inferences = [
                Inference(f"{n}-{i}-{s}", key.user_id, key.dataset, None, call.call_id,
                          "remember", s, "m", "none", 100, 20, None, 0.0, 1, "ok",
                          call.started_at, "anthropic")
                for s in ("extract", "embed")
            ]
            records.save_call(call)
        db.close()
        n += 1
    return n


def steps_of(url: str, call_id: str, user: str) -> dict[str, Any]:
    _, _, raw = request(f"{url}/v1/gb/calls/{call_id}?user_id={user}")
    return dict(json.loads(raw))


def step_ms(call: dict[str, Any], name: str) -> float:
    return sum(float(s["ms"]) for s in call["steps"] if s["name"] == name)


def ask(url: str, qs: list[ours.Question], llm: Any) -> dict[str, Any]:
    request(url + "/v1/gb/query", b'{"user_id": "bench", "query": "warm up"}')
    walls, ids, hits = [], [], []
    for q in qs:
        body = json.dumps({"user_id": "bench", "query": q.text}).encode()
        t0 = time.perf_counter()
        status, headers, _ = request(url + "/v1/gb/query", body)
        walls.append((time.perf_counter() - t0) * 1000)
        assert status == 200
        ids.append(headers["X-Gb-Call-Id"])
        hits.append(q.line in str(llm.requests_for("query")[-1]["messages"]))
    calls = [steps_of(url, i, "bench") for i in ids]
    out: dict[str, Any] = {"wall": walls, "hits": hits, "ours": [], "in_call": [], "outside": []}
    per_step: dict[str, list[float]] = {}
    for wall, call in zip(walls, calls, strict=True):
        providers = step_ms(call, "embed") + step_ms(call, "llm")
        out["ours"].append(wall - providers)
        out["in_call"].append(float(call["duration_ms"]) - providers)
        out["outside"].append(wall - float(call["duration_ms"]))
        for s in call["steps"]:
            per_step.setdefault(s["name"], []).append(float(s["ms"]))
    out["steps"] = {k: statistics.median(v) for k, v in per_step.items()}
    return out


def remember_run(url: str, llm: Any, n: int) -> dict[str, Any]:
    people = ["Alice", "Bob", "Chen", "Dana", "Emil", "Farah", "Goran", "Hana"]
    orgs = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark"]
    walls, per_step = [], {}
    for i in range(n + 1):  # the first one warms up
        who, org = people[i % len(people)], orgs[i % len(orgs)]
        llm.default(
            "extract",
            {
                "entities": [
                    {"name": who, "type": "person", "description": ""},
                    {"name": org, "type": "organization", "description": ""},
                ],
                "edges": [
                    {"source": who, "target": org, "relation": "works_at",
                     "description": f"{who} works at {org}.", "valid_at": None,
                     "invalid_at": None},
                ],
            },
        )
        body = json.dumps({"user_id": "rem", "text": f"{who} works at {org} ({i})."}).encode()
        t0 = time.perf_counter()
        status, headers, _ = request(url + "/v1/gb/remember", body)
        wall = (time.perf_counter() - t0) * 1000
        assert status == 200
        if i == 0:
            continue
        walls.append(wall)
        call = steps_of(url, headers["X-Gb-Call-Id"], "rem")
        for s in call["steps"]:
            per_step.setdefault(s["name"], []).append(float(s["ms"]))
        per_step.setdefault("(outside the call)", []).append(wall - float(call["duration_ms"]))
    return {"wall": walls, "steps": {k: statistics.median(v) for k, v in per_step.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--neighbours-mb", type=int, default=0)
    ap.add_argument("--remember", type=int, default=0, help="short remembers to time")
    ap.add_argument("--dim", type=int, default=384)
    args = ap.parse_args(argv)
    np.seterr(all="ignore")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else []
    key = DatasetKey("bench", "main")
    head = (f"{'facts':>7} {'file MB':>8} {'wall p50':>8} {'p95':>6} {'ours p50':>8} {'p95':>6} "
            f"{'in call':>7} {'outside':>7} {'hits':>7}")
    fake_llm, fake_emb = ours.fakes(args.dim)
    with fake_llm as llm, fake_emb as emb, tempfile.TemporaryDirectory() as tmp:
        llm.default("query", ours.ANSWER)
        if sizes:
            print(head)
        for size in sizes:
            path = Path(tmp) / f"gb-{size}.db"
            others = add_neighbours(path, args.neighbours_mb, args.dim) if args.neighbours_mb else 0
            rng = random.Random(size)
            g = generate(key, size, rng)
            ours.write_graph(path, g, args.dim)
            qs = ours.questions(g, args.questions, rng, emb, args.dim)
            proc, url = ours.serve(path, llm, emb, args.dim)
            try:
                r = ask(url, qs, llm)
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.communicate(timeout=60)
            mb = path.stat().st_size / 1e6
            print(
                f"{size:>7} {mb:>8.0f} {pct(r['wall'], 50):>8.2f} {pct(r['wall'], 95):>6.2f} "
                f"{pct(r['ours'], 50):>8.2f} {pct(r['ours'], 95):>6.2f} "
                f"{pct(r['in_call'], 50):>7.2f} {pct(r['outside'], 50):>7.2f} "
                f"{sum(r['hits']):>3}/{len(r['hits']):<3}"
                + (f"  (+{others} other users)" if others else ""),
                flush=True,
            )
            print("        steps, median ms: " + ", ".join(
                f"{k} {v:.2f}" for k, v in r["steps"].items()), flush=True)
        if args.remember:
            path = Path(tmp) / "gb-remember.db"
            proc, url = ours.serve(path, llm, emb, args.dim)
            try:
                r = remember_run(url, llm, args.remember)
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.communicate(timeout=60)
            print(f"remember x{args.remember}: wall p50 {pct(r['wall'], 50):.2f} ms, "
                  f"p95 {pct(r['wall'], 95):.2f} ms")
            ranked = sorted(r["steps"].items(), key=lambda kv: -kv[1])
            print("        steps, median ms: " + ", ".join(f"{k} {v:.2f}" for k, v in ranked))
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
