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
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .harness import ROOT
from .harness.fakes import FakeAnthropic, FakeOpenAI, start_fakes
from .harness.http import Connection
from .harness.servers import Child, child_env, fakes_env, free_port
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


def library_side(path: Path, spec_path: Path, llm: FakeAnthropic, emb: FakeOpenAI,
                 dim: int) -> dict[str, Any]:
    """``gligabao.Memory(path).search`` of each question, in a child process
    of its own as the peers' calls are (the fake embeddings server answers
    from this one: in the same process it would share the GIL with the
    search's threads)."""
    env = child_env({**fakes_env(llm, emb), "GB_EMBEDDING_DIMENSION": str(dim)})
    out = subprocess.run(
        [sys.executable, "-m", "bench.peers_compare", "--library", str(path), str(spec_path)],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=7200, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"the library side failed: {out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def library_child(path: str, spec_path: str) -> int:
    """In the child: each question once through ``gligabao.Memory(path)
    .search`` (no server, no socket but the embeddings request), after a
    warm-up: the like-for-like of the peers' in-process calls."""
    from gligabao import Memory

    qs = [Question(q["text"], "", q["edge"], q["place"])
          for q in json.loads(Path(spec_path).read_text())["questions"]]  # fmt: skip
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
    print(json.dumps({"lat": lat, "embed": embeds, "hits": hits}))
    return 0


def pairs_hit(q: Question, found: list[list[str]]) -> bool:
    """A peer's hit from its (edge id, target id) pairs, ``d<id>``, ``e<id>``."""
    if q.edge is not None:
        return any(e == f"d{q.edge}" for e, _ in found)
    return any(t == f"e{q.place}" for _, t in found)


def peer_http(peer: str, spec_path: Path, emb: FakeOpenAI, qs: list[Question]) -> dict[str, Any] | str:
    """The peer's search behind bench.peers_sides' HTTP shim, each question
    once on one kept-alive connection after a warm-up (as ``our_side``)."""
    port = free_port()
    env = peer_env(emb)
    args = [str(ensure_venv(peer)), "-m", "bench.peers_sides", peer, str(spec_path), str(port)]
    child = Child.start(args, env, spec_path.with_name(f"{peer}-http.log"))
    try:
        while not listening(port):  # the port opens once the graph is built
            if child.proc.poll() is not None:
                return child.log.read_text(errors="replace")[-2000:]
            time.sleep(0.5)
        built = [ln for ln in child.log.read_text().splitlines() if ln.startswith('{"build_s"')]
        build_s = float(json.loads(built[-1])["build_s"])
        conn = Connection(f"http://127.0.0.1:{port}")
        conn.request("POST", "/search", {"query": "warm up"})
        lat, embeds, hits = [], [], []
        for q in qs:
            t0 = time.perf_counter()
            status, body, _ = conn.request("POST", "/search", {"query": q.text})
            lat.append(ms_since(t0))
            assert status == 200, body
            embeds.append(float(body["embed_ms"]))
            hits.append(pairs_hit(q, body["found"]))
        conn.close()
    finally:
        child.stop()
    return {"build_s": build_s, "lat": lat, "embed": embeds, "hits": hits}


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


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


def peer_env(emb: FakeOpenAI) -> dict[str, str]:
    """A peer's environment: the fake embeddings, and neither peer's
    telemetry (both would post to their vendor: there is no network here)."""
    return {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "x",
            "OPENAI_BASE_URL": emb.base_url, "MEM0_TELEMETRY": "False",
            "GRAPHITI_TELEMETRY_ENABLED": "false"}  # fmt: skip


def peer_side(peer: str, spec_path: Path, emb: FakeOpenAI) -> dict[str, Any] | str:
    """The peer's figures, or why it failed."""
    env = peer_env(emb)
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


def in_process_peer(peer: str, size: int, spec_path: Path, emb: FakeOpenAI,
                    ours: dict[str, Any], lib: dict[str, Any], ratios: list[str]) -> list[list[Any]]:
    res = peer_side(peer, spec_path, emb)
    if isinstance(res, str):
        print(f"{size} {peer} failed: {res}", flush=True)
        return []
    ratio = pct(res["lat"], 50) / pct(ours["search"]["lat"], 50)
    in_process = pct(res["lat"], 50) / pct(lib["lat"], 50)
    ratios.append(f"{size} facts: {peer} p50 / our search p50 = {ratio:.1f}x (its in-process "
                  f"call / our HTTP), {in_process:.1f}x (in-process / in-process)")  # fmt: skip
    print(f"{row(size, peer, res, res['build_s'])}  ({ratios[-1]})", flush=True)
    return [row(size, peer, res, res["build_s"])]


def http_peer(peer: str, size: int, spec_path: Path, emb: FakeOpenAI, qs: list[Question],
              ours: dict[str, Any], ratios: list[str]) -> list[list[Any]]:
    res = peer_http(peer, spec_path, emb, qs)
    if isinstance(res, str):
        print(f"{size} {peer} over HTTP failed: {res}", flush=True)
        return []
    ratio = pct(res["lat"], 50) / pct(ours["search"]["lat"], 50)
    ratios.append(f"{size} facts: {peer} (HTTP shim) p50 / our search (HTTP) p50 = {ratio:.1f}x")
    out = row(size, f"{peer} (HTTP shim)", res, res["build_s"])
    print(f"{out}  ({ratios[-1]})", flush=True)
    return [out]


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
    ap.add_argument("--library", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.library:
        return library_child(*args.library)
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
                spec_path = tmp / "spec.json"
                spec_path.write_text(json.dumps(spec_of(g, qs, args.dim, tmp, emb)))
                lib = library_side(path, spec_path, llm, emb, args.dim)
                rows.append(row(size, "gligabao search (in-process)", lib, build_s))
                print(table(["facts", "side", "p50 ms", "p95", "embed", "hits", "build"], rows[-3:]),
                      flush=True)  # fmt: skip
                for peer in peers:
                    if not args.http_only:
                        rows += in_process_peer(peer, size, spec_path, emb, ours, lib, ratios)
                    if args.http or args.http_only:
                        (tmp / "http").mkdir(exist_ok=True)  # the shims' own stores
                        http_spec = tmp / "http" / "spec.json"
                        http_spec.write_text(json.dumps(
                            spec_of(g, qs, args.dim, tmp / "http", emb)))  # fmt: skip
                        rows += http_peer(peer, size, http_spec, emb, qs, ours, ratios)
        print(table(["facts", "side", "p50 ms", "p95", "embed", "hits", "build"], rows))
        print("\n".join(ratios))
    finally:
        llm.stop()
        emb.stop()
    print(load_average())
    return 0


if __name__ == "__main__":
    sys.exit(main())
