"""`gligabao calibrate`: measure the similarity thresholds of the configured
embedding model (any provider: the local model, OpenAI, Titan or Cohere on
Bedrock).

It embeds name pairs that must stay apart (a false merge corrupts memory for
good), name pairs that are the same thing, and questions against relevant and
unrelated facts, prints every cosine, and proposes:

* a resolve threshold just above the most similar distinct pair;
* a query threshold halfway between the best unrelated and the worst relevant
  question-fact score, when they separate (else: keep the rank cut).

The thresholds in gligabao.config (CALIBRATED) were chosen from these figures.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from ..ai.port import Embedder

DISTINCT = [("Paris", "London"), ("Alice", "Bob"), ("Acme", "Globex"), ("dog", "cat"),
            ("Lyon", "Paris"), ("Microsoft", "Google"), ("Robert", "Bob"), ("Bob", "Bobby"),
            ("Alice", "Alicia"), ("Dr. Smith", "John Smith")]
SAME = [("Acme", "Acme Corp"), ("Acme", "Acme Corporation"), ("Globex", "Globex Inc."),
        ("New York", "NYC"), ("Paris", "paris")]
QUESTIONS = [
    ("Where does Alice work?", "works_at: Alice works at Acme.", "owns: Bob has a dog named Rex."),
    ("Who is Alice's employer?", "works_at: Alice works at Acme.", "lives_in: Bob lives in Lyon."),
    ("What pets does Bob have?", "owns: Bob has a dog named Rex.", "works_at: Alice works at Acme."),
    ("Where does Alice live?", "lives_in: Alice lives in Paris.", "owns: Bob has a dog named Rex."),
]
MARGIN = 0.01  # above the closest distinct pair: rounding never merges it


@dataclass(frozen=True)
class Calibration:
    distinct: list[float]
    same: list[float]
    relevant: list[float]
    unrelated: list[float]

    @property
    def resolve(self) -> float:
        return math.ceil((max(self.distinct) + MARGIN) * 100) / 100

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
    names = sorted({n for pair in DISTINCT + SAME for n in pair})
    facts = sorted({f for _, good, bad in QUESTIONS for f in (good, bad)})
    questions = [q for q, _, _ in QUESTIONS]
    name_vec = dict(zip(names, emb.embed(names, "document").vectors, strict=True))
    fact_vec = dict(zip(facts, emb.embed(facts, "document").vectors, strict=True))
    q_vecs = emb.embed(questions, "query").vectors
    return Calibration(
        distinct=[_cosine(name_vec[a], name_vec[b]) for a, b in DISTINCT],
        same=[_cosine(name_vec[a], name_vec[b]) for a, b in SAME],
        relevant=[_cosine(v, fact_vec[g]) for v, (_, g, _) in zip(q_vecs, QUESTIONS, strict=True)],
        unrelated=[_cosine(v, fact_vec[b]) for v, (_, _, b) in zip(q_vecs, QUESTIONS, strict=True)],
    )


def report(model: str, cal: Calibration) -> list[str]:
    resolve, query = cal.resolve, cal.query
    lines = [f"model {model}", "", "name pairs that must stay distinct:"]
    for (a, b), s in zip(DISTINCT, cal.distinct, strict=True):
        lines.append(f"  {a:>12} ~ {b:<12} {s:.3f}")
    lines.append("name pairs that are the same entity:")
    for (a, b), s in zip(SAME, cal.same, strict=True):
        lines.append(f"  {a:>12} ~ {b:<18} {s:.3f}{'  merged' if s >= resolve else '  missed'}")
    lines.append("question -> relevant fact / unrelated fact:")
    for (q, _, _), good, bad in zip(QUESTIONS, cal.relevant, cal.unrelated, strict=True):
        lines.append(f"  {q:<28} relevant {good:.3f}  unrelated {bad:.3f}")
    lines += [
        "",
        f"max distinct {max(cal.distinct):.3f}  min same {min(cal.same):.3f}",
        f"relevant median {statistics.median(cal.relevant):.3f} (min {min(cal.relevant):.3f}); "
        f"unrelated median {statistics.median(cal.unrelated):.3f} (max {max(cal.unrelated):.3f})",
        "",
        f"GB_RESOLVE_THRESHOLD={resolve:.2f}  "
        "(no distinct pair above it; same-name pairs below it still merge by name)",
    ]
    if query is None:
        lines.append("GB_QUERY_THRESHOLD: none (relevant and unrelated facts overlap: keep the rank cut)")
    else:
        lines.append(f"GB_QUERY_THRESHOLD={query:.3f}  (halfway between unrelated and relevant)")
    return lines
