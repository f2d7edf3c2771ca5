"""Load test of the local server: concurrent remembers and queries for a
bounded time, then a consistency check of what the store holds.

Everything runs in this process and on 127.0.0.1 only: moto's DynamoDB, the
fake Anthropic (tests/fakes; its `extract` reply is derived from the text, its
`query` reply is fixed), the fake OpenAI embeddings, and the local server's
real HTTP stack (the Lambda handlers), exactly as tests/conftest.py starts it.

    .venv/bin/python bench/load.py [--seconds 60] [--clients 20]

The clients write texts such as "Person07 works at Org3. Person07 lives in
City2." into a few datasets of a few users, from small pools of names, so that
concurrent calls keep naming the same entities; some remembers carry an
Idempotency-Key and are sent again. Afterwards, read back through the graph
store:

* every acknowledged remember is there: its artifact (with its text), its
  entities (by ID, with their names), its edges (by ID, same endpoints and
  relation, still live) and their provenance links to the artifact;
* no entity is duplicated: normalized names are unique per dataset, and each
  is claimed by its entity;
* no ID is reused: an artifact ID is acknowledged once, an entity ID always
  names the same entity, an edge ID the same fact; a replayed key returns the
  first response; the datasets' counters match their rows.

Prints throughput, error rate and latency percentiles; exits 1 when a check
fails or a request errs.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import re
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the fakes
sys.path.insert(0, str(ROOT / "shared"))

HOST = "127.0.0.1"
USERS = ("load-u1", "load-u2", "load-u3")
DATASETS = ("main", "team")
PEOPLE = [f"Person{i:02d}" for i in range(40)]
ORGS = [f"Org{i}" for i in range(8)]
CITIES = [f"City{i}" for i in range(8)]
QUESTIONS = [
    "Where does {p} work?",
    "Where does {p} live?",
    "Who works at {o}?",
    "What do you know?",
]
QUERY_SHARE = 0.3
IDEMPOTENT_SHARE = 0.1
EMBED_DIM = 64

# "Person07 works at Org3." / "Person07 lives in City2."
SENTENCE = re.compile(r"\b(Person\d+) (works at|lives in) ((?:Org|City)\d+)\.")
TEXT_BLOCK = re.compile(r"<text>\n(.*)\n</text>", re.S)


# --- the fake LLM's extract reply ---------------------------------------------------


def extract_reply(body: dict[str, Any]) -> dict[str, Any]:
    """Entities and facts read off the text of an `extract` request."""
    content = body["messages"][0]["content"]
    prompt = content if isinstance(content, str) else "".join(b["text"] for b in content)
    m = TEXT_BLOCK.search(prompt)
    text = m.group(1) if m else ""
    entities: dict[str, dict[str, str]] = {}
    edges: list[dict[str, Any]] = []
    for person, verb, place in SENTENCE.findall(text):
        kind = "organization" if place.startswith("Org") else "city"
        entities.setdefault(person, {"name": person, "type": "person", "description": ""})
        entities.setdefault(place, {"name": place, "type": kind, "description": ""})
        relation = "works_at" if verb == "works at" else "lives_in"
        edges.append(
            {
                "source": person,
                "target": place,
                "relation": relation,
                "description": f"{person} {verb} {place}.",
            }
        )
    return {"entities": list(entities.values()), "edges": edges}


# --- the environment ------------------------------------------------------------------


@dataclass
class Env:
    base: str
    stop: Any


def start_fakes() -> tuple[Any, Any]:
    """The fake Anthropic (extract replies read off the text) and OpenAI."""
    from fakes.anthropic_server import FakeAnthropic
    from fakes.openai_server import FakeOpenAI

    llm = FakeAnthropic().start()
    emb = FakeOpenAI(dim=EMBED_DIM).start()
    llm.default("extract", extract_reply)
    llm.default(
        "query", {"answer": "They work there.", "entities": [], "edges": [], "passages": []}
    )
    return llm, emb


# Nothing may point outside this machine's loopback.
FOREIGN_ENV = (
    "GB_OPENSEARCH_URL",
    "GB_ANTHROPIC_SECRET",
    "GB_OPENAI_SECRET",
    "GB_DEV_API_KEY",
    "GB_REQUIRE_AUTH",
    "GB_GEO",
    "GB_EMBEDDER",
    "GB_EMBEDDING_PROVIDER",
    "GB_LLM_PROVIDER",
    "GB_EMBEDDING_MODEL",
)


def server_env(moto_url: str, llm: Any, emb: Any) -> dict[str, str]:
    """The variables that point the server at moto and the fakes."""
    for url in (moto_url, llm.url, emb.url):
        assert url.startswith(f"http://{HOST}:"), url
    return {
        "GB_DYNAMODB_ENDPOINT": moto_url,
        "GB_TABLE_PREFIX": f"load{uuid.uuid4().hex[:8]}_",
        "ANTHROPIC_API_KEY": "load-anthropic-key",
        "ANTHROPIC_BASE_URL": llm.url,
        "OPENAI_API_KEY": "load-openai-key",
        "OPENAI_BASE_URL": emb.base_url,
        "GB_EMBEDDING_DIMENSION": str(EMBED_DIM),
        "POWERTOOLS_METRICS_NAMESPACE": "gligabao-load",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }


def use_env(env: dict[str, str]) -> None:
    """Point this process (the server thread, the checks) at `env` only."""
    from gligabao import wiring

    for name in FOREIGN_ENV:
        os.environ.pop(name, None)
    os.environ.update(env)
    wiring.reset()


def start() -> Env:
    """moto, the fakes and the local server, all on loopback."""
    from gligabao import wiring
    from gligabao.local.embedded import create_tables, start_moto
    from gligabao.local.server import make_server

    moto, moto_url = start_moto()
    llm, emb = start_fakes()
    use_env(server_env(moto_url, llm, emb))
    create_tables()
    server = make_server(HOST, 0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        llm.stop()
        emb.stop()
        moto.stop()
        wiring.reset()

    return Env(f"http://{HOST}:{server.server_address[1]}", stop)


# --- the clients -------------------------------------------------------------------------


@dataclass
class Result:
    kind: str  # "remember", "replay", "query"
    status: int
    ms: float
    user: str
    dataset: str
    text: str = ""
    body: Any = None
    key: str | None = None


@dataclass
class Stats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    results: list[Result] = field(default_factory=list)

    def add(self, r: Result) -> None:
        with self.lock:
            self.results.append(r)


def post(
    base: str, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    assert base.startswith(f"http://{HOST}:")
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        payload = err.read()
        try:
            return err.code, json.loads(payload or b"null")
        except ValueError:
            return err.code, payload.decode(errors="replace")
    except OSError as exc:  # connection refused / reset / timeout
        return 0, f"{type(exc).__name__}: {exc}"


def make_text(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(1, 3)):
        p = rng.choice(PEOPLE)
        if rng.random() < 0.5:
            sentences.append(f"{p} works at {rng.choice(ORGS)}.")
        else:
            sentences.append(f"{p} lives in {rng.choice(CITIES)}.")
    return " ".join(sentences)


REFUSED_PAUSE_S = 0.2  # after a connection error: the server is (re)starting


def client(
    base: str, deadline: float, seed: int, stats: Stats, max_requests: int | None = None
) -> None:
    """Sends until the deadline, or until the run has sent `max_requests`."""
    rng = random.Random(seed)
    status = 200
    while time.monotonic() < deadline and (
        max_requests is None or len(stats.results) < max_requests
    ):
        if status == 0:
            time.sleep(REFUSED_PAUSE_S)  # not a hot loop against a dead port
        user, dataset = rng.choice(USERS), rng.choice(DATASETS)
        if rng.random() < QUERY_SHARE:
            q = rng.choice(QUESTIONS).format(p=rng.choice(PEOPLE), o=rng.choice(ORGS))
            t0 = time.perf_counter()
            status, body = post(
                base, "/v1/gb/query", {"user_id": user, "dataset": dataset, "query": q}
            )
            stats.add(
                Result("query", status, (time.perf_counter() - t0) * 1000, user, dataset, q, body)
            )
            continue
        text = make_text(rng)
        key = uuid.uuid4().hex if rng.random() < IDEMPOTENT_SHARE else None
        headers = {"Idempotency-Key": key} if key else None
        body_in = {"user_id": user, "dataset": dataset, "text": text}
        t0 = time.perf_counter()
        status, body = post(base, "/v1/gb/remember", body_in, headers)
        stats.add(
            Result(
                "remember",
                status,
                (time.perf_counter() - t0) * 1000,
                user,
                dataset,
                text,
                body,
                key,
            )
        )
        if key and status == 200:
            t0 = time.perf_counter()
            status, again = post(base, "/v1/gb/remember", body_in, headers)
            stats.add(
                Result(
                    "replay",
                    status,
                    (time.perf_counter() - t0) * 1000,
                    user,
                    dataset,
                    text,
                    again,
                    key,
                )
            )
            if status == 200 and again != body:
                stats.add(
                    Result(
                        "replay-mismatch",
                        -1,
                        0,
                        user,
                        dataset,
                        text,
                        {"first": body, "again": again},
                        key,
                    )
                )


# --- the checks ------------------------------------------------------------------------------


def _links_of(read: Any, key: Any) -> Any:
    """The artifacts linked to a row, read once per row."""
    cache: dict[int, set[int]] = {}

    def links(row_id: int) -> set[int]:
        if row_id not in cache:
            cache[row_id] = set(read(key, row_id))
        return cache[row_id]

    return links


def check(stats: Stats, facts_once: bool = False) -> tuple[list[str], list[str]]:
    """Read back every acknowledged remember through the store. Returns the
    problems and the warnings (what the spec does not promise under
    concurrency: the same new fact stated by two concurrent calls; with
    `facts_once`, the fact claims of the commit protocol do, so a fact live
    twice is a problem)."""
    from gligabao import wiring
    from gligabao.models import DatasetKey
    from gligabao.text import normalize_name

    graph = wiring.graph_store()
    problems: list[str] = []
    warnings: list[str] = []
    acked = [r for r in stats.results if r.kind in ("remember", "warm-up") and r.status == 200]
    by_key: dict[DatasetKey, list[Result]] = defaultdict(list)
    for r in acked:
        by_key[DatasetKey(r.user, r.dataset)].append(r)
    problems += [
        f"replayed key {r.key} returned another response"
        for r in stats.results
        if r.kind == "replay-mismatch"
    ]

    for key, results in sorted(by_key.items(), key=lambda kv: kv[0].pk):
        where = f"{key.user_id}/{key.dataset}"
        entities = {e.id: e for e in graph.iter_entities(key)}
        edges = {e.id: e for e in graph.iter_edges(key)}
        artifacts = {a.id: a for a in graph.iter_artifacts(key)}

        # IDs acknowledged: one artifact per call, one meaning per entity / edge ID
        artifact_ids = [r.body["artifact_id"] for r in results]
        dup = {i for i in artifact_ids if artifact_ids.count(i) > 1}
        if dup:
            problems.append(f"{where}: artifact IDs acknowledged twice: {sorted(dup)[:10]}")
        entity_names: dict[int, set[str]] = defaultdict(set)
        entity_links = _links_of(graph.entity_artifacts, key)
        edge_links = _links_of(graph.edge_artifacts, key)
        edge_facts: dict[int, set[tuple[int, int, str]]] = defaultdict(set)

        for r in results:
            body = r.body
            art = artifacts.get(body["artifact_id"])
            if art is None or art.text != r.text:
                problems.append(
                    f"{where}: artifact {body['artifact_id']} of an acknowledged call is missing or wrong"
                )
            expected = {(p, v, o) for p, v, o in SENTENCE.findall(r.text)}
            got_names = {normalize_name(e["name"]) for e in body["entities"]}
            for p, _, o in expected:
                for name in (p, o):
                    if normalize_name(name) not in got_names:
                        problems.append(f"{where}: {name!r} of {r.text!r} is not in the response")
            for e in body["entities"]:
                entity_names[e["id"]].add(normalize_name(e["name"]))
                row = entities.get(e["id"])
                if row is None:
                    problems.append(
                        f"{where}: entity {e['id']} ({e['name']}) acknowledged, not stored"
                    )
                elif normalize_name(row.name) != normalize_name(e["name"]):
                    problems.append(
                        f"{where}: entity {e['id']} is {row.name!r}, acknowledged as {e['name']!r}"
                    )
                elif body["artifact_id"] not in entity_links(e["id"]):
                    problems.append(
                        f"{where}: entity {e['id']} has no link to artifact {body['artifact_id']}"
                    )
            facts = {(e["source"], e["relation"], e["target"]) for e in body["edges"]}
            for p, verb, o in expected:
                rel = "works_at" if verb == "works at" else "lives_in"
                if (p, rel, o) not in facts:
                    problems.append(
                        f"{where}: fact {p} {rel} {o} of {r.text!r} is not in the response"
                    )
            for e in body["edges"]:
                edge_facts[e["id"]].add((e["source_id"], e["target_id"], e["relation"]))
                erow = edges.get(e["id"])
                if erow is None:
                    problems.append(f"{where}: edge {e['id']} acknowledged, not stored")
                    continue
                if (erow.source_id, erow.target_id, erow.relation) != (
                    e["source_id"],
                    e["target_id"],
                    e["relation"],
                ):
                    problems.append(f"{where}: edge {e['id']} differs from its acknowledgement")
                if not erow.live:
                    problems.append(f"{where}: edge {e['id']} was superseded (nothing should be)")
                if body["artifact_id"] not in edge_links(e["id"]):
                    problems.append(
                        f"{where}: edge {e['id']} has no link to artifact {body['artifact_id']}"
                    )
        problems += [
            f"{where}: entity ID {i} acknowledged as {sorted(n)}"
            for i, n in entity_names.items()
            if len(n) > 1
        ]
        problems += [
            f"{where}: edge ID {i} acknowledged as {sorted(f)}"
            for i, f in edge_facts.items()
            if len(f) > 1
        ]

        # the store itself: unique names, claimed by their entity
        by_norm: dict[str, list[int]] = defaultdict(list)
        for e in entities.values():
            by_norm[normalize_name(e.name)].append(e.id)
        twins = {n: ids for n, ids in by_norm.items() if len(ids) > 1}
        if twins:
            problems.append(f"{where}: duplicated entities {dict(list(twins.items())[:5])}")
        claims = graph.entity_ids_by_names(key, sorted(by_norm))
        for n, ids in by_norm.items():
            if claims.get(n) not in ids:
                problems.append(f"{where}: name {n!r} claimed by {claims.get(n)}, entities {ids}")
        # a live fact is stored once
        live: dict[tuple[int, int, str], list[int]] = defaultdict(list)
        for e in edges.values():
            if e.live:
                live[(e.source_id, e.target_id, e.relation)].append(e.id)
        dup_facts = {k: v for k, v in live.items() if len(v) > 1}
        if dup_facts:
            (problems if facts_once else warnings).append(
                f"{where}: {len(dup_facts)} live facts stored more than once "
                f"{dict(list(dup_facts.items())[:3])}"
            )
        for e in edges.values():
            if e.source_id not in entities or e.target_id not in entities:
                problems.append(f"{where}: edge {e.id} points at a missing entity")
        # the counters
        ds = graph.get_dataset(key)
        if ds is None:
            problems.append(f"{where}: dataset row missing")
        elif (ds.entities, ds.edges, ds.artifacts) != (len(entities), len(edges), len(artifacts)):
            problems.append(
                f"{where}: counters {(ds.entities, ds.edges, ds.artifacts)} != rows "
                f"{(len(entities), len(edges), len(artifacts))}"
            )
        extra = set(artifacts) - set(artifact_ids)
        if extra:
            warnings.append(f"{where}: {len(extra)} artifacts no acknowledged call wrote")
    return problems, warnings


# --- the report ------------------------------------------------------------------------------


def pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def report(stats: Stats, seconds: float, clients: int, say: Any = print) -> bool:
    results = [r for r in stats.results if r.kind in ("remember", "replay", "query")]
    errors = [r for r in results if r.status != 200]
    say(f"load: {clients} clients for {seconds:.1f} s against the local server (127.0.0.1)")
    say(
        f"requests: {len(results)}  throughput: {len(results) / seconds:.1f} req/s  "
        f"errors: {len(errors)} ({100 * len(errors) / max(1, len(results)):.2f} %)"
    )
    for kind in ("remember", "replay", "query"):
        rs = [r for r in results if r.kind == kind]
        if not rs:
            continue
        ms = [r.ms for r in rs]
        bad = sum(1 for r in rs if r.status != 200)
        say(
            f"  {kind:<9} n={len(rs):<5} {len(rs) / seconds:6.1f}/s  errors {bad:<3} "
            f"p50 {statistics.median(ms):7.0f} ms  p95 {pct(ms, 95):7.0f} ms  "
            f"p99 {pct(ms, 99):7.0f} ms  max {max(ms):7.0f} ms"
        )
    by_status: dict[int, int] = defaultdict(int)
    for r in errors:
        by_status[r.status] += 1
    if errors:
        say(f"  error statuses: {dict(by_status)}")
        for r in errors[:5]:
            say(f"    {r.kind} {r.status}: {str(r.body)[:200]}")
    return not errors


def warm_up(base: str, stats: Stats) -> None:
    """The SDKs' first import costs seconds: pay it before the clock starts.
    One remember per dataset also creates them all, so that no query meets a
    dataset that does not exist yet (a 404 is then a real error)."""
    for user in USERS:
        for dataset in DATASETS:
            text = f"{PEOPLE[0]} works at {ORGS[0]}."
            status, body = post(
                base, "/v1/gb/remember", {"user_id": user, "dataset": dataset, "text": text}
            )
            if status != 200:
                raise SystemExit(f"warm-up remember failed: {status} {body}")
            stats.add(Result("warm-up", status, 0, user, dataset, text, body))
    status, body = post(base, "/v1/gb/query", {"user_id": USERS[0], "query": "What do you know?"})
    if status != 200:
        raise SystemExit(f"warm-up query failed: {status} {body}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="how long the clients send (60)")
    ap.add_argument("--clients", type=int, default=20, help="concurrent clients (20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verbose", action="store_true", help="keep the server's log lines")
    args = ap.parse_args(argv)

    # The server logs one JSON line and one metrics line per call on stdout,
    # moto one line per request: keep the report readable.
    out = sys.stdout
    if not args.verbose:
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the whole run

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    env = start()
    try:
        from gligabao.dynamodb.client import REQUESTS

        stats = Stats()
        warm_up(env.base, stats)
        dynamo_before = REQUESTS.total
        started = time.monotonic()
        deadline = started + args.seconds
        threads = [
            threading.Thread(target=client, args=(env.base, deadline, args.seed * 1000 + i, stats))
            for i in range(args.clients)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
        ok = report(stats, elapsed, args.clients, say)
        sent = REQUESTS.total - dynamo_before
        calls = sum(1 for r in stats.results if r.kind in ("remember", "replay", "query"))
        say(
            f"DynamoDB (moto, one request at a time): {sent} requests, "
            f"{sent / elapsed:.0f}/s, {sent / max(1, calls):.0f} per call"
        )
        t0 = time.monotonic()
        problems, warnings = check(stats)
        acked = sum(
            1 for r in stats.results if r.kind in ("remember", "warm-up") and r.status == 200
        )
        say(
            f"consistency: {acked} acknowledged remembers read back in "
            f"{time.monotonic() - t0:.1f} s: {len(problems)} problem(s), "
            f"{len(warnings)} warning(s)"
        )
        for p in problems[:30]:
            say(f"  - {p}")
        for w in warnings[:10]:
            say(f"  ~ {w}")
        return 0 if ok and not problems else 1
    finally:
        env.stop()


if __name__ == "__main__":
    sys.exit(main())
