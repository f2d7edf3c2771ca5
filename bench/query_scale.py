"""How query scales with the graph: DynamoDB requests, vector-index requests and
the time spent in our own code per question, on graphs of 1k, 10k and 100k
edges.

    .venv/bin/python bench/query_scale.py [--sizes 1000,10000,100000]
        [--questions 200] [--budget-s 150] [--dim 128]

Setup. DynamoDB is moto's server on loopback in this process
(``start_moto``), one set of tables per size (moto scans a whole table for
every Query, so sizes must not share tables). Each graph is written directly
through the store (``GraphStore.commit`` in slices of a few hundred rows, the
names table with BatchWriteItem): entities ~ edges/3 with names from
generated word lists (people, organizations, places), edges between them with
a skew (a few hubs have hundreds of facts, so the cap of 100 edges around a
seed matters), 10% of the facts ended and 10% superseded, and one long text
chunked per 100 edges. Vectors (entities, edges, chunks, summaries) go to the
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
import bisect
import logging
import random
import re
import statistics
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from query_scale_vectors import near, vec_of

from gligabao.ai.port import Embeddings, EmbedKind, LLMReply, LLMRequest
from gligabao.config import Settings
from gligabao.dynamodb import admin, tables
from gligabao.dynamodb.client import REQUESTS
from gligabao.graph.dynamodb.store import DynamoGraphStore, batch_write
from gligabao.local.embedded import start_moto
from gligabao.memory.options import StageOptions
from gligabao.memory.query import Query, QueryInput
from gligabao.models import Artifact, DatasetKey, Edge, Entity, GraphWrite
from gligabao.records.meter import Meter
from gligabao.records.model import new_call
from gligabao.text import fact_text, normalize_name
from gligabao.vectors.inprocess import MemoryVectorIndex
from gligabao.vectors.port import GeoHit, Hit, Kind, SearchRequest, VectorItem

SLICE_EDGES = 400  # edges per commit (plus their entities): bounded BatchWriteItem paging

FIRST = (
    "Alice Bob Carol David Emma Farid Grace Hugo Ines Jonas Kenji Lena Marco Nadia Omar "
    "Priya Quentin Rosa Samir Tara Ugo Vera Wei Ximena Yusuf Zoe Aaron Bianca Chen Dmitri "
    "Elena Felix Giulia Hana Ivan Julia Karim Laura Mateo Nina Oscar Paula Rafael Sofia "
    "Tomas Uma Viktor Wanda Yara Zeno"
).split()
LAST = (
    "Smith Garcia Müller Rossi Tanaka Kowalski Dubois Silva Novak Jensen Okafor Haddad "
    "Ivanova Moreau Santos Becker Conti Lindqvist Nguyen Park Kaur Singh Ahmed Costa Fischer "
    "Romano Schmidt Petrov Laurent Martins Weber Ricci Berg Kim Li Ali Hassan Torres Ortiz "
    "Klein Wolf Marino Sato Suzuki Meyer Fontaine Lopez Reyes Cruz"
).split()
ORG_A = (
    "Blue Red Green Silver Golden North South Bright Quantum Atlas Nova Summit Pioneer "
    "Harbor Cedar Granite Swift Vertex Orbit Lumen"
).split()
ORG_B = (
    "River Peak Bridge Forge Field Stone Wave Cloud Leaf Spark Path Gate Point Crest "
    "Works Grove Bay Ridge Lake Harbor"
).split()
ORG_C = "Labs Systems Group Partners Foods Motors Health Logistics Studio Capital".split()
PLACE_A = "New Old North South East West Port Saint Upper Lower Great Little".split()
PLACE_B = (
    "Ashford Brookfield Carlton Dunmore Elmwood Fairhaven Glenrock Hillcrest Ivydale "
    "Kingsbridge Lakeside Marlow Northgate Oakridge Pinecrest Queensbury Riverton "
    "Stonebury Thornhill Westwood"
).split()
TOPICS = "chess sailing jazz painting robotics cycling poetry gardening climbing astronomy".split()
ROLES = "engineer designer doctor teacher lawyer chef analyst nurse writer manager".split()


# --- in-process fakes of the ports --------------------------------------------------


@dataclass
class Stopwatch:
    seconds: float = 0.0

    def add(self, t0: float) -> None:
        self.seconds += time.perf_counter() - t0


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


class RoundTrips:
    """DynamoDB round-trip intervals, from botocore's before-send to
    response-received on the same thread."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self.intervals: list[tuple[float, float]] = []
        self._clients: set[int] = set()

    def attach(self, client: Any) -> None:
        if id(client) in self._clients:
            return
        self._clients.add(id(client))
        client.meta.events.register("before-send.dynamodb", self._start, unique_id="bench-rt-s")
        client.meta.events.register("response-received.dynamodb", self._end, unique_id="bench-rt-e")

    def _start(self, **kwargs: Any) -> None:
        self._local.t0 = time.perf_counter()

    def _end(self, **kwargs: Any) -> None:
        t0 = getattr(self._local, "t0", None)
        if t0 is not None:
            with self._lock:
                self.intervals.append((t0, time.perf_counter()))
            self._local.t0 = None

    def reset(self) -> None:
        with self._lock:
            self.intervals = []

    def union_seconds(self) -> float:
        with self._lock:
            spans = sorted(self.intervals)
        total = 0.0
        cur_s: float | None = None
        cur_e = 0.0
        for s, e in spans:
            if cur_s is None or s > cur_e:
                if cur_s is not None:
                    total += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        if cur_s is not None:
            total += cur_e - cur_s
        return total


