"""Our search and query through `gligabao serve` on its SQLite default, and
our search in-process (``gligabao.Memory``), side by side with Graphiti's
hybrid search on its embedded Kuzu and Mem0's search on its default local
store (Qdrant, local mode), on the same synthetic graphs, questions and
embeddings.

    .venv/bin/python -m bench.peers_compare [--sizes 1000,10000] [--questions 60]
        [--peers graphiti,mem0] [--http | --http-only]

Each peer runs in a venv of its own, in a child process (bench.peers_sides),
never in ours: ``.bench-venv-graphiti`` (``graphiti-core[kuzu]`` 0.31.2) and
``.bench-venv-mem0`` (``mem0ai`` 2.2.1), created from PyPI on the first run
(with Starlette and uvicorn for the HTTP shim). ``--peers ''`` runs our side
only.

The peers and our server embed the questions with one fake OpenAI embeddings
server (tests/fakes, loopback, kept-alive connections, in this process): a
paraphrase or an alias question gets a vector near its target fact or
entity, any other text a hashed one. The graph's vectors are the same
deterministic ``vec_of`` of each entity name and fact text on every side,
written directly (ours: the SQLite adapters, bench.sqlite_serve; Graphiti:
EntityNode / EntityEdge rows through ``add_nodes_and_edges_bulk``; Mem0: one
memory per fact into its vector store, as ``add(infer=False)`` stores a
message). No run reaches the network.

The sides (bench.peers_turns), every one asked every question once, in turn
(the order turning by one each question: a change of the machine's load
falls on all alike): ours in-process, ``gligabao.Memory(path).search(q)`` on
the same file, in a child process as the peers' calls are; ours over HTTP,
the round trip of POST /v1/gb/search (retrieval and context, no LLM) and of
POST /v1/gb/query (the same, the fake Anthropic LLM's answer, evidence) on
one kept-alive connection; the peers, their in-process search call
(``graphiti.search(q, num_results=10)``, ``memory.search(q, top_k=10)``);
with ``--http``, the peers' same calls behind one minimal HTTP server
(Starlette on uvicorn's h11, the stack of `gligabao serve`: neither ships a
server for its embedded store). ``CPU``: the median CPU time of the call in
its own process (every thread), for the sides in a child process of their
own. ``embed``: the median time of the embeddings request inside each (ours
from the call's inference row, whole milliseconds). Hit: ours, the target
fact (a hub question: an edge of the place) is among the edges returned / in
the context sent to the LLM; a peer, it is in its top 10. Printed, never
asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .harness import ROOT
from .harness.fakes import FakeAnthropic, FakeOpenAI, start_fakes
from .harness.servers import child_env, fakes_env, free_port
from .harness.tables import table
from .harness.timing import load_average, median, ms_since, pct
from .peers_turns import MARK, Answer, Ours, Shim, Side, Worker, in_turn
from .sqlite_serve import Question, prepare, serve

VENVS = {
    "graphiti": (ROOT / ".bench-venv-graphiti", ["graphiti-core[kuzu]==0.31.2", "httpx"]),
    "mem0": (ROOT / ".bench-venv-mem0", ["mem0ai==2.2.1"]),
}
# The HTTP shim's server: the versions `gligabao serve` runs on here.
SHIM = ["starlette==1.10.0", "uvicorn==0.55.0"]


def ensure_venv(peer: str) -> Path:
    venv, packages = VENVS[peer]
    py = venv / "bin" / "python"
    if not py.exists():
        print(f"creating {venv} with {' '.join(packages)} (once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *packages], check=True)
    if subprocess.run([str(py), "-c", "import starlette, uvicorn"], check=False,
                      capture_output=True).returncode:  # fmt: skip
        subprocess.run([str(py), "-m", "pip", "install", "-q", *SHIM], check=True)
    return py


def library_worker(path: str) -> int:
    """In the child: ``gligabao.Memory(path).search`` of each question read
    from stdin, as bench.peers_sides' ``worker`` answers (no server, no socket
    but the embeddings request)."""
    from gligabao import Memory

    with Memory(path=path, user_id="bench") as gb:
        gb.search("warm up")
        print(MARK + json.dumps({"ready": 0.0}), flush=True)
        for line in sys.stdin:
            text = json.loads(line)["text"]
            t0, c0 = time.perf_counter(), time.process_time()
            found = gb.search(text)
            ms, cpu = ms_since(t0), (time.process_time() - c0) * 1000
            [inference] = gb.inferences(limit=1).inferences  # the search's embeddings request
            embed = float(inference.latency_ms) if inference.stage == "embed" else 0.0
            pairs = [[f"d{e.id}", f"e{e.target_id}"] for e in found.edges]
            print(MARK + json.dumps({"ms": ms, "cpu_ms": cpu, "embed_ms": embed,
                                     "found": pairs}), flush=True)  # fmt: skip
    return 0


def spec_of(g: Any, qs: list[Question], dim: int, tmp: Path, emb: FakeOpenAI) -> dict[str, Any]:
    """What a peer's side needs, as JSON: the graph, the questions, its files."""
    from gligabao.text import fact_text

    return {
        "dim": dim,
        "openai": emb.base_url,
        "kuzu": str(tmp / "kuzu"),
        "qdrant": str(tmp / "qdrant"),
        "history": str(tmp / "mem0-history.db"),
        "entities": [
            {"id": e.id, "name": e.name, "type": e.type, "description": e.description,
             "created_at": e.created_at}
            for e in g.entities
        ],
        "edges": [{**d.__dict__, "fact_text": fact_text(d.relation, d.description)}
                  for d in g.edges],
        "questions": [{"text": q.text, "edge": q.edge, "place": q.place} for q in qs],
    }  # fmt: skip


