"""bench/load.py with crashes: the same clients and the same consistency
check, against `gligabao serve` in a child process that is SIGKILLed every
few seconds (at a random instant, so in the middle of remembers) and
restarted on the same port and the same rows.

    .venv/bin/python bench/load_crash.py [--seconds 60] [--clients 20] [--kill-every 5]

The rows live in a standalone moto server, a process of its own that
outlives every `serve`: `python -m gligabao.local.embedded`, which is moto's
server with one DynamoDB request at a time (moto checks a condition and then
writes in two Python steps; DynamoDB is atomic per item, and the plain
`python -m moto.server` would let two threads both pass a conditional write,
a false inconsistency of the emulator, not of the product). The fake LLM and
embeddings run in this process, on loopback.

Afterwards, with the server stopped: every acknowledged (200) remember is
fully visible through the graph store (artifact, entities, edges, links), and
the store is whole (no duplicated entity name, no edge pointing at a missing
entity, no fact live twice, counters equal to the visible rows). Then, once
the leases of the killed calls have run out, a restarted server answers 200 to
a remember in every dataset. 409s and connection errors are expected during
the run; any other non-200 status, or a problem of the check, exits 1.

Bounded: `--seconds` of load, at most `--max-requests` requests; every
process it starts (moto, each `serve`) is stopped by PID.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import load
from load import HOST, ROOT, Stats

EXPECTED = {200, 409, 0}  # 0: the connection died with the server, or was refused
START_TIMEOUT_S = 60.0


def _wait_for(log: Path, marker: str, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if marker in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise SystemExit(f"{what} did not start: {log.read_text(errors='replace')[-2000:]}")


def _child_env(env: dict[str, str]) -> dict[str, str]:
    full = {
        k: v for k, v in os.environ.items() if not k.startswith(("GB_", "ANTHROPIC_", "OPENAI_"))
    }
    full.update(env)
    full["PYTHONPATH"] = str(ROOT / "shared")
    return full


@dataclass
class Child:
    """A process started here, its output in a file of `logs`."""

    proc: subprocess.Popen[bytes]
    out: IO[bytes]

    def kill(self, sig: int) -> int:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
        code = self.proc.wait(timeout=30)
        self.out.close()
        return code


def start_moto(logs: Path, port: int) -> Child:
    log = logs / "moto.log"
    out = log.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gligabao.local.embedded", HOST, str(port)],
        env=_child_env({}),
        cwd=ROOT,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    _wait_for(log, "listening on", proc, "moto")
    return Child(proc, out)


def start_serve(logs: Path, n: int, port: int, env: dict[str, str]) -> Child:
    log = logs / f"serve-{n:03d}.log"
    out = log.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gligabao.local.cli", "serve", "--port", str(port), "--quiet"],
        env=_child_env(env),
        cwd=ROOT,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    _wait_for(log, "listening on", proc, f"serve #{n}")
    return Child(proc, out)


@dataclass
class Killer:
    """Kills `serve` at random instants and starts it again on the same port."""

    logs: Path
    port: int
    env: dict[str, str]
    every: float
    rng: random.Random
    serve: Child
    kills: int = 0
    restarts: int = 0
    down_s: float = 0.0
    codes: Counter[int] = field(default_factory=Counter)
    error: str | None = None

    def run(self, deadline: float) -> None:
        try:
            while True:
                pause = self.rng.uniform(0.5 * self.every, 1.5 * self.every)
                if time.monotonic() + pause >= deadline:
                    return
                time.sleep(pause)
                t0 = time.monotonic()
                self.codes[self.serve.kill(signal.SIGKILL)] += 1
                self.kills += 1
                self.serve = start_serve(self.logs, self.restarts + 1, self.port, self.env)
                self.restarts += 1
                self.down_s += time.monotonic() - t0
        except BaseException as exc:
            self.error = f"{type(exc).__name__}: {exc}"


def unacknowledged_whole(stats: Stats) -> tuple[int, list[str]]:
    """A visible artifact no acknowledged call wrote (the call committed, then
    its server died before the answer) is whole all the same: every entity
    and fact of its text is there, live, and linked to it. Returns how many
    such artifacts were checked, and the problems."""
    from collections import defaultdict

    from gligabao import wiring
    from gligabao.models import DatasetKey
    from gligabao.text import normalize_name

    graph = wiring.graph_store()
    acked = {
        (r.user, r.dataset, r.body["artifact_id"])
        for r in stats.results
        if r.kind in ("remember", "warm-up") and r.status == 200
    }
    checked, problems = 0, []
    for user in load.USERS:
        for dataset in load.DATASETS:
            key, where = DatasetKey(user, dataset), f"{user}/{dataset}"
            by_name = {normalize_name(e.name): e.id for e in graph.iter_entities(key)}
            live: dict[tuple[int, int, str], list[int]] = defaultdict(list)
            for e in graph.iter_edges(key):
                if e.live:
                    live[(e.source_id, e.target_id, e.relation)].append(e.id)
            for art in graph.iter_artifacts(key):
                if (user, dataset, art.id) in acked:
                    continue
                checked += 1
                for p, verb, o in load.SENTENCE.findall(art.text):
                    ids = [by_name.get(normalize_name(n)) for n in (p, o)]
                    for name, eid in zip((p, o), ids, strict=True):
                        if eid is None:
                            problems.append(f"{where}: artifact {art.id} names {name}: missing")
                        elif art.id not in set(graph.entity_artifacts(key, eid)):
                            problems.append(f"{where}: entity {eid} not linked to {art.id}")
                    rel = "works_at" if verb == "works at" else "lives_in"
                    if ids[0] is None or ids[1] is None:
                        continue
                    edge_ids = live.get((ids[0], ids[1], rel), [])
                    if not edge_ids:
                        problems.append(f"{where}: artifact {art.id}: {p} {rel} {o} not live")
                    elif not any(art.id in set(graph.edge_artifacts(key, i)) for i in edge_ids):
                        problems.append(f"{where}: fact {edge_ids} not linked to {art.id}")
    return checked, problems


def after_leases(base: str, lease_s: float) -> list[str]:
    """Once every lease of a killed call has run out, a remember naming the
    pools' entities answers 200 in every dataset."""
    time.sleep(lease_s + 1)
    problems = []
    for user in load.USERS:
        for dataset in load.DATASETS:
            text = f"{load.PEOPLE[1]} works at {load.ORGS[1]}. {load.PEOPLE[2]} lives in {load.CITIES[1]}."
            status, body = load.post(
                base, "/v1/gb/remember", {"user_id": user, "dataset": dataset, "text": text}
            )
            if status != 200:
                problems.append(f"{user}/{dataset}: remember after the leases: {status} {body}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="how long the clients send (60)")
    ap.add_argument("--clients", type=int, default=20, help="concurrent clients (20)")
    ap.add_argument(
        "--kill-every", type=float, default=5.0, help="mean seconds between SIGKILLs (5)"
    )
    ap.add_argument(
        "--max-requests", type=int, default=20000, help="stop sending after this many (20000)"
    )
    ap.add_argument(
        "--lease-seconds",
        type=float,
        default=10.0,
        help="GB_LEASE_SECONDS of the server (10): how long a killed call's claims block",
    )
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    def say(text: str = "") -> None:
        print(text, flush=True)

    from gligabao.local.embedded import free_port

    logs = Path(tempfile.mkdtemp(prefix="gb-load-crash-"))
    say(f"logs: {logs}")
    moto_port, port = free_port(), free_port()
    moto = start_moto(logs, moto_port)
    llm, emb = load.start_fakes()
    killer: Killer | None = None
    try:
        env = load.server_env(f"http://{HOST}:{moto_port}", llm, emb)
        env.update(
            {
                "GB_LEASE_SECONDS": str(args.lease_seconds),
                "GB_LEASE_WAIT_SECONDS": "2",
                "AWS_ACCESS_KEY_ID": "local",
                "AWS_SECRET_ACCESS_KEY": "local",
                "AWS_DEFAULT_REGION": "us-east-1",
            }
        )
        load.use_env(env)  # the checks read through this process's graph store
        base = f"http://{HOST}:{port}"
        killer = Killer(
            logs,
            port,
            env,
            args.kill_every,
            random.Random(args.seed),
            start_serve(logs, 0, port, env),
        )
        stats = Stats()
        load.warm_up(base, stats)

        started = time.monotonic()
        deadline = started + args.seconds
        threads = [
            threading.Thread(
                target=load.client,
                args=(base, deadline, args.seed * 1000 + i, stats, args.max_requests),
            )
            for i in range(args.clients)
        ]
        kill_thread = threading.Thread(target=killer.run, args=(deadline,))
        kill_thread.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        kill_thread.join()
        elapsed = time.monotonic() - started
        load.report(stats, elapsed, args.clients, say)
        say(
            f"crashes: {killer.kills} SIGKILLs (exit codes {dict(killer.codes)}), "
            f"{killer.restarts} restarts, {killer.down_s:.1f} s down in all"
        )
        if killer.error:
            say(f"  the killer stopped: {killer.error}")
        calls = [r for r in stats.results if r.kind in ("remember", "replay", "query")]
        by_status = Counter((r.kind, r.status) for r in calls)
        say(f"  (kind, status): {dict(sorted(by_status.items()))}")
        lost = Counter(str(r.body).split(":")[0] for r in calls if r.status == 0)
        say(f"  connection errors (killed in flight / refused while down): {dict(lost)}")
        unexpected = [r for r in calls if r.status not in EXPECTED]
        for r in unexpected[:10]:
            say(f"  unexpected {r.kind} {r.status}: {str(r.body)[:300]}")

        # the check reads the rows as the kills left them (no server running)
        killer.serve.kill(signal.SIGKILL)
        killer.kills += 1
        t0 = time.monotonic()
        problems, warnings = load.check(stats, facts_once=True)
        acked = sum(
            1 for r in stats.results if r.kind in ("remember", "warm-up") and r.status == 200
        )
        say(
            f"consistency after {killer.kills} kills: {acked} acknowledged remembers read back "
            f"in {time.monotonic() - t0:.1f} s: {len(problems)} problem(s), "
            f"{len(warnings)} warning(s)"
        )
        for p in problems[:30]:
            say(f"  - {p}")
        for w in warnings[:10]:
            say(f"  ~ {w}")
        checked, halves = unacknowledged_whole(stats)
        say(
            f"visible artifacts of calls not acknowledged (committed, then killed): "
            f"{checked}, {len(halves)} half-visible"
        )
        for p in halves[:30]:
            say(f"  - {p}")

        killer.serve = start_serve(logs, killer.restarts + 1, port, env)
        killer.restarts += 1
        late = after_leases(base, args.lease_seconds)
        say(f"after the leases ({args.lease_seconds:.0f} s): {len(late)} problem(s)")
        for p in late:
            say(f"  - {p}")
        problems2, _ = load.check(stats, facts_once=True)
        say(f"consistency after a restart and new remembers: {len(problems2)} problem(s)")
        for p in problems2[:30]:
            say(f"  - {p}")
        bad = problems or halves or late or problems2 or unexpected or killer.error
        return 1 if bad else 0
    finally:
        if killer is not None:
            killer.serve.kill(signal.SIGTERM)
        llm.stop()
        emb.stop()
        moto.kill(signal.SIGTERM)


if __name__ == "__main__":
    sys.exit(main())
