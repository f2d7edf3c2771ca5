"""retrieve: from a question to the context the answer is given from. No LLM
call (except the nearby search's place detection, when the server has geo on
and the caller asked).

Candidates are gathered in bounded pools: keyword seeds (the spec's +5/+3/+1
scoring) and similar entities, the live edges around the seeds (one hop) and
around the best one-hop neighbours (two hops), the similar facts, and the
passages of a hybrid search (BM25 and vectors fused by rank) and of the
summary index, plus the texts the best facts were stated in. Each candidate
gets a score (keyword score, vector similarity, graph distance from the
seeds, words shared with the question, recency, provenance), and the context
is filled best first up to the token budget (:mod:`.context`).

Round trips do not grow with the graph: at most one query for the session's
last messages, one keyword query per term (at most 12), one batch read of the
names the question holds whole (and one of their entities), one embeddings
request, one vector search round trip, one batch read of the similar facts and
of the seeds, one or two edge queries per seed (at most 35 seeds) and per
two-hop neighbour (at most ``HOP2_FROM``), one batch read of the entities, two
of the passages (the matched ones, then the texts the best facts came from).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .. import clock
from ..config import Settings
from ..graph.port import GraphStore
from ..models import Artifact, DatasetKey, Edge, Entity
from ..records.meter import Meter
from ..text import estimate_tokens, index_terms, query_terms
from ..vectors.port import Hit, SearchRequest, VectorIndex
from .context import Context, Passage, Scored, fill
from .keywords import keyword_scores
from .options import StageOptions
from .scoring import (
    HOP1,
    HOP2,
    W_ENTITY_SIM,
    W_KEYWORD,
    W_PROVENANCE,
    W_RECENCY,
    W_SEED_LINE,
    W_SOURCE,
    W_WHEN,
    Period,
    above,
    fact_score,
    passage_score,
    question_periods,
    stem,
    within,
)
from .temporal import Interval, contains

__all__ = ["Context", "Passage", "QueryInput", "Retriever"]

# Candidate pools (what may compete for the budget, not what is sent).
KEYWORD_SEEDS = 10
SIMILAR_ENTITIES = 10
SIMILAR_EDGES = 20
SIMILAR_PASSAGES = 10
SIMILAR_SUMMARIES = 5
FALLBACK_SEEDS = 25
EDGE_CAP = 100  # one hop
HOP2_FROM = 8  # one-hop neighbours whose edges are read (two hops)
HOP2_CAP = 50
HUB_DEGREE = 5  # a seed with more facts than this passes less to each
PROVENANCE_FROM = 10  # best facts whose source text may join as a passage
SESSION_MESSAGES = 2  # the session's last messages embedded with the question
SESSION_LOOKBACK = 20  # newest artifacts read to find them
SESSION_CHARS = 1000  # of each message, its end


@dataclass
class QueryInput:
    user_id: str
    dataset: str
    query: str
    session_id: str | None
    options: StageOptions
    geo_radius_km: float | None = None  # set when the caller asked for nearby search
    as_of: str | None = None  # the world as it stood then (RFC 3339 UTC), else now
    max_context_tokens: int | None = None  # the request's budget; else the server's


def _passage_rank(chunk_hits: list[Hit], summary_hits: list[Hit]) -> dict[int, tuple[int, bool]]:
    """Chunk ID -> (best rank in either list, found by its text)."""
    out: dict[int, tuple[int, bool]] = {}
    for rank, h in enumerate(chunk_hits):
        out.setdefault(h.id, (rank, True))
    for rank, h in enumerate(summary_hits):
        best, by_text = out.get(h.id, (rank, False))
        out[h.id] = (min(best, rank), by_text)
    return out


def _held(edge: Edge, instant: str) -> bool:
    """The edge's fact held at ``instant`` (its validity interval contains it)."""
    return contains(Interval(edge.valid_at, edge.invalid_at), instant)


def reach(e: Edge, strength: dict[int, float], degree: Counter[int]) -> float:
    """What a fact gets from its ends: the stronger end's strength, damped
    for a hub (a seed with many facts passes less to each, as in a random
    walk from the seeds)."""
    best = 0.0
    for end in (e.source_id, e.target_id):
        d = degree.get(end, 0)
        damp = min(1.0, math.sqrt(HUB_DEGREE / d)) if d else 1.0
        best = max(best, strength.get(end, 0.0) * damp)
    return best


def name_terms(entities: dict[int, Entity], i: int) -> set[str]:
    e = entities.get(i)
    return index_terms(e.name) if e is not None else set()


