"""How query scales with the graph: DynamoDB requests, vector-index requests and
the time spent in our own code per question, on graphs of 1k, 10k and 100k
edges.

    .venv/bin/python -m bench.query_scale [--sizes 1000,10000,100000]
        [--questions 200] [--budget-s 150] [--dim 128] [--store memory|dynamodb]

``--store dynamodb``: vectors on the rows, DynamoDB's vector indexes (the vector fake
before moto): every vector request is a DynamoDB request.

Setup. DynamoDB is moto's server on loopback in this process
(``start_moto``), one set of tables per size (moto scans a whole table for
every Query, so sizes must not share tables). Each graph is written directly
through the store (``GraphStore.commit`` in slices of a few hundred rows, the
names table with BatchWriteItem): the graph of bench/harness/synthetic_graph.py
(hubs with hundreds of facts, so the cap of 100 edges around a seed matters). Vectors (entities, edges, chunks, summaries) go to the
embedded ``MemoryVectorIndex``: deterministic pseudo-random unit vectors per
text. No LLM anywhere: the ``LLM`` and ``Embedder`` ports are in-process fakes
that answer at once (the questions are embedded to vectors near the facts and
entities they ask about, so that the similarity path finds them).

Each question is one ``Query(...).run(QueryInput, Meter)``, as the handler
runs it (without the HTTP layer and the call record's save).

Measures, per question:
- DynamoDB requests: ``gligabao.dynamodb.client.REQUESTS`` (a botocore
  ``before-call`` hook: every try of every operation, batch pages included),
  by operation.
- Vector-index requests: ``MemoryVectorIndex.requests`` (round trips).
- Time in our own code = wall time of ``run`` minus the time inside DynamoDB
  round trips, minus the time inside the vector index (in-process here; on AWS
  it is an OpenSearch round trip) and the fake LLM / embedder calls.
  A DynamoDB round trip is timed by botocore event hooks on the shared client:
  from ``before-send`` (the request is serialized and signed, about to go on
  the wire) to ``response-received`` (the reply is read and parsed by
  botocore), per thread. The store runs some queries in parallel threads, so
  the round trips of one question are merged as a union of time intervals
  before being subtracted: what is left is the time the question spent
  outside any request (our use case, the store's pynamodb models and
  conversions, botocore's request building). moto answers from this process,
  so its own work is inside the round trips and never counted as ours; but it
  shares the GIL, so while the store's parallel queries (``--workers``, 8 as
  in production) are in flight, our thread can wait for moto's: "ours" is an
  upper bound (``--workers 1`` gives the sequential figure).

Timings are printed, never asserted. moto is slow on big tables (each Query
sorts the whole table in Python), so each size has a wall-clock budget for its
questions (``--budget-s``): when it runs out, the size reports the questions
it ran.
"""

from __future__ import annotations

import argparse
import logging
import random
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gligabao.ai.port import Embeddings, EmbedKind, LLMReply, LLMRequest
from gligabao.config import Settings
from gligabao.dynamodb import admin, tables
from gligabao.dynamodb.client import REQUESTS
from gligabao.graph.dynamodb.store import DynamoGraphStore, batch_write
from gligabao.local.embedded import start_moto
from gligabao.memory.options import StageOptions
from gligabao.memory.query import Query, QueryInput
from gligabao.models import DatasetKey, GraphWrite
from gligabao.records.meter import Meter
from gligabao.records.model import new_call
from gligabao.text import fact_text, normalize_name
from gligabao.vectors.inprocess import MemoryVectorIndex
from gligabao.vectors.port import GeoHit, Hit, Kind, SearchRequest, VectorItem

from .harness.moto import RoundTrips, speed_up_moto
from .harness.synthetic_graph import Graph, generate, renumber_artifacts
from .harness.tables import table
from .harness.timing import Stopwatch, pct
from .harness.vectors import near, vec_of

SLICE_EDGES = 400  # edges per commit (plus their entities): bounded BatchWriteItem paging


# --- in-process fakes of the ports --------------------------------------------------


