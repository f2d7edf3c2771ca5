"""Load test of the local server: concurrent remembers and queries for a
bounded time, then a consistency check of what the store holds.

Everything runs in this process and on 127.0.0.1 only: moto's DynamoDB, the
fake Anthropic (tests/fakes; its `extract` reply is derived from the text, see
bench/harness/workload.py; its `query` reply is fixed), the fake OpenAI embeddings, and the local server's
real HTTP stack (the Lambda handlers), exactly as tests/conftest.py starts it.

    .venv/bin/python -m bench.load [--seconds 60] [--clients 20]

The clients write texts such as "Person07 works at Org3. Person07 lives in
City2." into a few datasets of a few users, from small pools of names, so that
concurrent calls keep naming the same entities; some remembers carry an
Idempotency-Key and are sent again. Afterwards, read back through the graph
store (bench/load_check.py):

* every acknowledged remember is there: its artifact (with its text), its
  entities (by ID, with their names), its edges (by ID, same endpoints and
  relation, still live) and their provenance links to the artifact;
* no entity is duplicated: normalized names are unique per dataset, and each
  is claimed by its entity;
* no ID is reused: an artifact ID is acknowledged once, an entity ID always
  names the same entity, an edge ID the same fact; a replayed key returns the
  first response; the datasets' counters match their rows.

Prints throughput, error rate and latency percentiles; exits 1 when a check
fails or a request errs.
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import sys
import threading
import time
import uuid
from collections import defaultdict
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from .harness.fakes import EMBED_DIM, start_fakes
from .harness.http import post
from .harness.servers import fakes_env, local_server
from .harness.timing import pct, quiet_stdout
from .harness.timing import say as say_plain
from .harness.workload import ORGS, PEOPLE, extract_reply, make_text

USERS = ("load-u1", "load-u2", "load-u3")
DATASETS = ("main", "team")
QUESTIONS = [
    "Where does {p} work?",
    "Where does {p} live?",
    "Who works at {o}?",
    "What do you know?",
]
QUERY_SHARE = 0.3
IDEMPOTENT_SHARE = 0.1
QUERY_REPLY = {"answer": "They work there.", "entities": [], "edges": [], "passages": []}


def start_llm() -> tuple[Any, Any]:
    """The fake Anthropic (extract replies read off the text) and OpenAI."""
    return start_fakes({"extract": extract_reply, "query": QUERY_REPLY})


def server_env(llm: Any, emb: Any) -> dict[str, str]:
    """The variables of a load run's server, but for its DynamoDB endpoint."""
    return {
        **fakes_env(llm, emb),
        "GB_TABLE_PREFIX": f"load{uuid.uuid4().hex[:8]}_",
        "GB_EMBEDDING_DIMENSION": str(EMBED_DIM),
        "POWERTOOLS_METRICS_NAMESPACE": "gligabao-load",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }


# --- the clients -------------------------------------------------------------------------


@dataclass
class Result:
    kind: str  # "remember", "replay", "query"
    status: int
    ms: float
    user: str
    dataset: str
    text: str = ""
    body: Any = None
    key: str | None = None


@dataclass
class Stats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    results: list[Result] = field(default_factory=list)

    def add(self, r: Result) -> None:
        with self.lock:
            self.results.append(r)

    def acked(self) -> list[Result]:
        """The remembers answered 200 (the warm-up's too)."""
        return [r for r in self.results if r.kind in ("remember", "warm-up") and r.status == 200]

    def acknowledged(self) -> int:
        return len(self.acked())


REFUSED_PAUSE_S = 0.2  # after a connection error: the server is (re)starting


def client(
    base: str, deadline: float, seed: int, stats: Stats, max_requests: int | None = None
) -> None:
    """Sends until the deadline, or until the run has sent `max_requests`."""
    rng = random.Random(seed)
    status = 200
    while time.monotonic() < deadline and (
        max_requests is None or len(stats.results) < max_requests
    ):
        if status == 0:
            time.sleep(REFUSED_PAUSE_S)  # not a hot loop against a dead port
        user, dataset = rng.choice(USERS), rng.choice(DATASETS)
        if rng.random() < QUERY_SHARE:
            q = rng.choice(QUESTIONS).format(p=rng.choice(PEOPLE), o=rng.choice(ORGS))
            t0 = time.perf_counter()
            status, body = post(
                base, "/v1/gb/query", {"user_id": user, "dataset": dataset, "query": q}
            )
            stats.add(
                Result("query", status, (time.perf_counter() - t0) * 1000, user, dataset, q, body)
            )
            continue
        text = make_text(rng)
        key = uuid.uuid4().hex if rng.random() < IDEMPOTENT_SHARE else None
        headers = {"Idempotency-Key": key} if key else None
        body_in = {"user_id": user, "dataset": dataset, "text": text}
        t0 = time.perf_counter()
        status, body = post(base, "/v1/gb/remember", body_in, headers)
        stats.add(
            Result(
                "remember",
                status,
                (time.perf_counter() - t0) * 1000,
                user,
                dataset,
                text,
                body,
                key,
            )
        )
        if key and status == 200:
            t0 = time.perf_counter()
            status, again = post(base, "/v1/gb/remember", body_in, headers)
            stats.add(
                Result(
                    "replay",
                    status,
                    (time.perf_counter() - t0) * 1000,
                    user,
                    dataset,
                    text,
                    again,
                    key,
                )
            )
            if status == 200 and again != body:
                stats.add(
                    Result(
                        "replay-mismatch",
                        -1,
                        0,
                        user,
                        dataset,
                        text,
                        {"first": body, "again": again},
                        key,
                    )
                )


