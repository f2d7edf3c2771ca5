"""LoCoMo through the running product: does the evidence of a real long
conversation reach the query context, at what size, against plain baselines
at the same size?

    .venv/bin/python -m bench.locomo [--data PATH] [--mode turns,sessions]
        [--conversations N | conv-41,conv-42] [--budget default,1000,2000,4000]
        [--jobs 2] [--route search|query] [--store DIR] [--live]
        [--backend sqlite|dynamodb] [--set NAME=VALUE ...] [--sweep NAME=V1,V2]
        [--format plain|time|whatsapp|slack|markdown|irc|id] [--sessions N]

Each conversation of ``../shared/data/locomo/locomo_dev.json`` (read in
place) is remembered through `gligabao serve` as an agent would, in two modes:
``turns``, every turn a `remember` of its own (its speaker as ``speaker``, its
session as ``session_id``, the session's date as ``reference_time``, a shared
photo's caption in the text as a chat client gives it); ``sessions``, every
session one text of ``Speaker: text`` lines (``--format``: of the lines a chat
client exports, ``[10:42] Kate: ...``, WhatsApp's, Slack's, Markdown's, IRC's,
``[D1:3] Kate: ...``: bench/chat_formats.py). The server's LLM is the fake
Anthropic of tests/fakes, whose extraction returns nothing (so no fact is
invented: the passages alone carry the evidence), its embedder the bundled
local model. Then every question of categories 1-4 is asked (``search``: the
query's context without the answer; ``--route query`` goes through the fake
LLM and reads the context it was sent) at each budget of ``--budget``
(``default``: the server's).

Per category: the share of a question's evidence turns whose text reached
the context (``recall``), the share of questions with all of them (``all``),
the context's tokens and their share of the conversation's, and the same
recall for the conversation's turns ranked by cosine (same local model), by
BM25 and by both fused, taken best first while they fit in our context's
tokens (less the question). ``--live`` lets a real model extract and answer
and a judge grade (see bench/locomo_live.py). ``--store DIR`` keeps the
remembered SQLite file there and reuses it on the next run (only while the
remember side of the code is unchanged). ``--backend dynamodb``: the same
calls to the AWS-shaped stack (DynamoDB on moto, its vector indexes' fake;
bench/locomo_dynamodb.py, which also compares the two backends' recall).
``--set``/``--sweep``: retrieval profile fields per search (bench/ruler.py).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import chat_formats, ruler
from .locomo_data import (
    CATEGORIES,
    DEFAULT_DATA,
    Conversation,
    Question,
    first,
    load,
    user_of,
)
from .locomo_dynamodb import server
from .ruler import Bm25, Embeddings, cosine_rank, fmt, fused, markdown, mean, tokens

BASELINES = ("cosine", "bm25", "fused")


def remember(base: str, conv: Conversation, mode: str) -> int:
    """One conversation, in order; returns the remember calls made."""
    user = user_of(conv, mode)
    calls = 0
    for n, date, turns in conv.sessions:
        sid = f"session_{n}"
        if mode == "turns":
            for t in turns:
                ruler.call(base, "/v1/gb/remember", {
                    "user_id": user, "text": t.text, "speaker": t.speaker,
                    "session_id": sid, "reference_time": date})
                calls += 1
        else:
            ruler.call(base, "/v1/gb/remember", {
                "user_id": user, "text": "\n".join(conv.said(t) for t in turns),
                "session_id": sid, "reference_time": date})
            calls += 1
    return calls


def found_in(parts: list[str], conv: Conversation, q: Question, mode: str) -> list[str]:
    """The evidence turns whose text reached the context: a passage that is
    the turn or one of its windows (turns mode: a long reply is searched by
    its windows, a window found is its turn found), or the speaker's line in
    a passage (sessions)."""
    if mode == "turns":
        whole = set(parts)
        pieces = [flat(p) for p in parts]
        return [i for i in q.evidence
                if conv.turns[i].text in whole or window_of(conv.turns[i].text, pieces)]
    # A turn's shared photo may be a line of its own: all of its lines count.
    lines = {ln for p in parts for ln in p.splitlines()}
    return [i for i in q.evidence
            if all(ln in lines for ln in conv.said(conv.turns[i]).splitlines())]


def flat(text: str) -> str:
    return " ".join(text.split())


def window_of(text: str, pieces: list[str], least: int = 80) -> bool:
    """One of ``pieces`` (whitespace folded) is a window of ``text``: part
    of it, and not a trivial one (at least ``least`` characters, or all of
    it). A window's lines are the text's without its blank ones."""
    whole = flat(text)
    return any(len(p) >= min(least, len(whole)) and p in whole for p in pieces if p)


def search_context(base: str, user: str, question: str, budget: int | None,
                   route: str, fake: Any, profile: dict[str, Any] | None = None) -> tuple[list[str], int]:
    """The context's passages (and facts) and its tokens."""
    body: dict[str, Any] = {"user_id": user, "query": question}
    if budget is not None:
        body["max_context_tokens"] = budget
    if profile:
        body["profile"] = profile
    if route == "query":
        ruler.call(base, "/v1/gb/query", body)
        sent = fake.context_of(question)
        return fake.passages(sent), tokens(sent) if sent else 0
    out, _ = ruler.call(base, "/v1/gb/search", body)
    parts = [p.get("text") or p.get("summary") or "" for p in out["passages"]]
    parts += [e.get("description") or "" for e in out["edges"]]
    # The notes (a user's kept preference or instruction is the turn's text)
    # are part of the context the model is given.
    parts += [n.get("text") or "" for n in out.get("notes") or []]
    return parts, int(out["context_tokens"])


