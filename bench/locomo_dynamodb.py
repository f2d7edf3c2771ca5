"""The LoCoMo ruler on the AWS-shaped stack, and its recall against the local one.

    .venv/bin/python -m bench.locomo_dynamodb [--conversations 1] [--mode turns]
        [--budget default] [--sessions N] [bench.locomo's other options]

Runs ``bench.locomo`` twice with the same settings and data: ``--backend
sqlite`` (`gligabao serve` on its SQLite file) and ``--backend dynamodb``,
then prints, per mode, budget and category, the recall of each and the
difference (dynamodb - sqlite; the issue's target: within 0.01 overall).
``--sessions N``: each conversation's first N sessions only, and the
questions whose evidence lies in them (moto makes the DynamoDB side slow:
a few seconds a remember on a busy machine).

``--backend dynamodb`` (``DynamoServer`` below): a child process that runs
moto's DynamoDB on loopback (indexed by bench/harness/moto.py's
``speed_up_moto``, which changes how long moto takes, not what it answers),
the DynamoDB vector indexes' fake of tests/fakes/dynamodb_vectors.py in front
of it (``GB_VECTOR_STORE=dynamodb``: the vectors on the rows, the word index
of the passages in the terms table), and the local server's HTTP stack (the
Lambda handlers, as `gligabao serve` runs them) pointed at it, the tables
created as the stack declares them. Same fake LLM, same local embedder, same
questions. moto keeps its data in memory: nothing is reused between runs
(``--store`` is for the SQLite backend only).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from .harness.servers import Child, child_env

LISTENING = "locomo-dynamodb listening on "


class DynamoServer:
    """The AWS-shaped stack as a child process, with ruler.Server's interface
    (``url``, ``banner``, ``stop``, a context manager). Its environment is
    the harness's (see ``child_env``) plus the reranker's (GB_RERANK_*, as
    ruler.Server keeps them) plus ``env``."""

    def __init__(self, env: dict[str, str]) -> None:
        own = {k: v for k, v in os.environ.items() if k.startswith("GB_RERANK_")}
        self._logs = tempfile.TemporaryDirectory(prefix="gb-ruler-dynamodb-")
        self.log = Path(self._logs.name) / "serve.log"
        args = [sys.executable, "-m", "bench.locomo_dynamodb", "--serve"]
        self.child = Child.start(args, child_env({**own, **env}), self.log).wait_for(LISTENING)
        line = next(ln for ln in self.log.read_text().splitlines() if ln.startswith(LISTENING))
        self.url = line.removeprefix(LISTENING).strip()

    def banner(self) -> list[str]:
        """What the child's own wiring reports it serves with."""
        lines = self.log.read_text(errors="replace").splitlines()
        return [ln.rstrip() for ln in lines if ln.startswith("  ")]

    def stop(self) -> None:
        self.child.stop()
        self._logs.cleanup()

    def __enter__(self) -> DynamoServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def server(backend: str, path: Path, env: dict[str, str]) -> Any:
    """bench.locomo's server: `gligabao serve` on the file at ``path``
    (ruler.Server), or the AWS-shaped stack."""
    from .ruler import Server

    return DynamoServer(env) if backend == "dynamodb" else Server(path, env)


def serve() -> int:
    """The child: the stack of ``local_server`` until SIGTERM."""
    import logging

    from gligabao import wiring
    from gligabao.local.banner import describe_models

    from .harness.moto import speed_up_moto
    from .harness.servers import local_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's access log
    speed_up_moto()
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    # GB_LOCAL as `gligabao serve` sets it: the same defaults but the store.
    with local_server({"GB_LOCAL": "1", "GB_VECTOR_STORE": "dynamodb"}) as base:
        cfg = wiring.settings()
        print(f"  storage:    {cfg.store} at {cfg.dynamodb_endpoint} (moto, the vector "
              f"indexes' fake), tables {cfg.table_prefix}*", flush=True)
        print(f"  vectors:    {type(wiring.vector_index()).__name__} "
              f"(GB_VECTOR_STORE={cfg.vector_store})", flush=True)
        print("\n".join(describe_models(cfg)), flush=True)
        print(f"{LISTENING}{base}", flush=True)
        done.wait()
    return 0