# --- moto, indexed ------------------------------------------------------------------


def speed_up_moto() -> None:
    """moto answers every Query by sorting the whole table (DynamoType
    comparisons in Python): seconds per request on a table of 10k rows, so
    200 questions on 100k edges would take hours. This indexes each table's
    partitions once (a sorted list per hash value, per table and GSI, dropped
    at any write) and answers the two Query shapes the store sends (a hash
    key, optionally ``begins_with`` on the range key; forward or backward;
    a limit) from it; anything else goes to moto's own code. It changes how
    long moto takes, not what is asked of it: the requests counted and the
    time outside the round trips are the same."""
    import copy
    from collections import defaultdict

    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    original_query = Table.query
    original_put = Table.put_item
    original_delete = Table.delete_item
    original_update = DynamoDBBackend.update_item

    def invalidate(table: Any) -> None:
        table.__dict__.pop("_bench_parts", None)

    def put_item(self: Any, *args: Any, **kwargs: Any) -> Any:
        invalidate(self)
        return original_put(self, *args, **kwargs)

    def delete_item(self: Any, *args: Any, **kwargs: Any) -> Any:
        invalidate(self)
        return original_delete(self, *args, **kwargs)

    def update_item(self: Any, table_name: str, *args: Any, **kwargs: Any) -> Any:
        invalidate(self.get_table(table_name))
        return original_update(self, table_name, *args, **kwargs)

    def parts(table: Any, index_name: str | None) -> dict[Any, list[tuple[Any, Any]]]:
        cache = table.__dict__.setdefault("_bench_parts", {})
        if index_name not in cache:
            if index_name:
                schema = table.get_index(index_name).schema
                hash_attr = next(k["AttributeName"] for k in schema if k["KeyType"] == "HASH")
                range_attr = next(
                    (k["AttributeName"] for k in schema if k["KeyType"] == "RANGE"), None
                )
            else:
                hash_attr, range_attr = table.hash_key_attr, table.range_key_attr
            out: dict[Any, list[tuple[Any, Any]]] = defaultdict(list)
            for hash_set in table.items.values():
                rows = hash_set.values() if table.range_key_attr else [hash_set]
                for item in rows:
                    h = item.attrs.get(hash_attr)
                    r = item.attrs.get(range_attr) if range_attr else None
                    if h is None or (range_attr and r is None):
                        continue  # a sparse GSI leaves the item out
                    out[h.cast_value].append((r.cast_value if r is not None else 0, item))
            for rows_ in out.values():
                rows_.sort(key=lambda p: p[0])
            cache[index_name] = out
        return dict(cache[index_name])

    def query(
        self: Any,
        hash_key: Any,
        range_comparison: str | None,
        range_objs: list[Any],
        limit: int,
        exclusive_start_key: Any,
        scan_index_forward: bool,
        projection_expressions: Any,
        index_name: str | None = None,
        consistent_read: bool = False,
        filter_expression: Any = None,
        hash_key_conditions: Any = None,
        range_key_conditions: Any = None,
        **filter_kwargs: Any,
    ) -> Any:
        simple = (
            not exclusive_start_key
            and not filter_kwargs
            and not projection_expressions
            and len(hash_key_conditions or [None]) == 1
            and len(range_key_conditions or []) <= 1
            and (range_comparison is None or range_comparison.lower() == "begins_with")
        )
        if not simple:
            return original_query(
                self,
                hash_key,
                range_comparison,
                range_objs,
                limit,
                exclusive_start_key,
                scan_index_forward,
                projection_expressions,
                index_name,
                consistent_read,
                filter_expression,
                hash_key_conditions=hash_key_conditions,
                range_key_conditions=range_key_conditions,
                **filter_kwargs,
            )
        hv = hash_key if hash_key is not None else hash_key_conditions[0][1]
        rows = parts(self, index_name).get(hv.cast_value, [])
        if range_comparison is not None:  # begins_with: a slice of the sorted partition
            prefix = range_objs[0].cast_value
            lo = bisect.bisect_left(rows, prefix, key=lambda p: p[0])
            hi = bisect.bisect_left(rows, prefix + "\U0010ffff", key=lambda p: p[0])
            rows = rows[lo:hi]
        if not scan_index_forward:
            rows = rows[::-1]
        more = limit is not None and len(rows) > limit
        picked = [item for _, item in (rows[:limit] if limit is not None else rows)]
        results = copy.deepcopy(picked)
        if index_name:
            index = self.get_index(index_name)
            results = [index.project(r) for r in results]
        if filter_expression is not None:  # after the limit, as DynamoDB (and moto) do
            results = [r for r in results if filter_expression.expr(r)]
        last = self._get_last_evaluated_key(picked[-1], index_name) if more and picked else None
        return results, len(results), last

    Table.query = query  # type: ignore[method-assign]
    Table.put_item = put_item  # type: ignore[method-assign]
    Table.delete_item = delete_item  # type: ignore[method-assign]
    DynamoDBBackend.update_item = update_item  # type: ignore[method-assign]


