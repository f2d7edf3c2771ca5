"""The LoCoMo ruler with a real model (``bench/locomo.py --live``): the
server's configured provider extracts at remember and answers at query, and
an LLM judge grades each answer against the dataset's gold answer.

    ANTHROPIC_API_KEY=... .venv/bin/python -m bench.locomo --live \\
        [--mode turns] [--conversations conv-41] [--judge-model MODEL]

The server is started with this shell's provider settings (GB_LLM_PROVIDER,
GB_DEFAULT_MODEL, ANTHROPIC_API_KEY, AWS credentials for Bedrock, or
GB_LLM_BASE_URL for an OpenAI-compatible server); the judge runs in this
process on the same provider, through the product's own LLM adapter.

The score is J, the share of answers the judge calls CORRECT, per category
(1-4), as the published LoCoMo comparisons report it (the Mem0 paper's
evaluation: a generous CORRECT/WRONG judge, gpt-4o-mini there). The prompt
(:data:`JUDGE_SYSTEM`) is ours, written to the same rules; the judge's model
is printed with the table. Per question it also records the context recall
(the ``search`` context at the default budget), the query's tokens, cost and
latency, and the judge's tokens and cost.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

from . import locomo, ruler
from .ruler import fmt, markdown, mean, percentile

JUDGE_SYSTEM = """[stage: judge]
You grade an answer to a question about a long conversation between two people.
You are given the question, the gold answer and the generated answer.
Label it CORRECT when the generated answer says what the gold answer says: it may
be longer, worded differently or carry more detail, as long as it names what the
gold answer names and does not contradict it. For a question about time, a date,
month or year that means the same period as the gold answer is CORRECT in any
format. Label it WRONG when it names something else, misses the point of the gold
answer, or says that it does not know.
Reply with JSON only: {"reasoning": "<one sentence>", "label": "CORRECT" or "WRONG"}."""

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"},
                   "label": {"type": "string", "enum": ["CORRECT", "WRONG"]}},
    "required": ["label"],
}


def judge_user(question: str, gold: str, answer: str) -> str:
    return (f"<question>{question}</question>\n<gold_answer>{gold}</gold_answer>\n"
            f"<generated_answer>{answer}</generated_answer>")


class Judge:
    """The judge call, on the provider this shell configures."""

    def __init__(self, model: str) -> None:
        from gligabao.config import load_settings

        self.cfg = load_settings()
        self.model = model or self.cfg.llm_model
        from gligabao import wiring

        wiring.reset()  # this shell's provider, read now
        self.llm = wiring.llm()

    def grade(self, question: str, gold: str, answer: str) -> dict[str, Any]:
        from gligabao.ai.jsonreply import parse_json_object
        from gligabao.ai.port import LLMRequest
        from gligabao.ai.prices import price_of

        reply = self.llm.complete(LLMRequest(
            "judge", JUDGE_SYSTEM, judge_user(question, gold, answer), self.model,
            "none", 256, JUDGE_SCHEMA))
        label = str(parse_json_object(reply.text).get("label", "")).strip().upper()
        p_in, p_out = price_of(self.cfg.prices, reply.model or self.model)
        cost = (reply.input_tokens * p_in + reply.output_tokens * p_out) / 1_000_000
        return {"correct": label == "CORRECT", "label": label or "(none)",
                "judge_tokens": reply.input_tokens + reply.output_tokens, "judge_cost": cost}


def usage(base: str, user: str, call_id: str) -> dict[str, float]:
    """Tokens and cost of one call, from its inference rows."""
    _, body, _ = ruler.http(base, "GET", f"/v1/gb/inferences?user_id={user}&call_id={call_id}")
    rows = (body or {}).get("inferences", [])
    return {"input_tokens": sum(r.get("input_tokens", 0) for r in rows),
            "output_tokens": sum(r.get("output_tokens", 0) for r in rows),
            "cost_usd": sum(r.get("cost_usd", 0.0) for r in rows)}


def ask(base: str, conv: locomo.Conversation, mode: str, q: locomo.Question,
        judge: Judge) -> dict[str, Any]:
    user = locomo.user_of(conv, mode)
    parts, ctx_tokens = locomo.search_context(base, user, q.text, None, "search", None)
    t0 = time.perf_counter()
    out, headers = ruler.call(base, "/v1/gb/query", {"user_id": user, "query": q.text})
    latency = (time.perf_counter() - t0) * 1000
    call_id = headers.get("X-Gb-Call-Id") or headers.get("x-gb-call-id", "")
    answer = str(out.get("answer", ""))
    return {"conversation": conv.id, "question": q.text, "category": q.category,
            "gold": q.answer, "answer": answer, "evidence": q.evidence,
            "found": locomo.found_in(parts, conv, q, mode), "context_tokens": ctx_tokens,
            "latency_ms": latency, **usage(base, user, call_id),
            **judge.grade(q.text, q.answer, answer)}


def report(rows: list[dict[str, Any]], mode: str, judge_model: str) -> str:
    header = ["category", "n", "J", "recall", "context tokens", "query in/out tokens",
              "cost per question", "latency p50 / p95 (ms)"]
    lines = []
    groups = [(n, [r for r in rows if r["category"] == c]) for c, n in locomo.CATEGORIES.items()]
    for name, rs in [*groups, ("overall", rows)]:
        if not rs:
            continue
        lat = [r["latency_ms"] for r in rs]
        lines.append([
            name, str(len(rs)), fmt(mean([float(r["correct"]) for r in rs])),
            fmt(mean([len(r["found"]) / len(r["evidence"]) for r in rs])),
            f"{mean([r['context_tokens'] for r in rs]) or 0:,.0f}",
            f"{mean([r['input_tokens'] for r in rs]) or 0:,.0f} / "
            f"{mean([r['output_tokens'] for r in rs]) or 0:,.0f}",
            f"${mean([r['cost_usd'] for r in rs]) or 0:.5f}",
            f"{percentile(lat, 50):,.0f} / {percentile(lat, 95):,.0f}"])
    judged = sum(r["judge_cost"] for r in rows)
    return (f"\n{mode}, live (J: LLM judge {judge_model}, prompt bench/locomo_live.py "
            f"JUDGE_SYSTEM; judge cost ${judged:.4f} in all)\n\n" + markdown(header, lines))


def remember_cost(base: str, conv: locomo.Conversation, mode: str) -> dict[str, float]:
    """Every inference of the conversation's dataset so far (page by page)."""
    rows: list[dict[str, Any]] = []
    cursor = ""
    while True:
        path = f"/v1/gb/inferences?user_id={locomo.user_of(conv, mode)}&limit=200"
        more = f"&cursor={urllib.parse.quote(cursor)}" if cursor else ""
        _, body, _ = ruler.http(base, "GET", path + more)
        rows += (body or {}).get("inferences", [])
        cursor = (body or {}).get("next") or ""
        if not cursor:
            break
    return {"cost_usd": sum(r.get("cost_usd", 0.0) for r in rows), "inferences": len(rows)}


