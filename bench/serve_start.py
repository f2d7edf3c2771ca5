"""`gligabao serve`'s cold start: from the process's spawn to its first
answered request (GET /v1/gb/datasets), on a fresh SQLite file, this tree
against another (``--against DIR/shared``: ``git archive main shared | tar
-x -C DIR``), alternating, ``--rounds`` times each.

    .venv/bin/python -m bench.serve_start [--against DIR/shared] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from gligabao.local.embedded import free_port

ROOT = Path(__file__).resolve().parents[1]


def start(shared: str | None) -> float:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GB_")}
    env["GB_DATA"] = os.path.join(tempfile.mkdtemp(prefix="gb-start-"), "gb.db")
    env["GB_EMBEDDING_DIMENSION"] = "64"
    env["OPENAI_API_KEY"] = "unused"
    if shared:
        env["PYTHONPATH"] = shared
    cmd = [sys.executable, "-m", "gligabao.local.cli", "serve", "--port", str(port), "--quiet"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/v1/gb/datasets?user_id=u1"
        while True:
            try:
                with urllib.request.urlopen(url, timeout=30) as resp:
                    resp.read()
                return time.perf_counter() - t0
            except OSError:
                if time.perf_counter() - t0 > 120:
                    raise
                time.sleep(0.01)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--against", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    rows: dict[str, list[float]] = {"now": []}
    if args.against:
        rows = {"before": [], "now": []}
    for _ in range(args.rounds):
        for name in rows:
            rows[name].append(start(args.against if name == "before" else None))
    print(f"spawn to first answer, {args.rounds} starts each (median, min)")
    for name, got in rows.items():
        print(f"{name:<8} {statistics.median(got):.2f} s  {min(got):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