# ------------------------------------------------------------------ the comparison


def recalls(rows: list[dict[str, Any]]) -> dict[tuple[Any, str], tuple[int, float | None]]:
    """(budget, category name) -> (questions, recall), "overall" included."""
    from .locomo import CATEGORIES, recall

    out: dict[tuple[Any, str], tuple[int, float | None]] = {}
    for b in dict.fromkeys(r["budget"] for r in rows):
        sub = [r for r in rows if r["budget"] == b]
        groups = [(name, [r for r in sub if r["category"] == c]) for c, name in CATEGORIES.items()]
        for name, rs in [*groups, ("overall", sub)]:
            if rs:
                out[(b, name)] = (len(rs), recall(rs)[0])
    return out


def compare(local: dict[str, Any], dynamo: dict[str, Any]) -> str:
    """The per-category recall of both backends and the difference."""
    from .ruler import fmt, markdown

    out: list[str] = []
    for mode in local:
        a, b = recalls(local[mode]), recalls(dynamo.get(mode, []))
        lines = []
        for key, (n, rec) in a.items():
            other = b.get(key, (0, None))[1]
            diff = f"{other - rec:+.3f}" if rec is not None and other is not None else "-"
            label = "default" if key[0] is None else f"{key[0]:,}"
            lines.append([mode, label, key[1], str(n), fmt(rec), fmt(other), diff])
        out.append(markdown(["mode", "budget", "category", "n", "sqlite", "dynamodb", "diff"],
                            lines))
        out.append(differing(local[mode], dynamo.get(mode, [])))
    return "\n\n".join(out)


def differing(local: list[dict[str, Any]], dynamo: list[dict[str, Any]]) -> str:
    """How many questions found other evidence on the two backends (the sum
    can hide gains and losses that cancel), and the first few."""
    other = {(r["conversation"], r["question"], r["budget"]): r["found"] for r in dynamo}
    diff = [(r, other.get((r["conversation"], r["question"], r["budget"])))
            for r in local]
    diff = [(r, d) for r, d in diff if d is None or sorted(d) != sorted(r["found"])]
    lines = [f"{len(diff)} of {len(local)} questions found other evidence"]
    for r, d in diff[:10]:
        lines.append(f"  {r['question']!r}: sqlite {r['found']}, dynamodb {d}")
    return "\n".join(lines)


def first_sessions(raw: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """The dataset's conversations cut after session ``n``, with the
    questions whose evidence (every turn it names) lies in those sessions."""
    out = []
    for conv in raw:
        c = dict(conv["conversation"])
        for key in [k for k in c if re.fullmatch(r"session_\d+(_date_time)?", k)]:
            if int(key.split("_")[1]) > n:
                del c[key]
        qa = []
        for q in conv["qa"]:
            named = [int(m) for e in q.get("evidence", []) for m in re.findall(r"D:?(\d+):", e)]
            if named and max(named) <= n:
                qa.append(q)
        out.append({**conv, "conversation": c, "qa": qa})
    return out


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--serve"]:
        return serve()
    from . import locomo
    from .ruler import OUT

    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--out", type=Path, default=OUT / "locomo_dynamodb.json")
    ap.add_argument("--backend")  # both are run: refused below
    ap.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    ap.add_argument("--sessions", type=int, default=0)
    known, rest = ap.parse_known_args(argv)
    if known.backend:
        raise SystemExit("--backend: this script runs both (bench.locomo --backend runs one)")
    data = known.data
    if known.sessions:
        data = known.out.with_suffix(f".first{known.sessions}.json")
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_text(json.dumps(first_sessions(json.loads(known.data.read_text()),
                                                  known.sessions)))
    rest = [*rest, "--data", str(data)]
    results: dict[str, Any] = {}
    for backend in ("sqlite", "dynamodb"):
        out = known.out.with_suffix(f".{backend}.json")
        print(f"\n=== backend {backend}", flush=True)
        code = locomo.main([*rest, "--backend", backend, "--out", str(out)])
        if code:
            return code
        results[backend] = json.loads(out.read_text())
    print("\nrecall, dynamodb against sqlite (diff: dynamodb - sqlite)\n")
    print(compare(results["sqlite"], results["dynamodb"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
