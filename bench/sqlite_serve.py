"""Query latency through `gligabao serve` on its SQLite default, on graphs of
1k, 10k and 100k edges, and whether the asked fact reaches the LLM's context.

    .venv/bin/python -m bench.sqlite_serve [--sizes 1000,10000,100000]
        [--questions 100] [--dim 384]

Setup. Each size gets a fresh SQLite file, filled directly through the SQLite
adapters (``SqliteGraphStore.apply`` in slices, ``SqliteVectorIndex.upsert``,
the name claims), with the synthetic graph of bench/harness/synthetic_graph.py (entities ~
edges/3, hubs, 10% ended and 10% superseded facts, chunked texts). Then
`gligabao serve --data FILE` runs as a subprocess, its LLM the fake Anthropic
server and its embeddings the fake OpenAI server of tests/fakes, both on
loopback and answering at once; the questions go over HTTP, one at a time.

The questions (see ``questions``): a person's workplace by name (keyword
path), a paraphrase of one fact with no keyword (its vector at cosine 0.85,
vector path), an entity by an alias (vector at 0.8), and a hub ("who lives in
X", hundreds of facts). A question "hits" when its target fact or entity is in
the ``<graph>`` context sent to the LLM.

Also printed: how long numpy's exact search over the cached matrix takes at
each size (what a query pays for the vector search), and whether sqlite-vec
could be loaded by this Python (the alternative this store did not take).

Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gligabao.graph.sqlite.store import SqliteGraphStore
from gligabao.models import DatasetKey, GraphWrite
from gligabao.sqlite.db import Database
from gligabao.text import fact_text, normalize_name
from gligabao.vectors.port import SearchRequest, VectorItem
from gligabao.vectors.sqlite.store import SqliteVectorIndex

from .harness.fakes import FakeAnthropic, FakeOpenAI, start_fakes
from .harness.http import post
from .harness.servers import Child, fakes_env, free_port, start_serve
from .harness.synthetic_graph import Graph, generate, renumber_artifacts
from .harness.timing import ms_since, pct
from .harness.vectors import near, vec_of

SLICE = 1000
KINDS = ("name", "paraphrase", "alias", "hub")


def write_graph(path: Path, g: Graph, dim: int) -> float:
    t0 = time.perf_counter()
    renumber_artifacts(g)
    db = Database(path)
    store, vectors = SqliteGraphStore(db), SqliteVectorIndex(db)
    store.ensure_dataset(g.key)
    store.allocate_ids(g.key, len(g.entities), len(g.edges), len(g.chunks))
    for i in range(0, len(g.entities), SLICE):
        part = g.entities[i : i + SLICE]
        store.claim_names(g.key, f"bench{i}", {normalize_name(e.name): e.id for e in part})
        store.commit(g.key, GraphWrite(txn=f"bench{i}", new_entities=part))
        vectors.upsert(
            g.key, "entities", [VectorItem(e.id, vec_of(e.name, dim).tolist()) for e in part]
        )
    for i in range(0, len(g.edges), SLICE):
        part = g.edges[i : i + SLICE]
        store.commit(g.key, GraphWrite(new_edges=part))
        items = [
            VectorItem(e.id, vec_of(fact_text(e.relation, e.description), dim).tolist())
            for e in part
        ]
        vectors.upsert(g.key, "edges", items)
    store.commit(g.key, GraphWrite(artifacts=g.chunks))
    chunks = [a for a in g.chunks if a.parent_id is not None]
    vectors.upsert(g.key, "chunks", [VectorItem(a.id, vec_of(a.text, dim).tolist()) for a in chunks])
    vectors.upsert(
        g.key, "summaries", [VectorItem(a.id, vec_of(a.summary or "", dim).tolist()) for a in chunks]
    )
    db.close()
    return time.perf_counter() - t0


@dataclass
class Question:
    text: str
    line: str  # what must reach the LLM's context for a hit
    edge: int | None  # the asked fact (None: a hub question)
    place: int | None  # the hub question's place


def questions(g: Graph, n: int, rng: random.Random, emb: FakeOpenAI, dim: int) -> list[Question]:
    by_id = {e.id: e for e in g.entities}
    live = [e for e in g.edges if e.expired_at is None and e.invalid_at is None]
    works = [e for e in live if e.relation == "works_at"]
    out: list[Question] = []
    for i in range(n):
        kind = i % 4
        if kind == 0:  # by name: the keyword path
            e = rng.choice(works)
            q = f"Where does {by_id[e.source_id].name} work?"
        elif kind == 1:  # a paraphrase: only the fact's vector leads to it
            e = rng.choice(live)
            q = f"Remind me of that thing, number {i}"
            emb.set_vector(q, near(vec_of(fact_text(e.relation, e.description), dim), q, 0.85))
        elif kind == 2:  # an alias: only the entity's vector
            e = rng.choice(live)
            q = f"What about the one I mentioned, number {i}?"
            emb.set_vector(q, near(vec_of(by_id[e.source_id].name, dim), q, 0.8))
        else:  # a hub: who lives in a place with many facts
            e = rng.choice([x for x in live if x.relation == "lives_in"])
            q = f"Who lives in {by_id[e.target_id].name}?"
            out.append(Question(q, f"{by_id[e.target_id].name}({e.target_id})", None, e.target_id))
            continue
        dst = by_id[e.target_id]
        line = f"({e.source_id}) --{e.relation}--> {dst.name}({e.target_id})"
        out.append(Question(q, line, e.id, None))
    return out


def prepare(
    size: int, tmp: Path, emb: FakeOpenAI, n_questions: int, dim: int
) -> tuple[Graph, Path, float, list[Question]]:
    """The graph of ``size`` edges in a fresh SQLite file under ``tmp`` and its
    questions (their vectors registered with ``emb``): (graph, file, build s, questions)."""
    rng = random.Random(size)
    g = generate(DatasetKey("bench", "main"), size, rng)
    path = tmp / f"gb-{size}.db"
    build_s = write_graph(path, g, dim)
    return g, path, build_s, questions(g, n_questions, rng, emb, dim)


def serve(path: Path, llm: FakeAnthropic, emb: FakeOpenAI, dim: int) -> tuple[Child, str]:
    """`gligabao serve --data path` on the fakes; (the child, its base URL)."""
    port = free_port()
    env = {**fakes_env(llm, emb), "GB_EMBEDDING_DIMENSION": str(dim)}
    child = start_serve(path.with_suffix(".log"), port, env, "--data", str(path))
    return child, f"http://127.0.0.1:{port}"


def ask_all(base: str, qs: list[Question], llm: FakeAnthropic) -> tuple[list[float], list[bool]]:
    """Each question once over HTTP (after a warm-up): the latencies (ms) and
    whether its target line reached the LLM's context."""
    post(base, "/v1/gb/query", {"user_id": "bench", "query": "warm up"})
    lat, hits = [], []
    for q in qs:
        t0 = time.perf_counter()
        status, body = post(base, "/v1/gb/query", {"user_id": "bench", "query": q.text})
        lat.append(ms_since(t0))
        if status != 200:
            raise SystemExit(f"query {q.text!r}: {status} {body}")
        hits.append(q.line in str(llm.requests_for("query")[-1]["messages"]))
    return lat, hits