class Baselines:
    """The conversation's turns, ranked three ways for each question."""

    def __init__(self, conv: Conversation, emb: Embeddings, cosine: bool = True) -> None:
        self.turns = list(conv.turns.values())
        lines = [t.line for t in self.turns]
        # --no-cosine: BM25 alone (embedding every turn is the slow part on a loaded machine;
        # the rows of --out keep what a later run needs to add them)
        self.docs = emb.get(lines, "document") if cosine else None
        self.bm25 = Bm25(lines)
        self.cost = [tokens(f"[{t.date}] {t.line}") + 1 for t in self.turns]
        self.emb = emb

    def pick(self, question: str, budget: int) -> dict[str, set[str]]:
        bm = self.bm25.rank(question)
        ranks = {"bm25": bm}
        if self.docs is not None:
            cos = cosine_rank(self.emb.get([question], "query")[0], self.docs)
            ranks.update(cosine=cos, fused=fused([cos, bm]))
        return {name: {self.turns[i].id for i in ruler.within(r, self.cost, budget)}
                for name, r in ranks.items()}


def ask_one(base: str, conv: Conversation, mode: str, q: Question, budget: int | None,
            route: str, fake: Any, profile: dict[str, Any] | None = None) -> dict[str, Any]:
    parts, used = search_context(base, user_of(conv, mode), q.text, budget, route, fake, profile)
    return {"conversation": conv.id, "question": q.text, "category": q.category,
            "budget": budget, "evidence": q.evidence, "found": found_in(parts, conv, q, mode),
            "tokens": used, "share": used / conv.tokens}


def ask_all(base: str, convs: list[Conversation], mode: str, budgets: list[int | None],
            args: argparse.Namespace, fake: Any, emb: Embeddings) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for conv in convs:
        items = [(q, b) for q in conv.questions for b in budgets]
        got = ruler.run_pool(
            items, lambda qb, c=conv: ask_one(base, c, mode, qb[0], qb[1], args.route, fake, args.profile),
            args.jobs)
        cosine = not getattr(args, "no_cosine", False)
        base_rank = Baselines(conv, emb, cosine)
        if cosine:
            emb.get([q.text for q in conv.questions], "query")  # one batch, cached
        for row in got:
            room = max(0, row["tokens"] - tokens(row["question"]))
            picked = base_rank.pick(row["question"], room)
            row["baselines"] = {n: [i for i in row["evidence"] if i in s]
                                for n, s in picked.items()}
        rows += got
        ruler.say(f"  asked {conv.id} ({mode}): {len(conv.questions)} questions x "
                  f"{len(budgets)} budget(s)")
    return rows


