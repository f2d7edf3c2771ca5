"""HotpotQA through the running product: does the query context hold the
whole chain of supporting paragraphs a multi-hop question needs?

    .venv/bin/python -m bench.hotpotqa [--data DIR] [--budget default,1000,2000]
        [--questions N] [--jobs 2] [--store DIR] [--set NAME=VALUE ...]
        [--sweep NAME=V1,V2]

Every paragraph of ``../shared/data/hotpotqa/hotpotqa_dev100_corpus.json``
(read in place) is remembered as a text of its own ("Title: sentences"),
all in one dataset, through `gligabao serve` with the fake LLM of tests/fakes
(extraction returns nothing) and the bundled local embedder. Then each
question is asked (``search``, at each budget) and scored: the share of its
supporting paragraphs whose text reached the context (``paragraphs``), and
whether all of them did (``chain``, what a multi-hop answer needs). The
baselines: the corpus ranked by cosine with the same local model (what the
held-out check compares with), by BM25 and by both fused, taken best first
while they fit in our context's tokens (less the question). ``--set`` and
``--sweep``: retrieval profile fields sent with each search, a report per
round (bench/ruler.py), on one remembered file.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import ruler
from .ruler import Bm25, Embeddings, cosine_rank, fmt, fused, markdown, mean, tokens

DEFAULT_DATA = ruler.DATA / "hotpotqa"
USER = "hotpotqa"
WHEN = "2024-01-01T00:00:00Z"  # one reference time: the corpus has no dates
BASELINES = ("cosine", "bm25", "fused")


def load(path: Path) -> tuple[dict[str, str], list[dict[str, Any]]]:
    corpus = json.loads((path / "hotpotqa_dev100_corpus.json").read_text())
    texts = {title: f"{title}: {''.join(sents).strip()}" for title, sents in corpus.items()}
    questions = []
    for q in json.loads((path / "hotpotqa_dev100.json").read_text()):
        support = list(dict.fromkeys(t for t, _ in q["supporting_facts"]))
        if all(t in texts for t in support):
            questions.append({"question": q["question"], "type": q["type"], "support": support,
                              "answer": q["answer"]})
    return texts, questions


def reached(passages: list[str], paragraph: str) -> bool:
    """The paragraph is in the context: whole, or a chunk of it."""
    return any(p == paragraph or (len(p) >= 100 and p in paragraph) for p in passages)


def chain(rows: list[dict[str, Any]], key: str | None = None) -> tuple[float | None, float | None]:
    share, whole = [], []
    for r in rows:
        got = r["found"] if key is None else r["baselines"][key]
        share.append(len(got) / len(r["support"]))
        whole.append(float(len(got) == len(r["support"])))
    return mean(whole), mean(share)


def report(rows: list[dict[str, Any]], budgets: list[int | None]) -> str:
    header = ["budget", "type", "n", "chain", "paragraphs", "tokens",
              *(f"{b} chain" for b in BASELINES), "cosine paragraphs"]
    lines = []
    for b in budgets:
        sub = [r for r in rows if r["budget"] == b]
        for kind in ("bridge", "comparison", "all"):
            rs = sub if kind == "all" else [r for r in sub if r["type"] == kind]
            if not rs:
                continue
            whole, share = chain(rs)
            lines.append(["default" if b is None else f"{b:,}", kind, str(len(rs)), fmt(whole),
                          fmt(share), f"{mean([r['tokens'] for r in rs]) or 0:,.0f}",
                          *(fmt(chain(rs, k)[0]) for k in BASELINES),
                          fmt(chain(rs, "cosine")[1])])
    return markdown(header, lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--budget", default="default,1000,2000")
    ap.add_argument("--questions", type=int, default=0, help="only the first N")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--store", default="", help="keep (and reuse) the remembered file here")
    ap.add_argument("--out", type=Path, default=ruler.OUT / "hotpotqa.json")
    ruler.profile_options(ap)
    ap.add_argument("--cache", type=Path, default=ruler.OUT / "embeddings.npz",
                    help="the baselines' embeddings, kept between runs")
    args = ap.parse_args(argv)
    from .harness.fakes import FakeAnthropic

    texts, questions = load(args.data)
    questions = questions[: args.questions or None]
    budgets = [None if b == "default" else int(b) for b in args.budget.split(",") if b]
    titles = list(texts)
    started = time.perf_counter()
    emb = Embeddings(args.cache)
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as fake:
        fake.default("summarize", ruler.lead_summary)
        path = Path(args.store) / "hotpotqa.db" if args.store else Path(tmp) / "hotpotqa.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        done = path.with_suffix(".done")
        with ruler.Server(path, ruler.fake_llm_env(fake.url)) as srv:
            if not done.exists():
                t0 = time.perf_counter()
                for t in titles:  # in corpus order: IDs as in any other run
                    ruler.call(srv.url, "/v1/gb/remember",
                               {"user_id": USER, "text": texts[t], "reference_time": WHEN})
                done.write_text("")
                ruler.say(f"remembered {len(titles)} paragraphs in {time.perf_counter() - t0:.0f} s")

            def one(item: tuple[dict[str, Any], int | None, str, dict[str, Any]]) -> dict[str, Any]:
                q, b, label, profile = item
                body: dict[str, Any] = {"user_id": USER, "query": q["question"]}
                if b is not None:
                    body["max_context_tokens"] = b
                if profile:
                    body["profile"] = profile
                out, _ = ruler.call(srv.url, "/v1/gb/search", body)
                passages = [p.get("text") or "" for p in out["passages"]]
                return {**q, "budget": b, "round": label, "tokens": int(out["context_tokens"]),
                        "found": [t for t in q["support"] if reached(passages, texts[t])]}

            items = [(q, b, label, prof) for label, prof in ruler.profiles(args)
                     for q in questions for b in budgets]
            rows = ruler.run_pool(items, one, args.jobs)
    docs = emb.get([texts[t] for t in titles], "document")
    qvecs = emb.get([q["question"] for q in questions], "query")
    emb.save()
    qpos = {q["question"]: i for i, q in enumerate(questions)}
    bm25 = Bm25([texts[t] for t in titles])
    cost = [tokens(texts[t]) + 1 for t in titles]
    for r in rows:
        cos = cosine_rank(qvecs[qpos[r["question"]]], docs)
        bm = bm25.rank(r["question"])
        room = max(0, r["tokens"] - tokens(r["question"]))
        r["baselines"] = {}
        for name, ranking in (("cosine", cos), ("bm25", bm), ("fused", fused([cos, bm]))):
            picked = {titles[i] for i in ruler.within(ranking, cost, room)}
            r["baselines"][name] = [t for t in r["support"] if t in picked]
    print(f"HotpotQA: {len(questions)} questions over {len(titles)} paragraphs "
          "(chain: all supporting paragraphs in the context; baselines at our tokens)\n")
    for label, _ in ruler.profiles(args):
        print(f"profile: {label}")
        print(report([r for r in rows if r["round"] == label], budgets))
    print(f"\n{time.perf_counter() - started:.0f} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
