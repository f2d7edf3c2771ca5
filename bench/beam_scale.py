"""Search at a million tokens beside a hundred thousand: BEAM's dev
conversations remembered turn by turn, one of them alone (~100K tokens) and
all ten in one dataset (~1M tokens), and the same questions asked of both.

    .venv/bin/python -m bench.beam_scale [--data PATH] [--conversations 10]
        [--dim 384] [--repeat 3] [--set NAME=VALUE] [--sweep NAME=V1,V2]

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

Per dataset: the tokens remembered (the product's estimate, characters / 4:
a BEAM "100K" conversation is ~170-225K of them) and the time it took; then
``--repeat`` rounds, each opening one dataset and then the other and asking
every question with evidence of the first conversation with ``search`` once
(after a warm-up): p50 and p95 over every ask, and the median CPU time
of this process per ask (the steadier figure on a shared machine; it
includes the fake embedder's bag of words, the same for every profile); recall as bench.beam
measures it (the share of a question's evidence messages whose text, or one
of its windows, reached the context), and the context's tokens. On the large
dataset the questions of every conversation are asked too (recall over all
of BEAM's dev questions with the other nine conversations beside each).
The fake server answers from this process (as the embedder's requests of
both sizes alike). Printed, never asserted.
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


def ask(gb: Any, conv: Conversation, q: Question) -> tuple[float, float, float, int]:
    """(ms, CPU ms of this process, share of the evidence found, context tokens)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = gb.search(q.text)
    ms = (time.perf_counter() - t0) * 1000
    cpu = (time.process_time() - c0) * 1000
    parts = [p.text or p.summary or "" for p in out.passages]
    parts += [e.description or "" for e in out.edges]
    found = found_in(parts, conv, q, "turns")
    return ms, cpu, len(found) / len(q.evidence), int(out.context_tokens)


Asked = tuple[list[float], list[float], list[float], list[int]]


def asked(gb: Any, convs: list[Conversation]) -> Asked:
    """Every question of ``convs`` once, after a warm-up: (ms, CPU ms, shares, tokens)."""
    gb.search("warm up")
    out: Asked = ([], [], [], [])
    for conv in convs:
        for q in conv.questions:
            for got, x in zip(out, ask(gb, conv, q), strict=True):
                got.append(x)  # type: ignore[arg-type]
    return out


def result(size: int, load_s: float, who: str, got: list[Asked]) -> dict[str, Any]:
    """One row: p50 and p95 over every round's asks, CPU's median, recall and
    context of the first."""
    return {"size": size, "load_s": load_s, "asked": who, "lat": [x for g in got for x in g[0]],
            "cpu": statistics.median(x for g in got for x in g[1]),
            "recall": statistics.mean(got[0][2]), "questions": len(got[0][2]),
            "tokens": statistics.median(got[0][3])}  # fmt: skip


Profiles = list[tuple[str, dict[str, Any]]]


def run(tmp: Path, convs: list[Conversation], repeat: int, profs: Profiles) -> list[dict[str, Any]]:
    """Both datasets remembered, then ``repeat`` rounds that each open one
    and then the other, once per profile (``--sweep``), and ask the first
    conversation's questions (a change of the machine's load falls on all
    alike); last, on the large one, every conversation's questions once per
    profile."""
    from gligabao import Memory

    sets = {"small": convs[:1], "large": convs}
    loaded: dict[str, tuple[int, float]] = {}
    for name, part in sets.items():
        with Memory(path=tmp / f"{name}.db", user_id="scale") as gb:
            loaded[name] = remember(gb, part)
        ruler.say(f"{len(part)} conversation(s): {loaded[name][0]:,} tokens remembered "
                  f"in {loaded[name][1]:.0f} s")  # fmt: skip
    got: dict[tuple[str, str], list[Any]] = {(n, label): [] for n in sets for label, _ in profs}
    for _ in range(repeat):
        for name in sets:
            for label, fields in profs:
                with Memory(tmp / f"{name}.db", user_id="scale", retrieval_profile=fields) as gb:
                    got[name, label].append(asked(gb, convs[:1]))
    out = [
        {**result(*loaded[n], convs[0].id, g), "profile": label} for (n, label), g in got.items()
    ]
    for label, fields in profs if len(convs) > 1 else []:
        with Memory(tmp / "large.db", user_id="scale", retrieval_profile=fields) as gb:
            out.append({**result(*loaded["large"], "all", [asked(gb, convs)]), "profile": label})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(beam.DEFAULT_DATA))
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--repeat", type=int, default=5)
    ruler.profile_options(ap)
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
            for r in run(Path(tmp), convs, args.repeat, ruler.profiles(args)):
                rows.append([r["profile"], f"{r['size']:,}", r["asked"], r["questions"],
                             f"{pct(r['lat'], 50):.1f}", f"{pct(r['lat'], 95):.1f}",
                             f"{r['cpu']:.1f}",
                             f"{r['recall']:.3f}", f"{r['tokens']:,.0f}",
                             f"{r['load_s']:.0f} s"])  # fmt: skip
    finally:
        llm.stop()
        words.stop()
    print(table(["profile", "tokens", "asked", "questions", "p50 ms", "p95", "CPU ms", "recall", "context", "load"],
                rows))  # fmt: skip
    print(load_average())
    return 0


if __name__ == "__main__":
    sys.exit(main())
