"""rerank: with a reranker configured (GB_RERANK_PROVIDER; off by default),
the best facts and passages of a query go to it in one request, and its order
replaces theirs before the context is filled.

The reranker decides the order, not the amount: the candidates it ranked
take the scores they had among themselves, best score to its best document.
So the relevance floor and the budget cut as many as before, and a candidate
it did not see (past GB_RERANK_CANDIDATES) keeps its score, below all of
them. A seed's own line (a name) is left as it is: it is not a passage a
cross-encoder can judge, and it is held to no floor.

A reranker that fails after its retries fails the query (502), as the
embedder and the LLM do: the server was set up to rerank, and answering from
the other order without a word would hide a broken reranker (a region
without the model, a missing permission) behind answers that look fine. Its
inference row records the failure.
"""

from __future__ import annotations

from dataclasses import replace

from ..ai.rerank.port import RerankRequest
from ..config import Settings
from ..models import Entity
from ..records.meter import Meter
from ..text import passage_text
from .context import Scored
from .scoring import Score

# A document longer than this is cut (about 2,000 tokens: a chunk is 800).
# Bedrock takes 32,000 characters; the models read only their window.
DOC_MAX_CHARS = 8000
TIE_STEP = 1e-9  # keeps the reranker's order where two old scores were equal


def rerank(
    meter: Meter,
    settings: Settings,
    question: str,
    candidates: list[Scored],
    entities: dict[int, Entity],
) -> list[Scored]:
    """The candidates, the best facts and passages reordered by the reranker
    (unchanged when the call has none, or fewer than two to order)."""
    if not meter.reranks:
        return candidates
    best_first = sorted(range(len(candidates)), key=lambda i: (-candidates[i].score, i))
    pool = [i for i in best_first if candidates[i].entity is None][: settings.rerank_candidates]
    if len(pool) < 2:
        return candidates
    with meter.call.step("rerank") as c:
        docs = [document(candidates[i], entities)[:DOC_MAX_CHARS] for i in pool]
        reply = meter.rerank(RerankRequest(question, docs))
        order = [pool[r.index] for r in reply.results]
        seen = set(order)
        order += [i for i in pool if i not in seen]  # left out by the server: last
        out = list(candidates)
        previous = float("inf")
        for i, old in zip(order, (candidates[j].score for j in pool), strict=True):
            score = min(old, previous - TIE_STEP)
            why = candidates[i].why
            if why is not None:  # an explain shows the score it had and the one it takes
                why = Score(why.parts, {**why.inputs, "reranked_score": score})
            out[i] = replace(candidates[i], score=score, why=why)
            previous = score
        c["documents"] = len(docs)
        c["moved"] = sum(1 for a, b in zip(order, pool, strict=True) if a != b)
    return out


def document(candidate: Scored, entities: dict[int, Entity]) -> str:
    """What the reranker reads of a candidate: a fact as a sentence with its
    two names, a passage as its text after its speaker (or its summary) and
    its date, which questions about time need, as the context shows them."""
    if candidate.edge is not None:
        e = candidate.edge
        src, dst = entities[e.source_id].name, entities[e.target_id].name
        return f"{src} {e.relation.replace('_', ' ')} {dst}: {e.description}"
    if candidate.passage is not None:
        p = candidate.passage
        body = passage_text(p.text, p.chunk.speaker) if p.text is not None else (p.summary or "")
        return f"{p.chunk.reference_time[:10]}: {body}"
    return ""
