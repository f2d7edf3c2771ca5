"""Our query through `gligabao serve` on its SQLite default against Graphiti's
hybrid search on its embedded Kuzu, on the same synthetic graphs (1k and 10k
edges), the same questions and the same embeddings.

    .venv/bin/python -m bench.graphiti_compare [--sizes 1000,10000] [--questions 100]
        [--venv PATH]

The first run creates a separate venv (``--venv``, by default
``.bench-venv-graphiti`` next to the repository's ``.venv``) with
``graphiti-core[kuzu]`` from PyPI; Graphiti runs there, in a child process
(``python -m bench.graphiti_compare --graphiti-side``, which imports nothing of
ours but bench/harness/vectors.py), never in our venv.

Both sides get the graph of bench/harness/synthetic_graph.py and the same vectors (the
deterministic ``vec_of`` of each entity name and fact text), written directly
(ours: the SQLite adapters, see bench/sqlite_serve.py; Graphiti: EntityNode /
EntityEdge rows through ``add_nodes_and_edges_bulk``). The questions are
embedded by one fake OpenAI server (tests/fakes) for both: a paraphrase or an
alias question gets a vector near its target fact or entity. Ours answers
through the fake Anthropic server, which replies at once.

Measured per question, one at a time: ours, the HTTP round trip of POST
/v1/gb/query (retrieval, context, the LLM call, evidence, the call record);
Graphiti, ``await graphiti.search(question, num_results=10)`` (BM25 + cosine
on edges, RRF). Hit: ours, the target fact (the hub question: the place) is
in the ``<graph>`` context sent to the LLM; Graphiti, the target edge (the
hub: an edge of the place) is in its top 10. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .harness import ROOT
from .harness.timing import pct

VENV = ROOT / ".bench-venv-graphiti"
GRAPHITI = ["graphiti-core[kuzu]==0.31.2", "httpx"]  # its llm_client imports httpx


# --- Graphiti's side (runs in its own venv) --------------------------------------------


async def graphiti_side(spec_path: str) -> None:
    import numpy as np
    from graphiti_core import Graphiti
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.edges import EntityEdge
    from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
    from graphiti_core.nodes import EntityNode
    from graphiti_core.utils.bulk_utils import add_nodes_and_edges_bulk

    from .harness.vectors import vec_of

    spec = json.loads(Path(spec_path).read_text())
    dim, group = spec["dim"], "bench"
    t0 = time.perf_counter()
    driver = KuzuDriver(db=spec["db"])
    embedder = OpenAIEmbedder(
        OpenAIEmbedderConfig(api_key="x", base_url=spec["openai"], embedding_dim=dim)
    )
    g = Graphiti(graph_driver=driver, embedder=embedder)

    def ts(value: str | None) -> Any:
        from datetime import datetime

        return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None

    nodes = {
        e["id"]: EntityNode(
            uuid=f"e{e['id']}", name=e["name"], group_id=group, labels=[e["type"]],
            summary=e["description"], created_at=ts(e["created_at"]),
            name_embedding=np.asarray(vec_of(e["name"], dim)).tolist(),
        )
        for e in spec["entities"]
    }
    edges = [
        EntityEdge(
            uuid=f"d{d['id']}", group_id=group, source_node_uuid=f"e{d['source_id']}",
            target_node_uuid=f"e{d['target_id']}", name=d["relation"], fact=d["description"],
            fact_embedding=np.asarray(vec_of(d["fact_text"], dim)).tolist(), episodes=[],
            created_at=ts(d["created_at"]), valid_at=ts(d["valid_at"]),
            invalid_at=ts(d["invalid_at"]), expired_at=ts(d["expired_at"]),
        )
        for d in spec["edges"]
    ]
    await add_nodes_and_edges_bulk(driver, [], [], list(nodes.values()), edges, embedder)
    # Graphiti.build_indices_and_constraints is a no-op on Kuzu; its graph
    # operations create the full-text indexes (over the rows now present).
    await driver.graph_ops.build_indices_and_constraints(driver)
    build_s = time.perf_counter() - t0
    await g.search("warm up", group_ids=[group], num_results=10)
    lat, hits = [], []
    for q in spec["questions"]:
        t1 = time.perf_counter()
        found = await g.search(q["text"], group_ids=[group], num_results=10)
        lat.append((time.perf_counter() - t1) * 1000)
        if q["edge"] is not None:
            hits.append(any(e.uuid == f"d{q['edge']}" for e in found))
        else:
            hits.append(any(e.target_node_uuid == f"e{q['place']}" for e in found))
    print(json.dumps({"build_s": build_s, "lat": lat, "hits": hits}))


# --- our side and the driver ------------------------------------------------------------


def ensure_venv(venv: Path) -> Path:
    py = venv / "bin" / "python"
    if not py.exists():
        print(f"creating {venv} with {' '.join(GRAPHITI)} (once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *GRAPHITI], check=True)
    return py


def graphiti_spec(g: Any, qs: list[Any], dim: int, db: Path, openai_url: str) -> dict[str, Any]:
    """What the Graphiti side needs, as JSON: the graph, the questions."""
    from gligabao.text import fact_text

    return {
        "dim": dim,
        "db": str(db),
        "openai": openai_url,
        "entities": [
            {"id": e.id, "name": e.name, "type": e.type, "description": e.description,
             "created_at": e.created_at}
            for e in g.entities
        ],
        "edges": [{**d.__dict__, "fact_text": fact_text(d.relation, d.description)}
                  for d in g.edges],
        "questions": [{"text": q.text, "edge": q.edge, "place": q.place} for q in qs],
    }  # fmt: skip


def line(size: int, side: str, lat: list[float], hits: list[bool], build_s: float) -> str:
    return (
        f"{size:>7} {side:<9} {pct(lat, 50):8.1f} {pct(lat, 95):8.1f} "
        f"{sum(hits):>4}/{len(hits):<3}  {build_s:.1f} s"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--venv", type=Path, default=VENV, help="Graphiti's venv (created once)")
    ap.add_argument("--graphiti-side", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.graphiti_side:
        asyncio.run(graphiti_side(args.graphiti_side))
        return 0

    from . import sqlite_serve as ours
    from .harness.fakes import start_fakes

    py = ensure_venv(args.venv)
    print(f"{'edges':>7} {'side':<9} {'p50 ms':>8} {'p95 ms':>8} {'hits':>8}  build")
    llm, emb = start_fakes(dim=args.dim)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for size in [int(s) for s in args.sizes.split(",")]:
                g, path, build_s, qs = ours.prepare(size, Path(tmp), emb, args.questions, args.dim)
                child, base = ours.serve(path, llm, emb, args.dim)
                try:
                    lat, hits = ours.ask_all(base, qs, llm)
                finally:
                    child.stop()
                print(line(size, "gligabao", lat, hits, build_s), flush=True)
                spec = graphiti_spec(g, qs, args.dim, Path(tmp) / f"kuzu-{size}", emb.base_url)
                spec_path = Path(tmp) / f"spec-{size}.json"
                spec_path.write_text(json.dumps(spec))
                env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "x",
                       "OPENAI_BASE_URL": emb.base_url}  # fmt: skip
                out = subprocess.run(
                    [str(py), "-m", "bench.graphiti_compare", "--graphiti-side", str(spec_path)],
                    env=env, cwd=ROOT, capture_output=True, text=True, timeout=3600,
                )  # fmt: skip
                if out.returncode != 0:
                    print(f"{size:>7} graphiti  failed: {out.stderr[-2000:]}", flush=True)
                    continue
                res = json.loads(out.stdout.strip().splitlines()[-1])
                print(line(size, "graphiti", res["lat"], res["hits"], res["build_s"]), flush=True)
    finally:
        llm.stop()
        emb.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
