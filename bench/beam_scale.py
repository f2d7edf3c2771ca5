"""Search at a million tokens beside a hundred thousand: BEAM's dev
conversations remembered turn by turn, one of them alone (~100K tokens) and
all ten in one dataset (~1M tokens), and the same questions asked of both.

    .venv/bin/python -m bench.beam_scale [--data PATH] [--conversations 10]
        [--dim 384] [--repeat 3]

The conversations are ``../shared/data/beam/beam_100k_dev.jsonl`` (read in
place, never copied). The small dataset is its first conversation alone; the
large one is every conversation, one after the other, each session its own
``session_id`` (the conversation's number before the session's), every
message a `remember` with ``extract: false``, its speaker and its session's
date: what bench.beam does for one conversation, in one dataset. Through
``gligabao.Memory`` on a fresh SQLite file per dataset (no server).

The embedder is not the product's local model: embedding a million tokens
with it takes hours here (issue 45). It is the fake OpenAI server of
tests/fakes answering a **bag of words** vector: each word (lower-cased,
letters and digits) hashed to one of ``--dim`` coordinates with a sign, the
sum normalised, so that the cosine of two texts grows with the words they
share, at no cost. Recall is therefore the product's ranking on a lexical
embedder, not on a sentence model: compare the two sizes with each other,
not with bench.beam's figures.

Per dataset: the tokens remembered and the time it took; then each question
with evidence of the first conversation is asked with ``search`` ``--repeat``
times (after a warm-up), p50 and p95 over every ask; recall as bench.beam
measures it (the share of a question's evidence messages whose text, or one
of its windows, reached the context), and the context's tokens. On the large
dataset the questions of every conversation are asked too (recall over all
of BEAM's dev questions with the other nine conversations beside each).
Printed, never asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import re
import statistics
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import beam, ruler
from .harness.fakes import FakeOpenAI, start_fakes
from .harness.servers import fakes_env, use_env
from .harness.tables import table
from .harness.timing import load_average, pct
from .locomo import found_in
from .locomo_data import Conversation, Question

WORD = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=200_000)
def _slot(word: str, dim: int) -> tuple[int, float]:
    h = hashlib.blake2b(word.encode(), digest_size=8).digest()
    n = int.from_bytes(h, "little")
    return n % dim, 1.0 if (n >> 40) & 1 else -1.0


def bag_of_words(text: str, dim: int) -> list[float]:
    """The text's words hashed into ``dim`` signed coordinates, normalised."""
    v = [0.0] * dim
    for w in WORD.findall(text.lower()):
        i, s = _slot(w, dim)
        v[i] += s
    n = math.sqrt(sum(x * x for x in v))
    if n == 0.0:
        v[0] = 1.0
        return v
    return [x / n for x in v]


class WordsOpenAI(FakeOpenAI):
    """The fake embeddings server, every vector a bag of words."""

    def _resolve(self, text: str, dim: int, seen: tuple[str, ...]) -> list[float]:
        return bag_of_words(text, dim)


def remember(gb: Any, convs: list[Conversation]) -> tuple[int, float]:
    """Every message of ``convs``, in order; (tokens stored, seconds)."""
    t0, stored = time.perf_counter(), 0
    for c, conv in enumerate(convs):
        for n, date, turns in conv.sessions:
            items = [{"text": t.text, "speaker": t.speaker, "extract": False} for t in turns]
            for i in range(0, len(items), 100):
                gb.remember_batch(items[i : i + 100], session_id=f"c{c}_s{n}", reference_time=date)
            stored += sum(ruler.tokens(t.text) for t in turns)
    return stored, time.perf_counter() - t0


def ask(gb: Any, conv: Conversation, q: Question) -> tuple[float, float, int]:
    """(ms, share of the evidence found, context tokens)."""
    t0 = time.perf_counter()
    out = gb.search(q.text)
    ms = (time.perf_counter() - t0) * 1000
    parts = [p.text or p.summary or "" for p in out.passages]
    parts += [e.description or "" for e in out.edges]
    found = found_in(parts, conv, q, "turns")
    return ms, len(found) / len(q.evidence), int(out.context_tokens)


def measure(gb: Any, asked: list[Conversation], repeat: int) -> dict[str, Any]:
    gb.search("warm up")
    lat, shares, toks = [], [], []
    for conv in asked:
        for q in conv.questions:
            for r in range(repeat):
                ms, share, n = ask(gb, conv, q)
                lat.append(ms)
                if r == 0:
                    shares.append(share)
                    toks.append(n)
    return {"lat": lat, "recall": statistics.mean(shares), "questions": len(shares),
            "tokens": statistics.median(toks)}  # fmt: skip


def one_dataset(path: Path, convs: list[Conversation], repeat: int) -> list[dict[str, Any]]:
    from gligabao import Memory

    out = []
    with Memory(path=path, user_id="scale") as gb:
        stored, seconds = remember(gb, convs)
        ruler.say(f"{len(convs)} conversation(s): {stored:,} tokens remembered in {seconds:.0f} s")
        out.append({"size": stored, "load_s": seconds, "asked": convs[0].id,
                    **measure(gb, convs[:1], repeat)})  # fmt: skip
        if len(convs) > 1:
            out.append({"size": stored, "load_s": seconds, "asked": "all",
                        **measure(gb, convs, 1)})  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(beam.DEFAULT_DATA))
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(load_average(), flush=True)
    convs = beam.load(Path(args.data))[: args.conversations]
    llm, emb = start_fakes(dim=args.dim, keep_alive=True)
    emb.stop()
    words = WordsOpenAI(dim=args.dim)
    words.keep_alive = True
    words.start()
    use_env({**fakes_env(llm, words), "GB_EMBEDDING_DIMENSION": str(args.dim)})
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, part in (("small", convs[:1]), ("large", convs)):
                for r in one_dataset(Path(tmp) / f"{name}.db", part, args.repeat):
                    rows.append([f"{r['size']:,}", r["asked"], r["questions"],
                                 f"{pct(r['lat'], 50):.1f}", f"{pct(r['lat'], 95):.1f}",
                                 f"{r['recall']:.3f}", f"{r['tokens']:,.0f}",
                                 f"{r['load_s']:.0f} s"])  # fmt: skip
                    print(table(["tokens", "asked", "questions", "p50 ms", "p95", "recall",
                                 "context", "load"], rows[-1:]), flush=True)  # fmt: skip
    finally:
        llm.stop()
        words.stop()
    print(table(["tokens", "asked", "questions", "p50 ms", "p95", "recall", "context", "load"],
                rows))  # fmt: skip
    print(load_average())
    return 0


if __name__ == "__main__":
    sys.exit(main())