# --- the graphs ---------------------------------------------------------------------


@dataclass
class Graph:
    key: DatasetKey
    entities: list[Entity] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    chunks: list[Artifact] = field(default_factory=list)
    people: list[int] = field(default_factory=list)
    orgs: list[int] = field(default_factory=list)
    places: list[int] = field(default_factory=list)


def ts(minutes: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_600_000_000 + minutes * 60))


def generate(key: DatasetKey, n_edges: int, rng: random.Random) -> Graph:
    g = Graph(key)
    n_ent = max(30, n_edges // 3)
    names: set[str] = set()

    def unique(*makers: Any) -> str:
        """The first new name from the makers, simplest first (a maker is
        tried 20 times before the next, richer one)."""
        for make in makers:
            for _ in range(20):
                name = str(make())
                if normalize_name(name) not in names:
                    names.add(normalize_name(name))
                    return name
        raise RuntimeError("name space exhausted")

    def pick(words: list[str]) -> str:
        return rng.choice(words)

    for i in range(n_ent):
        eid = i + 1
        r = i % 10
        if r < 6:
            name = unique(
                lambda: f"{pick(FIRST)} {pick(LAST)}",
                lambda: f"{pick(FIRST)} {pick(LAST)}-{pick(LAST)}",
                lambda: f"{pick(FIRST)} {pick(FIRST)} {pick(LAST)}-{pick(LAST)}",
            )
            e = Entity(eid, name, "person", f"{pick(ROLES)} who likes {pick(TOPICS)}")
            g.people.append(eid)
        elif r < 8:
            name = unique(
                lambda: f"{pick(ORG_A)} {pick(ORG_B)} {pick(ORG_C)}",
                lambda: f"{pick(ORG_A)} {pick(ORG_B)} {pick(ORG_C)} {rng.randint(2, 9999)}",
            )
            e = Entity(eid, name, "organization", f"a {pick(ORG_C).lower()} company")
            g.orgs.append(eid)
        else:
            name = unique(
                lambda: f"{pick(PLACE_A)} {pick(PLACE_B)}",
                lambda: f"{pick(PLACE_A)} {pick(PLACE_B)} {pick(ORG_B)}",
                lambda: f"{pick(PLACE_B)} {pick(ORG_B)} {rng.randint(2, 9999)}",
            )
            e = Entity(eid, name, "place", "a town")
            g.places.append(eid)
        e.created_at = e.updated_at = ts(i)
        g.entities.append(e)

    def skewed(ids: list[int]) -> int:
        # A few hubs get most of the facts (Pareto-ish).
        return ids[min(len(ids) - 1, int(rng.paretovariate(1.2)) - 1)]

    by_id = {e.id: e for e in g.entities}
    for j in range(n_edges):
        eid = j + 1
        kind = rng.random()
        src = rng.choice(g.people)
        if kind < 0.4:
            dst, rel = skewed(g.orgs), "works_at"
        elif kind < 0.7:
            dst, rel = skewed(g.places), "lives_in"
        elif kind < 0.9:
            dst, rel = rng.choice(g.people), "knows"
        else:
            src, dst, rel = rng.choice(g.orgs), skewed(g.places), "located_in"
        if dst == src:
            dst = g.entities[(src % len(g.entities))].id
        desc = f"{by_id[src].name} {rel.replace('_', ' ')} {by_id[dst].name}."
        edge = Edge(eid, src, dst, rel, desc, None, ts(n_ent + j), None, ts(n_ent + j), None)
        fate = rng.random()
        if fate < 0.1:
            edge.invalid_at = ts(n_ent + j + 10)
        elif fate < 0.2:
            edge.invalid_at = ts(n_ent + j + 10)
            edge.expired_at = ts(n_ent + j + 20)
        g.edges.append(edge)

    # One long text per 500 edges, in five chunks (IDs set by renumber_artifacts).
    for c in range(max(1, n_edges // 100)):
        if c % 5 == 0:
            g.chunks.append(Artifact(0, "(the whole text)", ts(0), ts(0)))
        person = by_id[rng.choice(g.people)]
        text = f"Notes about {person.name}: {person.description}. " * 20
        summary = f"{person.name} is a {person.description}."
        g.chunks.append(Artifact(0, text, ts(0), ts(0), parent_id=0, index=c % 5, summary=summary))
    return g


def renumber_artifacts(g: Graph) -> None:
    """Parents first in each group of five chunks; parent_id points at them."""
    parent: int | None = None
    for i, a in enumerate(g.chunks):
        a.id = i + 1
        if a.parent_id is None:
            parent = a.id
        else:
            a.parent_id = parent


def write_graph(store: DynamoGraphStore, vectors: MemoryVectorIndex, g: Graph, dim: int) -> None:
    renumber_artifacts(g)
    store.ensure_dataset(g.key)
    store.allocate_ids(g.key, len(g.entities), len(g.edges), len(g.chunks))
    # Vectors: what remember would have stored (names, fact texts, chunks, summaries).
    vectors.upsert(
        g.key, "entities", [VectorItem(e.id, vec_of(e.name, dim).tolist()) for e in g.entities]
    )
    vectors.upsert(
        g.key,
        "edges",
        [
            VectorItem(e.id, vec_of(fact_text(e.relation, e.description), dim).tolist())
            for e in g.edges
        ],
    )
    chunks = [a for a in g.chunks if a.parent_id is not None]
    vectors.upsert(
        g.key,
        "chunks",
        [VectorItem(a.id, vec_of(a.text + str(a.id), dim).tolist()) for a in chunks],
    )
    vectors.upsert(
        g.key,
        "summaries",
        [VectorItem(a.id, vec_of(a.summary or "", dim).tolist()) for a in chunks],
    )
    # Name claims, as remember makes them (one BatchWriteItem per 25).
    batch_write(
        puts=[tables.NameRow(g.key.pk, normalize_name(e.name), entity_id=e.id) for e in g.entities]
    )
    # Rows, in slices: entities (with their terms), then edges, then artifacts.
    ent_slice = max(1, SLICE_EDGES // 3)
    for i in range(0, len(g.entities), ent_slice):
        store.commit(g.key, GraphWrite(new_entities=g.entities[i : i + ent_slice]))
    for i in range(0, len(g.edges), SLICE_EDGES):
        store.commit(g.key, GraphWrite(new_edges=g.edges[i : i + SLICE_EDGES]))
    for i in range(0, len(g.chunks), SLICE_EDGES):
        store.commit(g.key, GraphWrite(artifacts=g.chunks[i : i + SLICE_EDGES]))


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


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


def run_size(
    url: str,
    n_edges: int,
    n_questions: int,
    budget_s: float,
    dim: int,
    workers: int,
    rt: RoundTrips,
) -> SizeResult:
    admin.configure_tables(f"bench{n_edges}_", url, "us-east-1")
    admin.create_tables()
    store = DynamoGraphStore(max_workers=workers)
    rt.attach(tables.EntityRow._get_connection().connection.client)
    index = MemoryVectorIndex()
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
    query = Query(store, TimedVectors(index, vec_watch), settings)  # type: ignore[arg-type]
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
    args = ap.parse_args(argv)
    logging.disable(logging.WARNING)  # moto's request log
    if not args.plain_moto:
        speed_up_moto()
    server, url = start_moto()
    rt = RoundTrips()
    results: list[SizeResult] = []
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            print(f"size {size} edges:", flush=True)
            results.append(
                run_size(url, size, args.questions, args.budget_s, args.dim, args.workers, rt)
            )
            r = results[-1]
            print(f"  asked {r.asked} questions {r.note}", flush=True)
    finally:
        server.stop()

    print()
    head = (
        f"{'edges':>7} {'entities':>8} {'build s':>7} {'asked':>5} {'ddb req/q':>9} "
        f"{'max':>4} {'vec req/q':>9} {'total p50':>9} {'p95':>7} {'ddb p50':>7} "
        f"{'ours p50':>8} {'p95':>7}"
    )
    print(head)
    for r in results:
        print(
            f"{r.edges:>7} {r.entities:>8} {r.build_s:>7.0f} {r.asked:>5} "
            f"{statistics.mean(r.dynamo):>9.1f} {max(r.dynamo):>4} "
            f"{statistics.mean(r.vector_reqs):>9.1f} "
            f"{pct(r.total_ms, 50):>7.1f}ms {pct(r.total_ms, 95):>5.1f}ms "
            f"{pct(r.dynamo_ms, 50):>5.1f}ms "
            f"{pct(r.ours_ms, 50):>6.1f}ms {pct(r.ours_ms, 95):>5.1f}ms"
        )
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
