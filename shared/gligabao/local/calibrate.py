"""`gligabao calibrate`: measure the similarity thresholds of the configured
embedding model (any provider: the local model, OpenAI, Titan or Cohere on
Bedrock).

It embeds the name pairs of the resolution corpus (``resolution_corpus.json``
beside this module, the pairs bench/resolution.py runs through `remember`):
pairs that must merge and pairs that must stay apart, and questions against
relevant and unrelated facts. It prints every cosine and proposes:

* a resolve threshold: a name vector from it up makes a *candidate*, which
  merges only when the name rules (memory/names.py) find a reason. So it is
  set just under the least similar must-merge pair the rules accept (every
  such pair must be a candidate); the report shows what similarity alone
  would merge at it, and what the rules keep apart;
* a query threshold halfway between the best unrelated and the worst relevant
  question-fact score, when they separate (else: keep the rank cut).

The thresholds in gligabao.ai.calibration (CALIBRATED) were chosen from these figures.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ..ai.port import Embedder
from ..memory.names import match_reason

QUESTIONS = [
    ("Where does Alice work?", "works_at: Alice works at Acme.", "owns: Bob has a dog named Rex."),
    ("Who is Alice's employer?", "works_at: Alice works at Acme.", "lives_in: Bob lives in Lyon."),
    (
        "What pets does Bob have?",
        "owns: Bob has a dog named Rex.",
        "works_at: Alice works at Acme.",
    ),
    ("Where does Alice live?", "lives_in: Alice lives in Paris.", "owns: Bob has a dog named Rex."),
]
MARGIN = 0.01  # under the least similar must-merge pair: rounding never drops it


def resolution_cases() -> list[dict[str, Any]]:
    """The resolution corpus: each case a first and a second mention (name,
    type, text) and whether they ``merge`` or stay ``apart``."""
    text = resources.files(__package__).joinpath("resolution_corpus.json").read_text("utf-8")
    cases: list[dict[str, Any]] = json.loads(text)["cases"]
    return cases


@dataclass(frozen=True)
class Pair:
    first: str
    second: str
    merge: bool  # expected
    cosine: float
    reason: str | None  # the name rules' reason for the second to be the first


@dataclass(frozen=True)
class Calibration:
    pairs: list[Pair]
    relevant: list[float]
    unrelated: list[float]

    @property
    def resolve(self) -> float:
        accepted = [p.cosine for p in self.pairs if p.merge and p.reason]
        low = min(accepted, default=1.0)
        return min(1.0, max(0.0, math.floor((low - MARGIN) * 100) / 100))

    @property
    def query(self) -> float | None:
        low, high = max(self.unrelated), min(self.relevant)
        return round((low + high) / 2, 3) if high > low else None


def _cosine(a: list[float], b: list[float]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb) if na and nb else 0.0


def measure(emb: Embedder) -> Calibration:
    """Three embedding calls: the names, the facts, the questions."""
    cases = resolution_cases()
    names = sorted({c[k]["name"] for c in cases for k in ("first", "second")})
    facts = sorted({f for _, good, bad in QUESTIONS for f in (good, bad)})
    questions = [q for q, _, _ in QUESTIONS]
    name_vec = dict(zip(names, emb.embed(names, "document").vectors, strict=True))
    fact_vec = dict(zip(facts, emb.embed(facts, "document").vectors, strict=True))
    q_vecs = emb.embed(questions, "query").vectors
    pairs = [
        Pair(
            a["name"],
            b["name"],
            c["expect"] == "merge",
            _cosine(name_vec[a["name"]], name_vec[b["name"]]),
            match_reason(b["name"], b["type"], a["name"], a["type"]),
        )
        for c in cases
        for a, b in [(c["first"], c["second"])]
    ]
    return Calibration(
        pairs=pairs,
        relevant=[_cosine(v, fact_vec[g]) for v, (_, g, _) in zip(q_vecs, QUESTIONS, strict=True)],
        unrelated=[_cosine(v, fact_vec[b]) for v, (_, _, b) in zip(q_vecs, QUESTIONS, strict=True)],
    )


def _merged(pairs: list[Pair], threshold: float, rules: bool) -> tuple[int, list[Pair]]:
    """(must-merge pairs merged, wrong merges) at ``threshold``, by
    similarity alone or with the name rules."""
    merged = [p for p in pairs if p.cosine >= threshold and (p.reason or not rules)]
    return sum(p.merge for p in merged), [p for p in merged if not p.merge]


def report(model: str, cal: Calibration) -> list[str]:
    resolve, query = cal.resolve, cal.query
    lines = [f"model {model}", "", "name pairs (second ~ first), cosine, the name rules' reason:"]
    for p in sorted(cal.pairs, key=lambda p: (not p.merge, -p.cosine)):
        expect = "merge" if p.merge else "apart"
        lines.append(
            f"  {expect}  {p.second:>24} ~ {p.first:<24} {p.cosine:.3f}  {p.reason or '-'}"
        )
    lines.append("question -> relevant fact / unrelated fact:")
    for (q, _, _), good, bad in zip(QUESTIONS, cal.relevant, cal.unrelated, strict=True):
        lines.append(f"  {q:<28} relevant {good:.3f}  unrelated {bad:.3f}")
    must = sum(p.merge for p in cal.pairs)
    lines += ["", f"at resolve threshold {resolve:.2f}, of {must} must-merge pairs:"]
    for label, rules in (("similarity alone", False), ("with the name rules", True)):
        right, wrong = _merged(cal.pairs, resolve, rules)
        names = "; ".join(f"{p.second} ~ {p.first}" for p in wrong)
        lines.append(
            f"  {label:<19} merges {right}, wrong merges {len(wrong)}"
            + (f": {names}" if names else "")
        )
    lines += [
        "  (only the vector part: `remember` also finds candidates by the text's words;",
        "   bench/resolution.py runs these pairs through it)",
        f"relevant median {statistics.median(cal.relevant):.3f} (min {min(cal.relevant):.3f}); "
        f"unrelated median {statistics.median(cal.unrelated):.3f} (max {max(cal.unrelated):.3f})",
        "",
        f"GB_RESOLVE_THRESHOLD={resolve:.2f}  "
        "(name vectors from it up are candidates; every must-merge pair the name rules accept is one)",
    ]
    if query is None:
        lines.append(
            "GB_QUERY_THRESHOLD: none (relevant and unrelated facts overlap: keep the rank cut)"
        )
    else:
        lines.append(f"GB_QUERY_THRESHOLD={query:.3f}  (halfway between unrelated and relevant)")
    return lines
