"""Our query through `gligabao serve` on its SQLite default against Graphiti's
hybrid search on its embedded Kuzu, on the same synthetic graphs (1k and 10k
edges), the same questions and the same embeddings.

    .venv/bin/python bench/graphiti_compare.py [--sizes 1000,10000] [--questions 100]

The first run creates a separate venv (``.bench-venv-graphiti``, next to the
repository's ``.venv``) with ``graphiti-core[kuzu]`` from PyPI; Graphiti runs
there, in a child process (``--graphiti-side``), never in our venv.

Both sides get the graph of bench/query_scale.py and the same vectors (the
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
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
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
    from query_scale_vectors import vec_of

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


def ensure_venv() -> Path:
    py = VENV / "bin" / "python"
    if not py.exists():
        print(f"creating {VENV} with {' '.join(GRAPHITI)} (once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *GRAPHITI], check=True)
    return py


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--graphiti-side", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.graphiti_side:
        asyncio.run(graphiti_side(args.graphiti_side))
        return 0

    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT / "tests"))
    import sqlite_serve as ours
    from query_scale import generate

    from fakes.anthropic_server import FakeAnthropic
    from fakes.openai_server import FakeOpenAI
    from gligabao.models import DatasetKey
    from gligabao.text import fact_text

    py = ensure_venv()
    key = DatasetKey("bench", "main")
    print(f"{'edges':>7} {'side':<9} {'p50 ms':>8} {'p95 ms':>8} {'hits':>8}  build")
    with (
        FakeAnthropic() as llm,
        FakeOpenAI(dim=args.dim) as emb,
        tempfile.TemporaryDirectory() as tmp,
    ):
        llm.default("query", ours.ANSWER)
        for size in [int(s) for s in args.sizes.split(",")]:
            rng = random.Random(size)
            g = generate(key, size, rng)
            path = Path(tmp) / f"gb-{size}.db"
            build_s = ours.write_graph(path, g, args.dim)
            qs = ours.questions(g, args.questions, rng, emb, args.dim)
            proc, url = ours.serve(path, llm, emb, args.dim)
            lat: list[float] = []
            hits: list[bool] = []
            try:
                ours.post(url + "/v1/gb/query", b'{"user_id": "bench", "query": "warm up"}')
                for q in qs:
                    body = json.dumps({"user_id": "bench", "query": q.text}).encode()
                    t0 = time.perf_counter()
                    status, _ = ours.post(url + "/v1/gb/query", body)
                    lat.append((time.perf_counter() - t0) * 1000)
                    assert status == 200
                    hits.append(q.line in str(llm.requests_for("query")[-1]["messages"]))
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.communicate(timeout=60)
            print(
                f"{size:>7} {'gligabao':<9} {pct(lat, 50):8.1f} {pct(lat, 95):8.1f} "
                f"{sum(hits):>4}/{len(hits):<3}  {build_s:.1f} s",
                flush=True,
            )
            spec = {
                "dim": args.dim,
                "db": str(Path(tmp) / f"kuzu-{size}"),
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
                   "OPENAI_BASE_URL": emb.base_url}
            out = subprocess.run(
                [str(py), __file__, "--graphiti-side", str(spec_path)],
                env=env, capture_output=True, text=True, timeout=3600,
            )
            if out.returncode != 0:
                print(f"{size:>7} graphiti  failed: {out.stderr[-2000:]}", flush=True)
                continue
            res = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"{size:>7} {'graphiti':<9} {pct(res['lat'], 50):8.1f} {pct(res['lat'], 95):8.1f} "
                f"{sum(res['hits']):>4}/{len(res['hits']):<3}  {res['build_s']:.1f} s",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
