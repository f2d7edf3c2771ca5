"""The scores of one question: of our context (the edges and passages the
query's LLM call was given) and of the baselines (messages ranked by cosine
and by BM25, cut to a number of tokens)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .gold import EDGE_LINE, ENTITY_LINE, Conv, section, times, tokens, when


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
