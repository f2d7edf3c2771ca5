"""Our query and search through `gligabao serve` on its SQLite default, side by
side with Graphiti's hybrid search on its embedded Kuzu and Mem0's search on
its default local store (Qdrant, local mode), on the same synthetic graphs,
questions and embeddings.

    .venv/bin/python bench/peers_compare.py [--sizes 1000,10000] [--questions 100]
        [--peers graphiti,mem0]

Each peer runs in a venv of its own, in a child process (bench/peers_sides.py),
never in ours: ``.bench-venv-graphiti`` (``graphiti-core[kuzu]`` 0.31.2) and
``.bench-venv-mem0`` (``mem0ai`` 2.2.1), created from PyPI on the first run.

Both peers and our server embed the questions with one fake OpenAI embeddings
server (tests/fakes, loopback): a paraphrase or an alias question gets a
vector near its target fact or entity, any other text a hashed one. The
graph's vectors are the same deterministic ``vec_of`` of each entity name and
fact text on every side, written directly (ours: the SQLite adapters, see
bench/sqlite_serve.py; Graphiti: EntityNode / EntityEdge rows through
``add_nodes_and_edges_bulk``; Mem0: one memory per fact into its vector store,
as ``add(infer=False)`` stores a message). No run reaches the network.

Measured per question, one at a time: ours, the HTTP round trip of POST
/v1/gb/search (retrieval and context, no LLM) and of POST /v1/gb/query (the
same, the fake Anthropic LLM's answer, evidence); the peers, their in-process
search call (``graphiti.search(q, num_results=10)``, ``memory.search(q,
top_k=10)``). ``embed`` is the median time of the embeddings request inside
each (ours from the call record's trajectory). Hit: ours, the target fact (the
hub question: an edge of the place) is in the context returned / sent to the
LLM; a peer, it is in its top 10. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VENVS = {
    "graphiti": (ROOT / ".bench-venv-graphiti", ["graphiti-core[kuzu]==0.31.2", "httpx"]),
    "mem0": (ROOT / ".bench-venv-mem0", ["mem0ai==2.2.1"]),
}


def ensure_venv(peer: str) -> Path:
    venv, packages = VENVS[peer]
    py = venv / "bin" / "python"
    if not py.exists():
        print(f"creating {venv} with {' '.join(packages)} (once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *packages], check=True)
    return py


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))] if s else float("nan")


def row(size: int, side: str, lat: list[float], emb: list[float], hits: list[bool],
        build_s: float) -> str:
    return (
        f"{size:>7} {side:<16} {pct(lat, 50):8.2f} {pct(lat, 95):8.2f} "
        f"{statistics.median(emb) if emb else float('nan'):7.2f} "
        f"{sum(hits):>4}/{len(hits):<3}  {build_s:.1f} s"
    )


def our_side(url: str, qs: list[Any], llm: Any, request: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for route in ("search", "query"):
        request(f"{url}/v1/gb/{route}", b'{"user_id": "bench", "query": "warm up"}')
        lat, ids, hits = [], [], []
        for q in qs:
            body = json.dumps({"user_id": "bench", "query": q.text}).encode()
            t0 = time.perf_counter()
            status, headers, raw = request(f"{url}/v1/gb/{route}", body)
            lat.append((time.perf_counter() - t0) * 1000)
            assert status == 200
            ids.append(headers["X-Gb-Call-Id"])
            if route == "query":
                hits.append(q.line in str(llm.requests_for("query")[-1]["messages"]))
            else:
                edges = json.loads(raw)["edges"]
                hits.append(
                    any(e["id"] == q.edge for e in edges)
                    if q.edge is not None
                    else any(e["target_id"] == q.place for e in edges)
                )
        emb = []
        for i in ids:
            _, _, raw = request(f"{url}/v1/gb/calls/{i}?user_id=bench")
            emb.append(sum(s["ms"] for s in json.loads(raw)["steps"] if s["name"] == "embed"))
        out[route] = {"lat": lat, "embed": emb, "hits": hits}
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--peers", default="graphiti,mem0")
    ap.add_argument("--peer-max", type=int, default=10_000, help="largest size run on the peers")
    args = ap.parse_args()

    sys.path.insert(0, str(ROOT / "bench"))
    import sqlite_serve as ours
    from query_cost import request
    from query_scale import generate

    from gligabao.models import DatasetKey
    from gligabao.text import fact_text

    peers = [p for p in args.peers.split(",") if p]
    pys = {p: ensure_venv(p) for p in peers}
    key = DatasetKey("bench", "main")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")
    print(f"{'facts':>7} {'side':<16} {'p50 ms':>8} {'p95 ms':>8} {'embed':>7} {'hits':>8}  build")
    fake_llm, fake_emb = ours.fakes(args.dim)
    with fake_llm as llm, fake_emb as emb, tempfile.TemporaryDirectory() as tmp:
        llm.default("query", ours.ANSWER)
        for size in [int(s) for s in args.sizes.split(",")]:
            rng = random.Random(size)
            g = generate(key, size, rng)
            path = Path(tmp) / f"gb-{size}.db"
            build_s = ours.write_graph(path, g, args.dim)
            qs = ours.questions(g, args.questions, rng, emb, args.dim)
            proc, url = ours.serve(path, llm, emb, args.dim)
            try:
                res = our_side(url, qs, llm, request)
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.communicate(timeout=60)
            for route, r in res.items():
                print(row(size, f"gligabao {route}", r["lat"], r["embed"], r["hits"], build_s),
                      flush=True)
            if size > args.peer_max:
                continue
            spec = {
                "dim": args.dim,
                "kuzu": str(Path(tmp) / f"kuzu-{size}"),
                "qdrant": str(Path(tmp) / f"qdrant-{size}"),
                "history": str(Path(tmp) / f"mem0-history-{size}.db"),
                "openai": emb.base_url,
                "entities": [
                    {"id": e.id, "name": e.name, "type": e.type, "description": e.description,
                     "created_at": e.created_at}
                    for e in g.entities
                ],
                "edges": [
                    {**d.__dict__, "fact_text": fact_text(d.relation, d.description)}
                    for d in g.edges
                ],
                "questions": [{"text": q.text, "edge": q.edge, "place": q.place} for q in qs],
            }
            spec_path = Path(tmp) / f"spec-{size}.json"
            spec_path.write_text(json.dumps(spec))
            env = {**os.environ, "PYTHONPATH": str(ROOT / "bench"), "OPENAI_API_KEY": "x",
                   "OPENAI_BASE_URL": emb.base_url, "MEM0_TELEMETRY": "False",
                   "MEM0_DIR": str(Path(tmp) / "mem0")}
            for peer in peers:
                out = subprocess.run(
                    [str(pys[peer]), str(ROOT / "bench" / "peers_sides.py"), peer,
                     str(spec_path)],
                    env=env, capture_output=True, text=True, timeout=3600,
                )
                if out.returncode != 0:
                    print(f"{size:>7} {peer:<16} failed: {out.stderr[-2000:]}", flush=True)
                    continue
                r = json.loads(out.stdout.strip().splitlines()[-1])
                print(row(size, peer, r["lat"], r["embed"], r["hits"], r["build_s"]), flush=True)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