# --- the report ------------------------------------------------------------------------------


def report(stats: Stats, seconds: float, clients: int, say: Any = print) -> bool:
    results = [r for r in stats.results if r.kind in ("remember", "replay", "query")]
    errors = [r for r in results if r.status != 200]
    say(f"load: {clients} clients for {seconds:.1f} s against the local server (127.0.0.1)")
    say(
        f"requests: {len(results)}  throughput: {len(results) / seconds:.1f} req/s  "
        f"errors: {len(errors)} ({100 * len(errors) / max(1, len(results)):.2f} %)"
    )
    for kind in ("remember", "replay", "query"):
        rs = [r for r in results if r.kind == kind]
        if not rs:
            continue
        ms = [r.ms for r in rs]
        bad = sum(1 for r in rs if r.status != 200)
        say(
            f"  {kind:<9} n={len(rs):<5} {len(rs) / seconds:6.1f}/s  errors {bad:<3} "
            f"p50 {statistics.median(ms):7.0f} ms  p95 {pct(ms, 95):7.0f} ms  "
            f"p99 {pct(ms, 99):7.0f} ms  max {max(ms):7.0f} ms"
        )
    by_status: dict[int, int] = defaultdict(int)
    for r in errors:
        by_status[r.status] += 1
    if errors:
        say(f"  error statuses: {dict(by_status)}")
        for r in errors[:5]:
            say(f"    {r.kind} {r.status}: {str(r.body)[:200]}")
    return not errors


def warm_up(base: str, stats: Stats) -> None:
    """The SDKs' first import costs seconds: pay it before the clock starts.
    One remember per dataset also creates them all, so that no query meets a
    dataset that does not exist yet (a 404 is then a real error)."""
    for user in USERS:
        for dataset in DATASETS:
            text = f"{PEOPLE[0]} works at {ORGS[0]}."
            status, body = post(
                base, "/v1/gb/remember", {"user_id": user, "dataset": dataset, "text": text}
            )
            if status != 200:
                raise SystemExit(f"warm-up remember failed: {status} {body}")
            stats.add(Result("warm-up", status, 0, user, dataset, text, body))
    status, body = post(base, "/v1/gb/query", {"user_id": USERS[0], "query": "What do you know?"})
    if status != 200:
        raise SystemExit(f"warm-up query failed: {status} {body}")


def main(argv: list[str] | None = None) -> int:
    from gligabao.dynamodb.client import REQUESTS

    from .load_check import check, say_check

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="how long the clients send (60)")
    ap.add_argument("--clients", type=int, default=20, help="concurrent clients (20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verbose", action="store_true", help="keep the server's log lines")
    args = ap.parse_args(argv)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)

    llm, emb = start_llm()
    # The server logs one JSON line and one metrics line per call on stdout, moto
    # one line per request: keep the report readable.
    output = nullcontext(say_plain) if args.verbose else quiet_stdout()
    with output as say, local_server(server_env(llm, emb)) as base:
        try:
            stats = Stats()
            warm_up(base, stats)
            dynamo_before = REQUESTS.total
            started = time.monotonic()
            deadline = started + args.seconds
            threads = [
                threading.Thread(target=client, args=(base, deadline, args.seed * 1000 + i, stats))
                for i in range(args.clients)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - started
            ok = report(stats, elapsed, args.clients, say)
            sent = REQUESTS.total - dynamo_before
            calls = sum(1 for r in stats.results if r.kind in ("remember", "replay", "query"))
            say(
                f"DynamoDB (moto, one request at a time): {sent} requests, "
                f"{sent / elapsed:.0f}/s, {sent / max(1, calls):.0f} per call"
            )
            t0 = time.monotonic()
            problems, warnings = check(stats)
            say_check(
                say,
                f"consistency: {stats.acknowledged()} acknowledged remembers read back in "
                f"{time.monotonic() - t0:.1f} s",
                problems,
                warnings,
            )
            return 0 if ok and not problems else 1
        finally:
            llm.stop()
            emb.stop()


if __name__ == "__main__":
    sys.exit(main())
