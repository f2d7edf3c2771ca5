"""The cost of a retention sweep (memory/retention.py) on the local store:
one dataset of ``--texts`` texts (100k by default), each stating one fact
between two of a few hundred entities, ``--due`` of them past their
``expires_at``; then one sweep forgets those.

    nice -n 10 .venv/bin/python -m bench.retention [--texts 100000] [--due 100]

Setup: a fresh SQLite file in a temporary directory, the rows written
straight through ``GraphStore.commit`` in blocks (no LLM, no embedder:
random 64-dimension vectors). Prints the time of the due list's read at that
size, the sweep's total and its time per forgotten text, and what the forget
restores/removes. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from gligabao.graph.sqlite.store import SqliteGraphStore
from gligabao.memory.retention import sweep
from gligabao.models import Artifact, DatasetKey, Edge, Entity, GraphWrite, VectorItem
from gligabao.sqlite.db import Database
from gligabao.vectors.sqlite.store import SqliteVectorIndex

KEY = DatasetKey("bench", "main")
NOW = "2030-01-01T00:00:00Z"
PAST, FUTURE = "2029-01-01T00:00:00Z", "2031-01-01T00:00:00Z"
BLOCK = 5000
ENTITIES = 300


def _vec(rng: random.Random, dim: int = 64) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(dim)]


def build(graph: SqliteGraphStore, vectors: SqliteVectorIndex, texts: int, due: int) -> None:
    rng = random.Random(7)
    graph.ensure_dataset(KEY)
    first_ent, _, _ = graph.allocate_ids(KEY, ENTITIES, 0, 0)
    ents = [Entity(first_ent + i, f"entity {i}", "thing", created_at=PAST) for i in range(ENTITIES)]
    graph.commit(KEY, GraphWrite(now=PAST, new_entities=ents))
    due_ids = set(rng.sample(range(texts), due))
    for start in range(0, texts, BLOCK):
        n = min(BLOCK, texts - start)
        _, first_edge, first_art = graph.allocate_ids(KEY, 0, n, n)
        w = GraphWrite(now=PAST)
        for i in range(n):
            aid, eid = first_art + i, first_edge + i
            w.artifacts.append(Artifact(aid, f"text {start + i}", PAST, PAST))
            a, b = rng.sample(ents, 2)
            w.new_edges.append(Edge(eid, a.id, b.id, f"r{(start + i) % 50}", "", aid, PAST))
            w.edge_links.append((eid, aid))
            w.entity_links += [(a.id, aid), (b.id, aid)]
            w.expiries.append((aid, PAST if start + i in due_ids else FUTURE))
        vectors.upsert(
            KEY, "chunks", [VectorItem(a.id, _vec(rng), text=a.text) for a in w.artifacts]
        )
        vectors.upsert(KEY, "edges", [VectorItem(e.id, _vec(rng)) for e in w.new_edges])
        graph.commit(KEY, w)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--texts", type=int, default=100_000)
    ap.add_argument("--due", type=int, default=100)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "bench.db")
        graph, vectors = SqliteGraphStore(db), SqliteVectorIndex(db)
        t0 = time.perf_counter()
        build(graph, vectors, args.texts, args.due)
        built = time.perf_counter() - t0
        t0 = time.perf_counter()
        listed = graph.due_expiries(NOW, 100)
        read_ms = (time.perf_counter() - t0) * 1000
        in_vectors = [0.0]
        delete = vectors.delete

        def timed(*a: Any, **kw: Any) -> int:  # the vector index's share of a forget
            t = time.perf_counter()
            try:
                return delete(*a, **kw)
            finally:
                in_vectors[0] += time.perf_counter() - t

        vectors.delete = timed  # type: ignore[method-assign]
        t0 = time.perf_counter()
        done = sweep(graph, vectors, NOW)
        swept = time.perf_counter() - t0
        left = graph.get_dataset(KEY)
        db.close()
    per = swept / max(done["forgotten"], 1) * 1000
    print(f"texts {args.texts}, due {args.due} (built in {built:.1f} s)")
    print(f"due list, one read of {len(listed)}: {read_ms:.2f} ms")
    print(f"sweep: {done} in {swept:.2f} s: {per:.2f} ms per forgotten text")
    share = in_vectors[0] / max(done["forgotten"], 1) * 1000
    print(f"  of which the vector index's deletes (vectors, passage words): {share:.2f} ms")
    if left is not None:
        print(f"left: {left.artifacts} texts, {left.edges} edges, {left.entities} entities")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
