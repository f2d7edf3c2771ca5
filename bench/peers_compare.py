"""Our search and query through `gligabao serve` on its SQLite default, side by
side with Graphiti's hybrid search on its embedded Kuzu and Mem0's search on
its default local store (Qdrant, local mode), on the same synthetic graphs,
questions and embeddings.

    .venv/bin/python -m bench.peers_compare [--sizes 1000,10000] [--questions 60]
        [--peers graphiti,mem0]

Each peer runs in a venv of its own, in a child process (bench.peers_sides),
never in ours: ``.bench-venv-graphiti`` (``graphiti-core[kuzu]`` 0.31.2) and
``.bench-venv-mem0`` (``mem0ai`` 2.2.1), created from PyPI on the first run.
``--peers ''`` runs our side only.

The peers and our server embed the questions with one fake OpenAI embeddings
server (tests/fakes, loopback, kept-alive connections): a paraphrase or an
alias question gets a vector near its target fact or entity, any other text a
hashed one. The graph's vectors are the same deterministic ``vec_of`` of each
entity name and fact text on every side, written directly (ours: the SQLite
adapters, bench.sqlite_serve; Graphiti: EntityNode / EntityEdge rows through
``add_nodes_and_edges_bulk``; Mem0: one memory per fact into its vector
store, as ``add(infer=False)`` stores a message). No run reaches the network.

Measured per question, one at a time: ours in-process, ``gligabao.Memory(path)
.search(q)`` on the same file (the like-for-like of the peers' calls); ours over
HTTP, the round trip of POST
/v1/gb/search (retrieval and context, no LLM) and of POST /v1/gb/query (the
same, the fake Anthropic LLM's answer, evidence) on one kept-alive
connection; the peers, their in-process search call (``graphiti.search(q,
num_results=10)``, ``memory.search(q, top_k=10)``). ``embed`` is the median
time of the embeddings request inside each (ours from the call's inference
row, whole milliseconds). Hit: ours, the target fact (a hub question: an edge
of the place) is among the edges returned / in the context sent to the LLM; a
peer, it is in its top 10. Printed, never asserted.
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
from .harness.http import Connection
from .harness.tables import table
from .harness.timing import load_average, median, ms_since, pct
from .query_cost import call_of, embed_ms
from .sqlite_serve import Question, prepare, serve

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


def searched_hit(q: Question, edges: list[dict[str, Any]]) -> bool:
    if q.edge is not None:
        return any(e["id"] == q.edge for e in edges)
    return any(e["target_id"] == q.place for e in edges)


def our_side(base: str, qs: list[Question], llm: FakeAnthropic, route: str) -> dict[str, Any]:
    """Each question once on ``route`` (search or query) after a warm-up."""
    conn = Connection(base)
    conn.request("POST", f"/v1/gb/{route}", {"user_id": "bench", "query": "warm up"})
    lat, embeds, hits = [], [], []
    for q in qs:
        t0 = time.perf_counter()
        status, body, headers = conn.request(
            "POST", f"/v1/gb/{route}", {"user_id": "bench", "query": q.text}
        )
        lat.append(ms_since(t0))
        assert status == 200, body
        if route == "search":
            hits.append(searched_hit(q, body["edges"]))
        else:
            hits.append(q.line in str(llm.requests_for("query")[-1]["messages"]))
        embeds.append(embed_ms(call_of(conn, headers["X-Gb-Call-Id"], "bench")))
    conn.close()
    return {"lat": lat, "embed": embeds, "hits": hits}


def library_side(path: Path, qs: list[Question], llm: FakeAnthropic, emb: FakeOpenAI,
                 dim: int) -> dict[str, Any]:
    """Each question once through ``gligabao.Memory(path).search`` in this
    process (no server, no socket but the embeddings request), after a warm-up:
    the like-for-like of the peers' in-process calls."""
    from gligabao import Memory

    from .harness.servers import fakes_env, use_env

    use_env({**fakes_env(llm, emb), "GB_EMBEDDING_DIMENSION": str(dim)})
    lat, embeds, hits = [], [], []
    with Memory(path=path, user_id="bench") as gb:
        gb.search("warm up")
        for q in qs:
            t0 = time.perf_counter()
            found = gb.search(q.text)
            lat.append(ms_since(t0))
            hits.append(searched_hit(q, [e.model_dump() for e in found.edges]))
            [inference] = gb.inferences(limit=1).inferences  # the search's embeddings request
            embeds.append(float(inference.latency_ms) if inference.stage == "embed" else 0.0)
    return {"lat": lat, "embed": embeds, "hits": hits}


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


def peer_side(peer: str, spec_path: Path, emb: FakeOpenAI) -> dict[str, Any] | str:
    """The peer's figures, or why it failed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "x",
           "OPENAI_BASE_URL": emb.base_url, "MEM0_TELEMETRY": "False"}  # fmt: skip
    out = subprocess.run(
        [str(ensure_venv(peer)), "-m", "bench.peers_sides", peer, str(spec_path)],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=7200,
    )  # fmt: skip
    if out.returncode != 0:
        return out.stderr[-2000:]
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def row(size: int, side: str, r: dict[str, Any], build_s: float) -> list[Any]:
    return [
        size, side, f"{pct(r['lat'], 50):.1f}", f"{pct(r['lat'], 95):.1f}",
        f"{median(r['embed']):.1f}", f"{sum(r['hits'])}/{len(r['hits'])}", f"{build_s:.1f} s",
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--questions", type=int, default=60)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--peers", default="graphiti,mem0")
    args = ap.parse_args(argv)
    peers = [p for p in args.peers.split(",") if p]
    print(load_average(), flush=True)
    rows: list[list[Any]] = []
    ratios: list[str] = []
    llm, emb = start_fakes(dim=args.dim, keep_alive=True)
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            with tempfile.TemporaryDirectory() as tmp_name:
                tmp = Path(tmp_name)
                g, path, build_s, qs = prepare(size, tmp, emb, args.questions, args.dim)
                child, base = serve(path, llm, emb, args.dim)
                try:
                    ours = {r: our_side(base, qs, llm, r) for r in ("search", "query")}
                finally:
                    child.stop()
                for r in ("search", "query"):
                    rows.append(row(size, f"gligabao {r} (HTTP)", ours[r], build_s))
                lib = library_side(path, qs, llm, emb, args.dim)
                rows.append(row(size, "gligabao search (in-process)", lib, build_s))
                print(table(["facts", "side", "p50 ms", "p95", "embed", "hits", "build"], rows[-3:]),
                      flush=True)  # fmt: skip
                spec_path = tmp / "spec.json"
                spec_path.write_text(json.dumps(spec_of(g, qs, args.dim, tmp, emb)))
                for peer in peers:
                    res = peer_side(peer, spec_path, emb)
                    if isinstance(res, str):
                        print(f"{size} {peer} failed: {res}", flush=True)
                        continue
                    rows.append(row(size, peer, res, res["build_s"]))
                    ratio = pct(res["lat"], 50) / pct(ours["search"]["lat"], 50)
                    in_process = pct(res["lat"], 50) / pct(lib["lat"], 50)
                    ratios.append(f"{size} facts: {peer} p50 / our search p50 = {ratio:.1f}x (HTTP), "
                                  f"{in_process:.1f}x (in-process)")  # fmt: skip
                    print(f"{rows[-1]}  ({ratios[-1]})", flush=True)
        print(table(["facts", "side", "p50 ms", "p95", "embed", "hits", "build"], rows))
        print("\n".join(ratios))
    finally:
        llm.stop()
        emb.stop()
    print(load_average())
    return 0


if __name__ == "__main__":
    sys.exit(main())