class Retriever:
    def __init__(
        self, graph: GraphStore, vectors: VectorIndex, settings: Settings, nearby: Any = None
    ) -> None:
        self.graph = graph
        self.vectors = vectors
        self.settings = settings
        self.nearby = nearby  # geo: the nearby search, when the server has geo on

    def _session_said(self, key: DatasetKey, inp: QueryInput) -> list[str]:
        """The session's last messages, oldest first (their ends): what "what
        about her?" refers to. The newest artifacts of the dataset are read,
        so a session quiet for a while behind others has none."""
        if inp.session_id is None:
            return []
        recent = self.graph.recent_artifacts(key, SESSION_LOOKBACK)
        last = [a for a in recent if a.session_id == inp.session_id and a.parent_id is None]
        return [a.text[-SESSION_CHARS:] for a in reversed(last[:SESSION_MESSAGES])]

    def retrieve(self, key: DatasetKey, inp: QueryInput, meter: Meter) -> Context:
        call = meter.call
        with call.step("keyword_seeds") as c:
            terms = query_terms(inp.query)
            kw = keyword_scores(self.graph, key, inp.query, terms, KEYWORD_SEEDS)
            c["terms"] = len(terms)
            c["seeds"] = len(kw)

        with call.step("search_vectors") as c:
            said = self._session_said(key, inp)
            qvec = meter.embed(["\n".join([*said, inp.query])], "query").vectors[0]
            t = self.settings.query_threshold
            ent_hits, edge_hits, chunk_hits, sum_hits = self.vectors.search(
                key,
                [
                    SearchRequest("entities", qvec, SIMILAR_ENTITIES, t),
                    SearchRequest("edges", qvec, SIMILAR_EDGES, t),
                    SearchRequest("chunks", qvec, SIMILAR_PASSAGES, t, text=inp.query),
                    SearchRequest("summaries", qvec, SIMILAR_SUMMARIES, t),
                ],
            )
            c["session_messages"] = len(said)
            c["entities"] = len(ent_hits)
            c["edges"] = len(edge_hits)
            c["chunks"] = len(chunk_hits)
            c["summaries"] = len(sum_hits)

        with call.step("expand") as c:
            strength: dict[int, float] = {i: W_KEYWORD * s for i, s in kw.items()}
            for h in ent_hits:
                strength[h.id] = strength.get(h.id, 0.0) + W_ENTITY_SIM * h.score
            edge_sim = {h.id: above(h.score, t) for h in edge_hits}
            # Superseded facts never enter the context, whichever way they
            # came; with as_of, the facts valid then do, superseded or not.
            similar_edges = [
                e for e in self.graph.get_edges(key, list(edge_sim)).values() if self._kept(e, inp)
            ]
            matched = list(strength)
            seed_entities = self.graph.get_entities(key, matched) if matched else {}
            strength = {i: s for i, s in strength.items() if i in seed_entities}  # deleted rows
            matched_entities = [seed_entities[i] for i in matched if i in seed_entities]
            fallback = False
            if not strength and not similar_edges:
                recent = self.graph.recent_entities(key, FALLBACK_SEEDS)
                seed_entities = {e.id: e for e in recent}
                strength = {e.id: W_KEYWORD for e in recent}
                fallback = True
            seeds = sorted(strength, key=lambda i: (-strength[i], i))
            around = self._around(key, seeds, EDGE_CAP, inp)
            hop1 = {e.id: e for e in around}
            # The question's words that say more than a seed's name: "Dana"
            # is in every fact around Dana, "brother" picks one of them.
            named = {stem(t) for i in kw if kw[i] >= 3 for t in name_terms(seed_entities, i)}
            question = {stem(t) for t in terms} - named
            degree = Counter(end for e in around for end in {e.source_id, e.target_id})
            # Two hops: the best one-hop facts (scored on their own words, the
            # names are not read yet) lend the entity they lead to a share of
            # their score; the best such entities that are not seeds
            # have their edges read (at most HOP2_FROM).
            one_hop = {
                e.id: fact_score(
                    e,
                    HOP1 * reach(e, strength, degree),
                    edge_sim.get(e.id, 0.0),
                    question,
                    f"{e.relation} {e.description}",
                )
                for e in around
            }
            led: dict[int, float] = {}
            for e in around:
                a, b = e.source_id, e.target_id
                far = b if strength.get(a, 0.0) >= strength.get(b, 0.0) else a
                led[far] = max(led.get(far, 0.0), HOP2 * one_hop[e.id])
            ahead = sorted((n for n in led if n not in strength), key=lambda n: (-led[n], -n))
            neighbours = ahead[:HOP2_FROM]
            hop2 = [e for e in self._around(key, neighbours, HOP2_CAP, inp) if e.id not in hop1]
            # What an entity passes to its facts: its own strength as a seed,
            # or what the facts leading to it lent it, whichever is more.
            led = {n: max(strength.get(n, 0.0), led.get(n, 0.0)) for n in {*strength, *led}}
            c["seeds"] = len(seeds)
            c["fallback"] = int(fallback)
            c["edges"] = len(hop1)
            c["two_hop_edges"] = len(hop2)

        nearby: dict[str, Any] | None = None
        near_edges: list[Edge] = []
        if self.nearby is not None:
            with call.step("nearby") as c:
                nearby, near_edges = self.nearby.search(key, inp, meter, matched_entities)
                near_edges = [e for e in near_edges if self._kept(e, inp)]
                c["entities"] = len(nearby["nearby"]) if nearby else 0

        with call.step("entities") as c:
            entities = dict(seed_entities)
            if nearby:
                for n in nearby.pop("_entities", []):
                    entities.setdefault(n.id, n)
            pool: dict[int, Edge] = {}
            for e in [*hop1.values(), *hop2, *similar_edges, *near_edges]:
                pool.setdefault(e.id, e)
            need = {i for e in pool.values() for i in (e.source_id, e.target_id)} - set(entities)
            if need:
                entities.update(self.graph.get_entities(key, sorted(need)))
            # An edge whose endpoint row is gone cannot be read: leave it out.
            pool = {
                i: e for i, e in pool.items() if e.source_id in entities and e.target_id in entities
            }
            c["entities"] = len(entities)

        with call.step("passages") as c:
            ranks = _passage_rank(chunk_hits, sum_hits)
            rows = self.graph.get_artifacts(key, list(ranks)) if ranks else {}
            # The texts the matched passages are (short texts) or are part of.
            matched_texts = set(rows) | {a.parent_id for a in rows.values() if a.parent_id}
            c["matched"] = len(rows)

        with call.step("score") as c:
            periods = question_periods(inp.query)  # "in March 2024": what happened then
            age = {eid: n for n, eid in enumerate(sorted(pool), start=1)}
            scored_edges: dict[int, float] = {}
            for e in pool.values():
                graph_score = HOP1 * reach(e, led, degree)
                src, dst = entities[e.source_id].name, entities[e.target_id].name
                line = f"{src} {e.relation} {e.description} {dst}"
                s = fact_score(e, graph_score, edge_sim.get(e.id, 0.0), question, line)
                s += W_RECENCY * age[e.id] / len(age)
                if e.artifact_id in matched_texts:
                    s += W_PROVENANCE
                if within(periods, e.valid_at, e.invalid_at):
                    s += W_WHEN
                scored_edges[e.id] = s
            best_facts = sorted(scored_edges, key=lambda i: -scored_edges[i])[:PROVENANCE_FROM]
            sources: dict[int, float] = {}
            for i in best_facts:
                aid = pool[i].artifact_id
                if aid is not None and aid not in rows:
                    sources[aid] = max(sources.get(aid, 0.0), W_SOURCE * scored_edges[i])
            if sources:
                rows.update(self.graph.get_artifacts(key, list(sources)))
            candidates = [Scored(s, edge=pool[i]) for i, s in scored_edges.items()]
            candidates += [
                Scored(W_SEED_LINE * strength[i], entity=entities[i])
                for i in seeds
                if i in entities
            ]
            candidates += self._passages(rows, sum_hits, ranks, sources, question, periods)
            c["candidates"] = len(candidates)
            c["sources"] = len(sources)

        with call.step("fill") as c:
            budget = inp.max_context_tokens or self.settings.context_tokens
            ctx = fill(candidates, entities, inp.query, clock.now_str(), budget, nearby, inp.as_of)
            c["budget"] = budget
            c["entities"] = len(ctx.entities)
            c["edges"] = len(ctx.edges)
            c["passages"] = len(ctx.passages)
            c["left_out"] = ctx.left_out
            c["below_floor"] = ctx.below_floor
        return ctx

    @staticmethod
    def _kept(e: Edge, inp: QueryInput) -> bool:
        return e.live if inp.as_of is None else _held(e, inp.as_of)

    def _around(self, key: DatasetKey, ids: list[int], limit: int, inp: QueryInput) -> list[Edge]:
        """The live edges around the entities; with as_of, the superseded ones
        too, and of both only the facts that held then."""
        if not ids:
            return []
        edges = self.graph.live_edges_around(key, ids, limit)
        if inp.as_of is None:
            return edges
        edges += self.graph.expired_edges_around(key, ids, limit)
        return [e for e in edges if _held(e, inp.as_of)]

    def _is_passage(self, a: Artifact) -> bool:
        # A chunk, or a text short enough not to have been chunked.
        if a.parent_id is not None:
            return True
        return estimate_tokens(a.text) <= self.settings.chunk_threshold_tokens

    def _passages(
        self,
        rows: dict[int, Artifact],
        sum_hits: list[Hit],
        ranks: dict[int, tuple[int, bool]],
        sources: dict[int, float],
        question: set[str],
        periods: list[Period],
    ) -> list[Scored]:
        """Matched passages, scored by rank (and as the source of a good fact
        too), and the source texts of the best facts that are passages."""
        by_summary = {h.id for h in sum_hits}
        out: list[Scored] = []
        for cid, (rank, by_text) in ranks.items():
            row = rows.get(cid)
            if row is None:  # a deleted row's vector is dropped
                continue
            summary = row.summary if cid in by_summary else None
            words = row.text if by_text else (summary or "")
            s = passage_score(rank, question, words) + sources.get(cid, 0.0)
            if within(periods, row.reference_time):
                s += W_WHEN
            if by_text:
                whole = Passage(row, summary, row.text)
                short = [Passage(row, summary, None)] if summary is not None else []
                out.append(Scored(s, passage=whole, alternatives=short))
            elif summary is not None:
                out.append(Scored(s, passage=Passage(row, summary, None)))
        for aid, s in sources.items():
            row = rows.get(aid)
            if row is not None and aid not in ranks and self._is_passage(row):
                out.append(Scored(s, passage=Passage(row, row.summary, row.text)))
        return out
