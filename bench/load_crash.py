"""bench/load.py with crashes: the same clients and the same consistency
check, against `gligabao serve` in a child process that is SIGKILLed every
few seconds (at a random instant, so in the middle of remembers) and
restarted on the same port and the same rows.

    .venv/bin/python -m bench.load_crash [--seconds 60] [--clients 20] [--kill-every 5]

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
import random
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .harness import HOST
from .harness.http import post
from .harness.servers import LOCAL_AWS, Child, free_port, start_moto_process, start_serve, use_env
from .harness.workload import CITIES, ORGS, PEOPLE
from .load import DATASETS, USERS, Stats, client, report, server_env, start_llm, warm_up
from .load_check import check, say_check, unacknowledged_whole

EXPECTED = {200, 409, 0}  # 0: the connection died with the server, or was refused


def serve(logs: Path, n: int, port: int, env: dict[str, str]) -> Child:
    return start_serve(logs / f"serve-{n:03d}.log", port, env)


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
                self.serve = serve(self.logs, self.restarts + 1, self.port, self.env)
                self.restarts += 1
                self.down_s += time.monotonic() - t0
        except BaseException as exc:
            self.error = f"{type(exc).__name__}: {exc}"


def after_leases(base: str, lease_s: float) -> list[str]:
    """Once every lease of a killed call has run out, a remember naming the
    pools' entities answers 200 in every dataset."""
    time.sleep(lease_s + 1)
    problems = []
    for user in USERS:
        for dataset in DATASETS:
            text = f"{PEOPLE[1]} works at {ORGS[1]}. {PEOPLE[2]} lives in {CITIES[1]}."
            status, body = post(
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

    logs = Path(tempfile.mkdtemp(prefix="gb-load-crash-"))
    say(f"logs: {logs}")
    moto_port, port = free_port(), free_port()
    moto = start_moto_process(logs, moto_port)
    llm, emb = start_llm()
    killer: Killer | None = None
    try:
        env = {
            **server_env(llm, emb),
            "GB_DYNAMODB_ENDPOINT": f"http://{HOST}:{moto_port}",
            "GB_LEASE_SECONDS": str(args.lease_seconds),
            "GB_LEASE_WAIT_SECONDS": "2",
            **LOCAL_AWS,
        }
        use_env(env)  # the checks read through this process's graph store
        base = f"http://{HOST}:{port}"
        killer = Killer(
            logs,
            port,
            env,
            args.kill_every,
            random.Random(args.seed),
            serve(logs, 0, port, env),
        )
        stats = Stats()
        warm_up(base, stats)

        started = time.monotonic()
        deadline = started + args.seconds
        threads = [
            threading.Thread(
                target=client,
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
        report(stats, elapsed, args.clients, say)
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
        problems, warnings = check(stats, facts_once=True)
        say_check(
            say,
            f"consistency after {killer.kills} kills: {stats.acknowledged()} acknowledged "
            f"remembers read back in {time.monotonic() - t0:.1f} s",
            problems,
            warnings,
        )
        checked, halves = unacknowledged_whole(stats)
        say(
            f"visible artifacts of calls not acknowledged (committed, then killed): "
            f"{checked}, {len(halves)} half-visible"
        )
        for p in halves[:30]:
            say(f"  - {p}")

        killer.serve = serve(logs, killer.restarts + 1, port, env)
        killer.restarts += 1
        late = after_leases(base, args.lease_seconds)
        say(f"after the leases ({args.lease_seconds:.0f} s): {len(late)} problem(s)")
        for p in late:
            say(f"  - {p}")
        problems2, _ = check(stats, facts_once=True)
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
