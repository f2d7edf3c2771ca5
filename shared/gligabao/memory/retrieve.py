"""retrieve: from a question to the context the answer is given from. No LLM
call (except the nearby search's place detection, when the server has geo on
and the caller asked).

The candidates are read in bounded pools (:mod:`.gather`, which also says in
how many round trips): keyword seeds (the spec's +5/+3/+1 scoring) and
similar entities, the live edges around the seeds (one hop) and around the
best one-hop neighbours (two hops), the similar facts, and the passages of a
hybrid search (BM25 and vectors fused by rank) and of the summary index,
plus the texts the best facts were stated in. Here each candidate gets a
score (keyword score, vector similarity, graph distance from the seeds,
words shared with the question, recency, provenance), and the context is
filled best first up to the token budget (:mod:`.context`).
"""

from __future__ import annotations

from typing import Any

from .. import clock
from ..config import Settings
from ..graph.port import GraphStore
from ..models import Artifact, DatasetKey, Edge, Entity
from ..notes.port import NotesStore
from ..records.meter import Meter
from ..text import estimate_tokens, passage_text
from ..vectors.port import VectorIndex
from .context import Context, Passage, Scored, fill
from .gather import Gathered, Gatherer, QueryInput, kept
from .notes_context import Note, notes_for
from .notes_context import render as render_notes
from .passages import beside_scores
from .rerank import rerank
from .scoring import (
    HOP1,
    W_BESIDE,
    W_PROVENANCE,
    W_RECENCY,
    W_SEED_LINE,
    W_SOURCE,
    W_WHEN,
    Period,
    damped,
    fact_score,
    passage_score,
    question_periods,
    reach,
    within,
)

__all__ = ["Context", "Passage", "QueryInput", "Retriever"]

PROVENANCE_FROM = 10  # best facts whose source text may join as a passage