def start_sides(args: argparse.Namespace, path: Path, tmp: Path, spec: dict[str, Any],
                base: str, llm: FakeAnthropic, emb: FakeOpenAI) -> list[Side]:
    """Ours over HTTP and in-process, then each peer's sides, one after the
    other (each built before the next starts)."""
    sides: list[Side] = [Ours(base, "search", llm), Ours(base, "query", llm)]
    env = child_env({**fakes_env(llm, emb), "GB_EMBEDDING_DIMENSION": str(args.dim),
                     "BENCH_ROOT": str(ROOT)})  # fmt: skip
    me = [sys.executable, "-m", "bench.peers_compare", "--worker", str(path)]
    sides.append(Worker("gligabao search (in-process)", me, env, tmp / "library.log"))
    peer_env = {**os.environ, "PYTHONPATH": str(ROOT), "BENCH_ROOT": str(ROOT),
                "OPENAI_API_KEY": "x", "OPENAI_BASE_URL": emb.base_url,
                # neither peer's telemetry (both would post to their vendor)
                "MEM0_TELEMETRY": "False", "GRAPHITI_TELEMETRY_ENABLED": "false"}  # fmt: skip
    for peer in [p for p in args.peers.split(",") if p]:
        py = str(ensure_venv(peer))
        if not args.http_only:
            spec_path = tmp / f"{peer}.json"
            spec_path.write_text(json.dumps({**spec, **stores(tmp / peer)}))
            args_ = [py, "-m", "bench.peers_sides", peer, str(spec_path), "--worker"]
            sides.append(Worker(peer, args_, peer_env, tmp / f"{peer}.log"))
        if args.http or args.http_only:
            spec_path, port = tmp / f"{peer}-http.json", free_port()
            spec_path.write_text(json.dumps({**spec, **stores(tmp / f"{peer}-http")}))
            args_ = [py, "-m", "bench.peers_sides", peer, str(spec_path), str(port)]
            sides.append(Shim(f"{peer} (HTTP shim)", args_, peer_env,
                              tmp / f"{peer}-http.log", port))  # fmt: skip
    return sides


def stores(folder: Path) -> dict[str, str]:
    """A side's own store files (two sides never share one)."""
    folder.mkdir(exist_ok=True)
    return {"kuzu": str(folder / "kuzu"), "qdrant": str(folder / "qdrant"),
            "history": str(folder / "mem0-history.db")}  # fmt: skip


def row(size: int, side: str, answers: list[Answer], build_s: float) -> list[Any]:
    cpu = [a.cpu_ms for a in answers if a.cpu_ms is not None]
    return [
        size, side, f"{pct([a.ms for a in answers], 50):.1f}",
        f"{pct([a.ms for a in answers], 95):.1f}", f"{median(cpu):.1f}" if cpu else "",
        f"{median([a.embed_ms for a in answers]):.1f}",
        f"{sum(a.hit for a in answers)}/{len(answers)}", f"{build_s:.1f} s",
    ]  # fmt: skip


def ratios(size: int, got: dict[str, list[Answer]]) -> list[str]:
    """Each peer's p50 (and CPU) over ours, like for like."""
    p50 = {name: pct([a.ms for a in answers], 50) for name, answers in got.items()}
    cpu = {name: median([a.cpu_ms for a in answers if a.cpu_ms is not None] or [0.0])
           for name, answers in got.items()}  # fmt: skip
    out = []
    for peer in ("graphiti", "mem0"):
        ours = "gligabao search (in-process)"
        if peer in p50:
            out.append(f"{size} facts, in-process: {peer} p50 / ours = {p50[peer] / p50[ours]:.1f}x "
                       f"(CPU {cpu[peer] / max(cpu[ours], 1e-9):.1f}x)")  # fmt: skip
        shim, http = f"{peer} (HTTP shim)", "gligabao search (HTTP)"
        if shim in p50:
            out.append(f"{size} facts, HTTP: {shim} p50 / ours = {p50[shim] / p50[http]:.1f}x")
    return out


HEADER = ["facts", "side", "p50 ms", "p95", "CPU", "embed", "hits", "build"]


def one_size(size: int, args: argparse.Namespace, llm: FakeAnthropic, emb: FakeOpenAI
             ) -> tuple[list[list[Any]], list[str]]:  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        g, path, build_s, qs = prepare(size, tmp, emb, args.questions, args.dim)
        child, base = serve(path, llm, emb, args.dim)
        sides: list[Side] = []
        try:
            sides = start_sides(args, path, tmp, spec_of(g, qs, args.dim, tmp, emb), base, llm, emb)
            print(load_average(), "- every side built; asking", flush=True)
            got = in_turn(sides, qs)
        finally:
            for side in sides:
                side.stop()
            child.stop()
    built = {s.name: getattr(s, "build_s", 0.0) for s in sides}
    rows = [row(size, name, answers, built[name] or build_s) for name, answers in got.items()]
    return rows, ratios(size, got)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--questions", type=int, default=60)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--peers", default="graphiti,mem0")
    ap.add_argument("--http", action="store_true",
                    help="also each peer's search behind the same minimal HTTP server")
    ap.add_argument("--http-only", action="store_true",
                    help="the peers over HTTP only (not their in-process call)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return library_worker(args.worker)
    print(load_average(), flush=True)
    rows: list[list[Any]] = []
    notes: list[str] = []
    llm, emb = start_fakes(dim=args.dim, keep_alive=True)
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            got, said = one_size(size, args, llm, emb)
            print(table(HEADER, got), "\n".join(said), sep="\n", flush=True)
            rows += got
            notes += said
        print(table(HEADER, rows))
        print("\n".join(notes))
    finally:
        llm.stop()
        emb.stop()
    print(load_average())
    return 0


if __name__ == "__main__":
    sys.exit(main())