def run(convs: list[locomo.Conversation], modes: list[str], args: argparse.Namespace) -> int:
    judge = Judge(args.judge_model)
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.store or tmp) / "locomo.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        with ruler.Server(path, {}, inherit=True) as srv:
            ruler.say("\n".join(srv.banner()))
            done = locomo.remembered(path)
            for mode in modes:
                todo = [c for c in convs if locomo.user_of(c, mode) not in done]
                t0 = time.perf_counter()
                ruler.run_pool(todo, lambda c, m=mode: locomo.remember(srv.url, c, m), args.jobs)
                done |= {locomo.user_of(c, mode) for c in todo}
                locomo.mark(path, done)
                spent = [remember_cost(srv.url, c, mode) for c in convs]
                ruler.say(f"remembered {len(todo)} conversation(s) {mode} in "
                          f"{time.perf_counter() - t0:.0f} s; the dataset's inferences so far: "
                          f"{sum(s['inferences'] for s in spent)}, "
                          f"${sum(s['cost_usd'] for s in spent):.4f}")
                items = [(c, q) for c in convs for q in c.questions]
                results[mode] = ruler.run_pool(
                    items, lambda cq, m=mode: ask(srv.url, cq[0], m, cq[1], judge), args.jobs)
    for mode in modes:
        print(report(results[mode], mode, judge.model))
    out: Path = args.out.with_name("locomo-live.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    return 0