class Retriever:
    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorIndex,
        settings: Settings,
        nearby: Any = None,
        notes: NotesStore | None = None,
    ) -> None:
        self.graph = graph
        self.settings = settings
        self.notes = notes  # summaries, preferences, instructions (None: none given)
        self.gatherer = Gatherer(graph, vectors, settings)
        self.nearby = nearby  # geo: the nearby search, when the server has geo on

    def retrieve(
        self, key: DatasetKey, inp: QueryInput, meter: Meter, *, check_dataset: bool = False
    ) -> Context:
        """The context of the question. With ``check_dataset``, NotFound when
        the dataset does not exist (read while the question is embedded)."""
        call = meter.call
        got = self.gatherer.gather(key, inp, meter, check_dataset=check_dataset)
        entities = dict(got.entities)

        nearby: dict[str, Any] | None = None
        near_edges: list[Edge] = []
        if self.nearby is not None:
            with call.step("nearby") as c:
                nearby, near_edges = self.nearby.search(key, inp, meter, got.matched)
                near_edges = [e for e in near_edges if kept(e, inp)]
                for n in (nearby or {}).pop("_entities", []):
                    entities.setdefault(n.id, n)
                need = {i for e in near_edges for i in (e.source_id, e.target_id)} - set(entities)
                if need:
                    entities.update(self.graph.get_entities(key, sorted(need)))
                c["entities"] = len(nearby["nearby"]) if nearby else 0

        with call.step("passages") as c:
            rows = dict(got.passages)
            # The texts the matched passages are (short texts) or are part of.
            matched_texts = set(rows) | {a.parent_id for a in rows.values() if a.parent_id}
            c["matched"] = len(rows)

        with call.step("score") as c:
            pool: dict[int, Edge] = {}
            for e in [*got.hop1.values(), *got.hop2, *got.similar_edges, *near_edges]:
                pool.setdefault(e.id, e)
            # An edge whose end was not read (its row is gone) is left out.
            pool = {
                i: e for i, e in pool.items() if e.source_id in entities and e.target_id in entities
            }
            periods = question_periods(inp.query)  # "in March 2024": what happened then
            age = {eid: n for n, eid in enumerate(sorted(pool), start=1)}
            facts = len(age)
            scored_edges: dict[int, float] = {}
            # Per question, not per fact: the hub damping of every entity, and
            # the attributes read in the loop (some 70 facts a question).
            passed = damped(got.led, got.degree)
            edge_sim, question = got.edge_sim, got.question
            for e in pool.values():
                graph_score = HOP1 * reach(e, passed)
                src, dst = entities[e.source_id].name, entities[e.target_id].name
                line = f"{src} {e.relation} {e.description} {dst}"
                s = fact_score(e, graph_score, edge_sim.get(e.id, 0.0), question, line)
                s += W_RECENCY * age[e.id] / facts
                if e.artifact_id in matched_texts:
                    s += W_PROVENANCE
                if periods and within(periods, e.valid_at, e.invalid_at):
                    s += W_WHEN
                scored_edges[e.id] = s
            best_facts = sorted(scored_edges, key=lambda i: -scored_edges[i])[:PROVENANCE_FROM]
            sources: dict[int, float] = {}
            for i in best_facts:
                aid = pool[i].artifact_id
                if aid is not None and aid not in rows and aid in got.texts:
                    sources[aid] = max(sources.get(aid, 0.0), W_SOURCE * scored_edges[i])
            rows.update({aid: got.texts[aid] for aid in sources})
            candidates = [Scored(s, edge=pool[i]) for i, s in scored_edges.items()]
            candidates += [
                Scored(W_SEED_LINE * got.strength[i], entity=entities[i])
                for i in got.seeds
                if i in entities
            ]
            candidates += self._passages(rows, got, sources, periods)
            c["candidates"] = len(candidates)
            c["sources"] = len(sources)

        candidates = rerank(meter, self.settings, inp.query, candidates, entities)
        with call.step("fill") as c:
            budget = inp.max_context_tokens or self.settings.context_tokens
            notes = self._notes(key, got, entities, budget)
            rest = budget - sum(estimate_tokens(line) + 1 for line in render_notes(notes))
            ctx = fill(candidates, entities, inp.query, clock.now_str(), rest, nearby, inp.as_of)
            ctx.notes, ctx.budget = notes, budget
            c["budget"] = budget
            c["notes"] = len(notes)
            c["entities"] = len(ctx.entities)
            c["edges"] = len(ctx.edges)
            c["passages"] = len(ctx.passages)
            c["left_out"] = ctx.left_out
            c["below_floor"] = ctx.below_floor
        return ctx

    def _notes(
        self, key: DatasetKey, got: Gathered, entities: dict[int, Entity], budget: int
    ) -> list[Note]:
        """The seeds' summaries and the user's preferences and instructions,
        under their share of the budget (memory/notes_context.py)."""
        if self.notes is None:
            return []
        seeds = [(i, entities[i].name) for i in got.seeds if i in entities]
        share = int(budget * self.settings.standing_share)
        return notes_for(self.notes, self.graph, key, got.found.vector, seeds, share)

    def _is_passage(self, a: Artifact) -> bool:
        # A chunk or window, or a text short enough to be searched whole.
        if a.parent_id is not None:
            return True
        whole = self.settings.passage_tokens or self.settings.chunk_threshold_tokens
        return estimate_tokens(a.text) <= whole

    def _passages(
        self,
        rows: dict[int, Artifact],
        got: Gathered,
        sources: dict[int, float],
        periods: list[Period],
    ) -> list[Scored]:
        """Matched passages, scored by rank (and as the source of a good fact
        too), and the source texts of the best facts that are passages."""
        ranks = got.ranks
        by_summary = {h.id for h in got.found.summaries}
        out: list[Scored] = []
        own: dict[int, float] = {}
        for cid, (rank, by_text) in ranks.items():
            row = rows.get(cid)
            if row is None:  # a deleted row's vector is dropped
                continue
            summary = row.summary if cid in by_summary else None
            # A turn's speaker is one of its words ("What did Melanie paint?").
            words = passage_text(row.text, row.speaker) if by_text else (summary or "")
            s = passage_score(rank, got.question, words) + sources.get(cid, 0.0)
            if within(periods, row.reference_time):
                s += W_WHEN
            own[cid] = s
            if by_text:
                whole = Passage(row, summary, row.text)
                short = [Passage(row, summary, None)] if summary is not None else []
                out.append(Scored(s, passage=whole, alternatives=short))
            elif summary is not None:
                out.append(Scored(s, passage=Passage(row, summary, None)))
        # The turns (windows) next to a match: the answer is often the reply.
        # (A row next to a match that is not a passage itself, a text with
        # chunks, is left out; one that is a fact's source is scored below.)
        near = {i: a for i, a in got.beside.items() if self._is_passage(a)}
        beside = beside_scores(own, rows, near, W_BESIDE)
        for c in out:
            if c.passage is not None and c.passage.chunk.id in beside:
                c.score = beside.pop(c.passage.chunk.id)
        for bid, s in beside.items():
            if bid in near:
                row = near[bid]
                out.append(Scored(s, passage=Passage(row, row.summary, row.text)))
        for aid, s in sources.items():
            row = rows.get(aid)
            if row is not None and aid not in ranks and self._is_passage(row):
                out.append(Scored(s, passage=Passage(row, row.summary, row.text)))
        return out