def recall(rows: list[dict[str, Any]], key: str | None = None) -> tuple[float | None, float | None]:
    """Mean share of evidence found, and share of questions with all of it."""
    shares, whole = [], []
    for r in rows:
        if key is not None and key not in r["baselines"]:
            return None, None  # --no-cosine
        got = r["found"] if key is None else r["baselines"][key]
        shares.append(len(got) / len(r["evidence"]))
        whole.append(float(len(got) == len(r["evidence"])))
    return mean(shares), mean(whole)


def report(rows: list[dict[str, Any]], mode: str, budgets: list[int | None],
           categories: dict[Any, str] | None = None) -> str:
    out: list[str] = []
    categories = CATEGORIES if categories is None else categories
    header = ["category", "n", "recall", "all", "tokens", "share", "cosine", "BM25", "fused"]
    for b in budgets:
        sub = [r for r in rows if r["budget"] == b]
        lines = []
        groups = [(name, [r for r in sub if r["category"] == c]) for c, name in categories.items()]
        for name, rs in [*groups, ("overall", sub)]:
            if not rs:
                continue
            rec, whole = recall(rs)
            lines.append([name, str(len(rs)), fmt(rec), fmt(whole),
                          f"{mean([r['tokens'] for r in rs]) or 0:,.0f}",
                          fmt(mean([r["share"] for r in rs]), pct=True),
                          *(fmt(recall(rs, k)[0]) for k in BASELINES)])
        label = "default" if b is None else f"{b:,}"
        out.append(f"\n{mode}, budget {label} (baselines: evidence recall at our tokens)\n")
        out.append(markdown(header, lines))
    return "\n".join(out)


class ContextTap:
    """With --route query: the fake LLM's query stage records the context it
    was sent, by question."""

    def __init__(self) -> None:
        self.sent: dict[str, str] = {}

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        text = ruler.prompt_text(body)
        m = re.search(r"<question>(.*?)</question>", text, re.S)
        if m:
            self.sent[m.group(1)] = text
        return {"answer": "(ruler: not answered)", "entities": [], "edges": [], "passages": []}

    def context_of(self, question: str) -> str:
        return self.sent.pop(question, "")

    @staticmethod
    def passages(sent: str) -> list[str]:
        """The texts of the rendered passages (a text runs to the next one)."""
        body = re.search(r"<passages>\n(.*?)\n</passages>", sent, re.S)
        blocks = re.split(r"\n*\[passage \d+\][^\n]*\n", "\n" + body.group(1)) if body else []
        out = []
        for b in blocks:
            m = re.search(r"(?:^|\n)text: (.*)", b, re.S)
            if m:
                out.append(m.group(1).rstrip("\n"))
        return out


def parse_budgets(raw: str) -> list[int | None]:
    return [None if b.strip() == "default" else int(b) for b in raw.split(",") if b.strip()]


def remembered(path: Path) -> set[str]:
    side = path.with_suffix(".done.json")
    return set(json.loads(side.read_text())) if side.exists() else set()


def mark(path: Path, users: set[str]) -> None:
    path.with_suffix(".done.json").write_text(json.dumps(sorted(users)))


