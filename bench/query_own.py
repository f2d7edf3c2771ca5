"""A query's own time with no provider and no socket: the query handler of
`gligabao serve` called in process with the event the local server builds,
its LLM and embedder stubs that answer at once. What is left is ours: the
event, routing, validation, the reads, the vector search, scoring, the
record's save, the monitoring line, the JSON. The steadiest figure of the
query benchmarks on a shared machine (no fake server, no client, no
sockets); bench.query_cost gives the same through HTTP.

    .venv/bin/python -m bench.query_own [--sizes 1000,10000,100000]
        [--questions 200] [--dim 384] [--against DIR/shared] [--rounds 3]
        [--same]

Each size's graph (bench/harness/synthetic_graph.py) is written once into a
fresh SQLite file; each measurement is a child process on it (this tree's
code, or with ``--against`` another tree's ``shared`` folder, alternating
``--rounds`` times), which asks every question once after a warm-up and
prints the time of each. ``p50`` and ``p95`` over every question of every
round; ``CPU``: the child's CPU time per question. Printed, never asserted.

``--same`` (with ``--against``): before timing, each tree answers every
question once on POST /v1/gb/search, and the bodies are compared (the call's
ID left out): a change meant to be faster only must print every question
the same.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .harness import ROOT
from .harness.tables import table
from .harness.timing import load_average, pct

STUB_ANSWER = '{"answer": "From memory.", "entities": [], "edges": [], "passages": []}'


def profiled(fn: Any, out: str) -> Any:
    """``fn`` and the read workers' tasks under cProfile (each thread's own
    CPU time), merged into ``out`` by ``.dump()``."""
    import cProfile
    import pstats

    from gligabao.memory import parallel

    profs: list[cProfile.Profile] = []

    def wrap(f: Any) -> Any:
        def run(*a: Any) -> Any:
            p = cProfile.Profile(time.thread_time)
            profs.append(p)
            return p.runcall(f, *a)

        return run

    submit = parallel._POOL.submit
    parallel._POOL.submit = lambda f, *a: submit(wrap(f), *a)  # type: ignore[method-assign,assignment]
    run = wrap(fn)

    def dump() -> None:
        stats = pstats.Stats(profs[0])
        for p in profs[1:]:
            stats.add(p)
        stats.dump_stats(out)

    run.dump = dump  # type: ignore[attr-defined]
    return run


def measure(path: str, qfile: str, dim: int, profile: str = "", bodies: str = "") -> int:
    """In the child: every question of ``qfile`` through the query handler;
    one JSON line of per-question milliseconds and the CPU time. With
    ``bodies``, instead: each question's search response into that file."""
    os.environ.update(
        {
            "GB_LOCAL": "1",
            "GB_DATA": path,
            "GB_EMBEDDING_DIMENSION": str(dim),
            "GB_ANTHROPIC_API_KEY": "stub",
            "ANTHROPIC_API_KEY": "stub",
            "POWERTOOLS_LOG_LEVEL": "WARNING",
        }
    )
    from gligabao import wiring
    from gligabao.ai.port import Embeddings, LLMReply
    from gligabao.local.server import make_event

    vectors: dict[str, list[float]] = json.loads(Path(qfile).read_text())

    class Embedder:
        provider, model = "openai", "text-embedding-3-small"

        def embed(self, texts: list[str], kind: Any) -> Embeddings:
            return Embeddings([vectors[t] for t in texts], self.model, len(texts), 1)

    class LLM:
        provider = "anthropic"

        def complete(self, request: Any) -> LLMReply:
            return LLMReply(STUB_ANSWER, request.model, 100, 20)

    wiring.reset()
    wiring.llm = lambda: LLM()  # type: ignore[assignment]
    wiring.embedder = lambda: Embedder()  # type: ignore[assignment]
    from gligabao.handlers import query

    def ask(text: str, route: str = "query") -> Any:
        body = json.dumps({"user_id": "bench", "query": text}).encode()
        headers = {"Host": "127.0.0.1", "Content-Type": "application/json"}
        event = make_event("POST", f"/v1/gb/{route}", headers, body, "127.0.0.1")
        result = query.lambda_handler(event, None)
        assert result["statusCode"] == 200, result
        return json.loads(result["body"])  # the client's side of the JSON is not ours; kept equal

    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the log lines of every call
    texts = list(vectors)
    if bodies:
        got = [{k: v for k, v in ask(t, "search").items() if k != "call_id"} for t in texts]
        Path(bodies).write_text(json.dumps(got))
        wiring.database().close()
        return 0
    for t in texts[:20]:
        ask(t)
    if profile:
        ask = profiled(ask, profile)
    times = []
    cpu0 = time.process_time()
    for t in texts:
        t0 = time.perf_counter()
        ask(t)
        times.append((time.perf_counter() - t0) * 1000)
    cpu = (time.process_time() - cpu0) * 1000 / len(texts)
    sys.stdout = sys.__stdout__
    if profile:
        ask.dump()  # type: ignore[attr-defined]
    print(json.dumps({"ms": times, "cpu": cpu}))
    wiring.database().close()
    return 0