def search_ms(path: Path, key: DatasetKey, dim: int, rounds: int = 20) -> float:
    """One exact search of the edges (k=20) over the cached matrix, median."""
    db = Database(path)
    index = SqliteVectorIndex(db)
    q = vec_of("a question", dim).tolist()
    index.search(key, [SearchRequest("edges", q, 20, 0.5)])  # loads the matrix once
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        index.search(key, [SearchRequest("edges", q, 20, 0.5)])
        times.append((time.perf_counter() - t0) * 1000)
    db.close()
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--dim", type=int, default=384)
    args = ap.parse_args(argv)
    conn = sqlite3.connect(":memory:")
    print(
        "sqlite-vec loadable by this Python:",
        hasattr(conn, "enable_load_extension"),
        f"(SQLite {sqlite3.sqlite_version}); vectors here: float32 BLOBs, numpy exact search",
    )
    key = DatasetKey("bench", "main")  # the dataset of prepare()
    llm, emb = start_fakes(dim=args.dim)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for size in [int(s) for s in args.sizes.split(",")]:
                g, path, build_s, qs = prepare(size, Path(tmp), emb, args.questions, args.dim)
                child, base = serve(path, llm, emb, args.dim)
                try:
                    lat, hits = ask_all(base, qs, llm)
                finally:
                    child.stop()
                by_kind = {k: hits[i :: len(KINDS)] for i, k in enumerate(KINDS)}
                print(
                    f"{size:>7} edges {len(g.entities):>6} entities: build {build_s:6.1f} s, "
                    f"file {path.stat().st_size / 1e6:6.1f} MB, query p50 {pct(lat, 50):6.1f} ms "
                    f"p95 {pct(lat, 95):6.1f} ms, vector search "
                    f"{search_ms(path, key, args.dim):5.2f} ms, hit rate "
                    + " ".join(f"{k} {sum(h)}/{len(h)}" for k, h in by_kind.items()),
                    flush=True,
                )
    finally:
        llm.stop()
        emb.stop()
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