def arguments(doc: str, data: Path, out: str) -> argparse.ArgumentParser:
    """The options the rulers of conversations share (bench/beam.py too)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--data", type=Path, default=data)
    ap.add_argument("--conversations", default="", help="the first N, or IDs")
    ap.add_argument("--budget", default="default,1000,2000,4000")
    ap.add_argument("--jobs", type=int, default=2, help="concurrent requests")
    ap.add_argument("--route", choices=("search", "query"), default="search")
    ap.add_argument("--store", default="", help="keep (and reuse) the remembered file here")
    ap.add_argument("--out", type=Path, default=ruler.OUT / out)
    ap.add_argument("--cache", type=Path, default=ruler.OUT / "embeddings.npz",
                    help="the baselines' embeddings, kept between runs")
    ap.add_argument("--no-cosine", action="store_true",
                    help="the BM25 baseline alone (no embedding of the turns in this process)")
    ap.add_argument("--threads", type=int, default=1,
                    help="the server's embedding threads (OMP_NUM_THREADS; 0: the server's "
                         "default, every core, as `gligabao serve` runs)")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = arguments(__doc__ or "", DEFAULT_DATA, "locomo.json")
    ap.add_argument("--mode", default="turns,sessions")
    ap.add_argument("--format", default="plain", choices=chat_formats.FORMATS,
                    help="how a session's lines are written when remembered whole")
    ap.add_argument("--sessions", type=int, default=0,
                    help="only each conversation's first N sessions (a quick measure)")
    ap.add_argument("--backend", choices=("sqlite", "dynamodb"), default="sqlite",
                    help="dynamodb: moto and the vector indexes' fake (bench/locomo_dynamodb.py)")
    ap.add_argument("--live", action="store_true", help="a real model extracts, answers; a judge grades")
    ap.add_argument("--judge-model", default="", help="--live: the judge's model (else the server's)")
    ruler.profile_options(ap)
    args = ap.parse_args(argv)
    if args.backend == "dynamodb" and (args.store or args.live):
        ap.error("--backend dynamodb keeps its data in moto's memory: no --store, no --live")
    convs = load(args.data, args.conversations)
    for c in convs:
        c.format = args.format
        if args.sessions:
            first(c, args.sessions)
    modes = [m for m in args.mode.split(",") if m]
    if args.live:
        from . import locomo_live

        return locomo_live.run(convs, modes, args)
    results, seconds = measure(convs, modes, args, remember)
    n_q = sum(len(c.questions) for c in convs)
    print(f"LoCoMo {args.data.name}: {len(convs)} conversations "
          f"({', '.join(c.id for c in convs)}), {n_q} questions of categories 1-4, "
          f"route {args.route}, format {args.format}; conversation tokens "
          f"{min(c.tokens for c in convs):,}-{max(c.tokens for c in convs):,}")
    for key in results:  # a mode, or a mode and a profile of --sweep
        print(report(results[key], key, parse_budgets(args.budget)))
    print(f"\n{seconds:.0f} s")
    return 0


Remember = Callable[[str, Conversation, str], int]


def measure(convs: list[Conversation], modes: list[str], args: argparse.Namespace,
            remember_fn: Remember, loaded: Callable[[str, float], None] | None = None,
            ) -> tuple[dict[str, list[dict[str, Any]]], float]:
    """Each mode: the conversations remembered through a fresh server (or
    the ``--store`` one's, reused), then every question asked at every
    budget; the rows (also written to ``--out``) and the seconds it took.
    ``loaded(mode, seconds)`` is told how long remembering took."""
    from .harness.fakes import FakeAnthropic

    started = time.perf_counter()
    budgets = parse_budgets(args.budget)
    # --set/--sweep (bench/ruler.py): one round of questions per profile
    rounds = ruler.profiles(args) if hasattr(args, "sweep") else [("", {})]
    emb = Embeddings(args.cache)
    tap = ContextTap()
    results: dict[str, list[dict[str, Any]]] = {}
    backend = getattr(args, "backend", "sqlite")
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as fake:
        fake.default("query", tap).default("summarize", ruler.lead_summary)
        path = Path(args.store or tmp) / "locomo.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        with server(backend, path, ruler.fake_llm_env(fake.url, args.threads)) as srv:
            ruler.say("\n".join(srv.banner()))
            done = remembered(path)
            for mode in modes:
                todo = [c for c in convs if user_of(c, mode) not in done]
                t0 = time.perf_counter()
                calls = ruler.run_pool(todo, lambda c, m=mode: remember_fn(srv.url, c, m),
                                       args.jobs)
                took = time.perf_counter() - t0
                done |= {user_of(c, mode) for c in todo}
                mark(path, done)
                ruler.say(f"remembered {len(todo)} conversation(s) {mode}: {sum(calls)} calls, "
                          f"{took:.0f} s ({len(convs) - len(todo)} reused)")
                if loaded is not None and todo:
                    loaded(mode, took)
                for label, args.profile in rounds:
                    key = mode if len(rounds) == 1 else f"{mode} {label}"
                    results[key] = ask_all(srv.url, convs, mode, budgets, args, tap, emb)
                emb.save()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    return results, time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