def prepare(size: int, tmp: Path, n: int, dim: int) -> tuple[str, str]:
    from gligabao.models import DatasetKey

    from .harness.fakes import FakeOpenAI
    from .harness.synthetic_graph import generate
    from .sqlite_serve import questions, write_graph

    rng = random.Random(size)
    g = generate(DatasetKey("bench", "main"), size, rng)
    path = tmp / f"gb-{size}.db"
    write_graph(path, g, dim)
    emb = FakeOpenAI(dim=dim)  # not started: its vectors only
    qs = questions(g, n, rng, emb, dim)
    qfile = tmp / f"q-{size}.json"
    qfile.write_text(json.dumps({q.text: emb.vector(q.text) for q in qs}))
    return str(path), str(qfile)


def run_child(
    path: str, qfile: str, dim: int, shared: str, profile: str = "", bodies: str = ""
) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": f"{shared}{os.pathsep}{ROOT}"}
    env = {k: v for k, v in env.items() if not k.startswith(("GB_", "ANTHROPIC_", "OPENAI_"))}
    cmd = [sys.executable, "-m", "bench.query_own", "--child", path, qfile, "--dim", str(dim)]
    if profile:
        cmd += ["--profile", profile]
    if bodies:
        cmd += ["--bodies", bodies]
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"child failed: {out.stderr[-3000:]}")
    if bodies:
        return {}
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def same_answers(path: str, qfile: str, dim: int, sides: dict[str, str], tmp: Path) -> str:
    """How many questions every tree answers with the same search body."""
    got = []
    for name, shared in sides.items():
        out = tmp / f"bodies-{name}.json"
        run_child(path, qfile, dim, shared, bodies=str(out))
        got.append(json.loads(out.read_text()))
    same = sum(1 for answers in zip(*got, strict=True) if all(a == answers[0] for a in answers))
    return f"{same}/{len(got[0])} questions answered the same by {' and '.join(sides)}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--against", default="")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", default="", help="cProfile of this tree's run into FILE")
    ap.add_argument("--same", action="store_true", help="compare the trees' search bodies")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--bodies", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return measure(args.child[0], args.child[1], args.dim, args.profile, args.bodies)
    if args.same and not args.against:
        ap.error("--same compares two trees: give the other one with --against")
    print(load_average())
    sides = (
        {"before": args.against, "now": str(ROOT / "shared")}
        if args.against
        else {"": str(ROOT / "shared")}
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in [int(s) for s in args.sizes.split(",")]:
            path, qfile = prepare(size, Path(tmp), args.questions, args.dim)
            if args.same:
                print(f"{size} facts: {same_answers(path, qfile, args.dim, sides, Path(tmp))}")
            got: dict[str, list[dict[str, Any]]] = {k: [] for k in sides}
            for _ in range(max(1, args.rounds)):
                for name, shared in sides.items():
                    got[name].append(run_child(path, qfile, args.dim, shared))
            if args.profile:
                run_child(path, qfile, args.dim, str(ROOT / "shared"), f"{args.profile}.{size}")
                print(f"profile: {args.profile}.{size}")
            for name, runs in got.items():
                ms = [x for r in runs for x in r["ms"]]
                cpu = sum(r["cpu"] for r in runs) / len(runs)
                rows.append(
                    [
                        f"{size} {name}".strip(),
                        f"{pct(ms, 50):.3f}",
                        f"{pct(ms, 95):.3f}",
                        f"{cpu:.3f}",
                        len(ms),
                    ]
                )
            print(load_average(), flush=True)
    print(table(["facts", "own p50 ms", "p95", "CPU / question", "questions"], rows))
    print(load_average())
    return 0


if __name__ == "__main__":
    sys.exit(main())