class FakeEmbedder:
    """Questions registered with a vector get it; anything else a hashed one."""

    model = "text-embedding-3-small"
    provider = "openai"

    def __init__(self, dim: int, watch: Stopwatch) -> None:
        self.dim = dim
        self.watch = watch
        self.registered: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str], kind: EmbedKind) -> Embeddings:
        t0 = time.perf_counter()
        vecs = [self.registered.get(t, vec_of(t, self.dim)).tolist() for t in texts]
        self.watch.add(t0)
        return Embeddings(vecs, self.model, sum(len(t) // 4 for t in texts))


class FakeLLM:
    """Cites the first entities and edges of the graph it was given."""

    provider = "anthropic"

    def __init__(self, watch: Stopwatch) -> None:
        self.watch = watch

    def complete(self, request: LLMRequest) -> LLMReply:
        t0 = time.perf_counter()
        ents = [int(m) for m in re.findall(r"^\[entity (\d+)\]", request.user, re.M)[:5]]
        edges = [int(m) for m in re.findall(r"^\[edge (\d+)\]", request.user, re.M)[:5]]
        passages = [int(m) for m in re.findall(r"^\[passage (\d+)\]", request.user, re.M)[:2]]
        text = (
            f'{{"answer": "From memory.", "entities": {ents}, "edges": {edges}, '
            f'"passages": {passages}}}'
        )
        self.watch.add(t0)
        return LLMReply(text, request.model, len(request.user) // 4, 20)


class TimedVectors:
    """The embedded index, its time set apart (an OpenSearch round trip on AWS)."""

    def __init__(self, inner: MemoryVectorIndex, watch: Stopwatch) -> None:
        self.inner = inner
        self.watch = watch

    def upsert(self, key: DatasetKey, kind: Kind, items: list[VectorItem]) -> None:
        self.inner.upsert(key, kind, items)

    def search(self, key: DatasetKey, requests: list[SearchRequest]) -> list[list[Hit]]:
        t0 = time.perf_counter()
        try:
            return self.inner.search(key, requests)
        finally:
            self.watch.add(t0)

    def nearby(
        self, key: DatasetKey, lat: float, lon: float, radius_km: float, limit: int
    ) -> list[GeoHit]:
        return self.inner.nearby(key, lat, lon, radius_km, limit)

    def delete_dataset(self, key: DatasetKey) -> None:
        self.inner.delete_dataset(key)

    def count(self, key: DatasetKey, kind: Kind) -> int:
        return self.inner.count(key, kind)



def write_graph(store: DynamoGraphStore, vectors: Any, g: Graph, dim: int) -> None:
    renumber_artifacts(g)
    store.ensure_dataset(g.key)
    store.allocate_ids(g.key, len(g.entities), len(g.edges), len(g.chunks))
    # Vectors: what remember would have stored (names, fact texts, chunks, summaries):
    # upserted into the in-process index, or written by the commits onto the rows.
    chunks = [a for a in g.chunks if a.parent_id is not None]
    facts = [(e, vec_of(fact_text(e.relation, e.description), dim).tolist()) for e in g.edges]
    by_kind: dict[str, list[VectorItem]] = {
        "entities": [VectorItem(e.id, vec_of(e.name, dim).tolist()) for e in g.entities],
        "edges": [VectorItem(e.id, v, live=e.expired_at is None) for e, v in facts],
        "chunks": [VectorItem(a.id, vec_of(a.text + str(a.id), dim).tolist(), text=a.text)
                   for a in chunks],
        "summaries": [VectorItem(a.id, vec_of(a.summary or "", dim).tolist()) for a in chunks],
    }
    if not vectors.inline:
        for kind, items in by_kind.items():
            vectors.upsert(g.key, kind, items)
    ids = {k: {i.id: i for i in items} for k, items in by_kind.items()}

    def of(kind: str, rows: list[Any]) -> list[VectorItem]:
        return [ids[kind][r.id] for r in rows if r.id in ids[kind]] if vectors.inline else []

    # Name claims, as remember makes them (one BatchWriteItem per 25).
    batch_write(
        puts=[tables.NameRow(g.key.pk, normalize_name(e.name), entity_id=e.id) for e in g.entities]
    )
    # Rows, in slices: entities (with their terms), then edges, then artifacts.
    ent_slice = max(1, SLICE_EDGES // 3)
    for i in range(0, len(g.entities), ent_slice):
        part = g.entities[i : i + ent_slice]
        store.commit(g.key, GraphWrite(new_entities=part, vectors={"entities": of("entities", part)}))
    for i in range(0, len(g.edges), SLICE_EDGES):
        edges = g.edges[i : i + SLICE_EDGES]
        store.commit(g.key, GraphWrite(new_edges=edges, vectors={"edges": of("edges", edges)}))
    for i in range(0, len(g.chunks), SLICE_EDGES):
        arts = g.chunks[i : i + SLICE_EDGES]
        vecs = {"chunks": of("chunks", arts), "summaries": of("summaries", arts)}
        store.commit(g.key, GraphWrite(artifacts=arts, vectors=vecs))


# --- the questions ------------------------------------------------------------------


def questions(g: Graph, n: int, rng: random.Random, emb: FakeEmbedder, dim: int) -> list[str]:
    by_id = {e.id: e for e in g.entities}
    live = [e for e in g.edges if e.expired_at is None]
    hubs = Counter(e.target_id for e in live).most_common(5)
    out: list[str] = []
    for i in range(n):
        kind = i % 8
        if kind == 0:
            q = f"Where does {by_id[rng.choice(g.people)].name} work?"
        elif kind == 1:
            q = f"What do you know about {by_id[rng.choice(g.orgs)].name}?"
        elif kind == 2:  # a hub: hundreds of facts around the seed
            q = f"Who lives in {by_id[hubs[i % len(hubs)][0]].name}?"
        elif kind == 3:  # two people
            a, b = rng.sample(g.people, 2)
            q = f"Do {by_id[a].name} and {by_id[b].name} know each other?"
        elif kind == 4:  # paraphrase: no keyword, the vector of a fact
            e = rng.choice(live)
            q = f"Tell me about that fact number {i}"
            emb.registered[q] = near(vec_of(fact_text(e.relation, e.description), dim), q, 0.85)
        elif kind == 5:  # an alias: no keyword, the vector of an entity
            e2 = by_id[rng.choice(g.people)]
            q = f"Who was the person I mentioned, number {i}?"
            emb.registered[q] = near(vec_of(e2.name, dim), q, 0.8)
        elif kind == 6:  # a long-text passage
            chunk = rng.choice([a for a in g.chunks if a.parent_id is not None])
            q = f"What did my notes say, number {i}?"
            emb.registered[q] = near(vec_of(chunk.summary or "", dim), q, 0.82)
        else:  # vague: the recent-entities fallback
            q = rng.choice(["What do you know?", "Anything new?", "Tell me something."])
        out.append(q)
    return out


# --- the run --------------------------------------------------------------------------


@dataclass
class SizeResult:
    edges: int
    entities: int
    build_s: float
    asked: int = 0
    dynamo: list[int] = field(default_factory=list)
    by_op: Counter[str] = field(default_factory=Counter)
    vector_reqs: list[int] = field(default_factory=list)
    total_ms: list[float] = field(default_factory=list)
    dynamo_ms: list[float] = field(default_factory=list)
    ours_ms: list[float] = field(default_factory=list)
    note: str = ""


def run_size(
    url: str,
    n_edges: int,
    n_questions: int,
    budget_s: float,
    dim: int,
    workers: int,
    rt: RoundTrips,
    store_kind: str = "memory",
) -> SizeResult:
    admin.configure_tables(f"bench{n_edges}_", url, "us-east-1")
    admin.create_tables()
    dynamo = store_kind == "dynamodb"
    if dynamo:
        admin.create_vector_indexes(dim)
    # the fake before moto is slow: a slice of hundreds of rows outlasts a 60 s lease
    store = DynamoGraphStore(max_workers=workers, vectors=dynamo, lease_s=900 if dynamo else 60)
    client = tables.EntityRow._get_connection().connection.client
    rt.attach(client)
    index: Any = MemoryVectorIndex()
    if dynamo:
        from gligabao.vectors.dynamodb.index import DynamoVectorIndex

        names = {m.short_name: m.Meta.table_name for m in tables.ALL_MODELS}  # type: ignore[attr-defined]
        index = DynamoVectorIndex(client, names, dim)
    rng = random.Random(n_edges)
    key = DatasetKey("bench", f"edges{n_edges}")
    t0 = time.perf_counter()
    g = generate(key, n_edges, rng)
    write_graph(store, index, g, dim)
    build_s = time.perf_counter() - t0
    res = SizeResult(n_edges, len(g.entities), build_s)
    print(
        f"  built {len(g.entities)} entities, {len(g.edges)} edges in {build_s:.0f} s", flush=True
    )

    vec_watch, ai_watch = Stopwatch(), Stopwatch()
    emb = FakeEmbedder(dim, ai_watch)
    llm = FakeLLM(ai_watch)
    settings = Settings(anthropic_api_key="fake", openai_api_key="fake")
    # On DynamoDB the vector requests are DynamoDB round trips (timed as such).
    vectors = index if dynamo else TimedVectors(index, vec_watch)
    query = Query(store, vectors, settings)
    qs = questions(g, n_questions, rng, emb, dim)
    started = time.perf_counter()
    for i, q in enumerate(qs):
        if time.perf_counter() - started > budget_s:
            res.note = f"budget of {budget_s:.0f} s ran out after {i} questions"
            break
        call = new_call(f"bench-{i}", "query", key.user_id, key.dataset, None)
        meter = Meter(call, llm, emb, settings.prices)
        inp = QueryInput(key.user_id, key.dataset, q, None, StageOptions(settings.llm_model))
        before_ops = REQUESTS.snapshot()
        before_vec = index.requests
        vec_watch.seconds = ai_watch.seconds = 0.0
        rt.reset()
        t_start = time.perf_counter()
        query.run(inp, meter)
        total = time.perf_counter() - t_start
        dyn = rt.union_seconds()
        after_ops = REQUESTS.snapshot()
        ops = Counter({k: after_ops.get(k, 0) - before_ops.get(k, 0) for k in after_ops})
        res.by_op.update(ops)
        res.dynamo.append(sum(ops.values()))
        res.vector_reqs.append(index.requests - before_vec)
        res.total_ms.append(total * 1000)
        res.dynamo_ms.append(dyn * 1000)
        res.ours_ms.append((total - dyn - vec_watch.seconds - ai_watch.seconds) * 1000)
        res.asked = i + 1
    store.close()
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--budget-s", type=float, default=150.0, help="question time per size")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--workers", type=int, default=8, help="the store's parallel queries")
    ap.add_argument("--plain-moto", action="store_true", help="without speed_up_moto")
    ap.add_argument("--store", choices=["memory", "dynamodb"], default="memory")
    args = ap.parse_args(argv)
    logging.disable(logging.WARNING)  # moto's request log
    if not args.plain_moto:
        speed_up_moto()
    server, url = start_moto()
    fake: Any = None
    if args.store == "dynamodb":
        from tests.fakes.dynamodb_vectors import FakeDynamoVectors

        fake = FakeDynamoVectors(url).start()
        url = fake.url
    rt = RoundTrips()
    results: list[SizeResult] = []
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            print(f"size {size} edges:", flush=True)
            results.append(
                run_size(
                    url, size, args.questions, args.budget_s, args.dim, args.workers, rt, args.store
                )
            )
            r = results[-1]
            print(f"  asked {r.asked} questions {r.note}", flush=True)
    finally:
        if fake is not None:
            fake.stop()
        server.stop()

    header = ["edges", "entities", "build s", "asked", "ddb req/q", "max", "vec req/q",
              "total p50", "p95", "ddb p50", "ours p50", "p95"]  # fmt: skip
    rows = [
        [r.edges, r.entities, f"{r.build_s:.0f}", r.asked, f"{statistics.mean(r.dynamo):.1f}",
         max(r.dynamo), f"{statistics.mean(r.vector_reqs):.1f}", f"{pct(r.total_ms, 50):.1f}ms",
         f"{pct(r.total_ms, 95):.1f}ms", f"{pct(r.dynamo_ms, 50):.1f}ms",
         f"{pct(r.ours_ms, 50):.1f}ms", f"{pct(r.ours_ms, 95):.1f}ms"]
        for r in results if r.asked
    ]  # fmt: skip
    print()
    print(table(header, rows))
    print(
        "\nddb req/q: DynamoDB requests per question, mean (max: the most one question sent);"
        "\nvec req/q: vector-index round trips; total: wall time of Query.run; ddb: the"
        "\nDynamoDB round trips (union of intervals); ours: total - ddb - vector index -"
        "\nfake LLM/embedder (see the module docstring)."
    )
    print()
    for r in results:
        per_op = ", ".join(
            f"{op} {n / max(1, r.asked):.1f}" for op, n in sorted(r.by_op.items()) if n
        )
        print(f"{r.edges:>7} edges, DynamoDB requests per question by operation: {per_op}")
        if r.note:
            print(f"        {r.note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
