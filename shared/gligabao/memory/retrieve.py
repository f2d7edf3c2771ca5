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

from collections.abc import Callable
from typing import Any

from .. import clock, deadline
from ..config import Settings
from ..graph.port import GraphStore
from ..models import Artifact, DatasetKey, Edge, Entity
from ..notes.port import NotesStore
from ..records.meter import Meter
from ..retrieval_profile import RetrievalProfile
from ..text import estimate_tokens, passage_text
from ..vectors.port import VectorIndex
from .attributes import relation_filter
from .context import Context, Passage, Scored, fill
from .coverage import cover, fill_profile, prompt_ids, prompts_of
from .explain import left_out, record
from .gather import Gathered, Gatherer, QueryInput, kept
from .notes_context import Note, notes_for
from .notes_context import render as render_notes
from .passages import beside_scores
from .rerank import rerank
from .scoring import (
    Period,
    Score,
    damped,
    fact_score,
    passage_score,
    question_periods,
    reach,
    seed_line_score,
    source_only,
    source_score,
    within,
)

__all__ = ["Context", "Passage", "QueryInput", "Retriever"]


class Retriever:
    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorIndex,
        settings: Settings,
        nearby: Any = None,
        profile: RetrievalProfile | None = None,
        notes: NotesStore | None = None,
    ) -> None:
        self.graph = graph
        self.settings = settings
        self.notes = notes  # summaries, preferences, instructions (None: none given)
        self.gatherer = Gatherer(graph, vectors, settings)
        self.nearby = nearby  # geo: the nearby search, when the server has geo on
        # The deployment's profile (GB_RETRIEVAL_PROFILE); a request's replaces it.
        self.profile = profile if profile is not None else settings.profile

    def _edge_types(self, key: DatasetKey, inp: QueryInput) -> Callable[[Edge], bool] | None:
        """Which facts the ``edge_types`` asked for keep (None: all); one
        read (the schema, to tell a typed fact from a free one), only when
        asked."""
        if inp.edge_types is None:
            return None
        return relation_filter(inp.edge_types, self.graph.get_schema(key))

    def retrieve(
        self, key: DatasetKey, inp: QueryInput, meter: Meter, *, check_dataset: bool = False
    ) -> Context:
        """The context of the question. With ``check_dataset``, NotFound when
        the dataset does not exist (read while the question is embedded)."""
        p = inp.profile or self.profile
        got = self.gatherer.gather(key, inp, meter, p, check_dataset=check_dataset)
        # A stage boundary after the question's embedding: a call whose client
        # has gone (the local server) or whose time ran out ends here.
        deadline.check("the scoring")
        entities = dict(got.entities)
        nearby, near_edges = self._nearby(key, inp, meter, got, entities)

        if inp.entity_types is not None:  # asked for: these types only (and facts between them)
            entities = {i: e for i, e in entities.items() if e.type.casefold() in inp.entity_types}

        with meter.call.step("passages") as c:
            rows = dict(got.passages.rows)
            # The texts the matched passages are (short texts) or are part of.
            matched_texts = set(rows) | {a.parent_id for a in rows.values() if a.parent_id}
            c["matched"] = len(rows)

        with meter.call.step("score") as c:
            pool = _fact_pool(got, near_edges, entities, self._edge_types(key, inp))
            periods = question_periods(inp.query)  # "in March 2024": what happened then
            facts = _score_facts(pool, got, entities, matched_texts, periods, p)
            sources = _sources(facts, pool, rows, got, p)
            rows.update({aid: got.passages.texts[aid] for aid in sources})
            candidates = [Scored(s.total, edge=pool[i], why=s) for i, s in facts.items()]
            candidates += _seed_lines(got, entities, p)
            candidates += self._passages(rows, got, sources, periods, p)
            c["candidates"] = len(candidates)
            c["sources"] = len(sources)

        candidates = rerank(meter, self.settings, inp.query, candidates, entities)
        candidates += self._prompts(key, candidates, got, p)
        candidates = cover(inp.query, candidates, p)
        with meter.call.step("fill") as c:
            budget = inp.max_context_tokens or self.settings.context_tokens
            notes = self._notes(key, got, entities, budget, p)
            rest = budget - sum(estimate_tokens(line) + 1 for line in render_notes(notes))
            at = fill_profile(inp.query, p)  # a many-message question fills its budget
            ctx = fill(
                candidates, entities, inp.query, clock.now_str(), rest, nearby, inp.as_of, at
            )
            ctx.notes, ctx.budget = notes, budget
            c["budget"] = budget
            c["notes"] = len(notes)
            c["entities"] = len(ctx.entities)
            c["edges"] = len(ctx.edges)
            c["passages"] = len(ctx.passages)
            c["left_out"] = ctx.left_out
            c["below_floor"] = ctx.below_floor
        if inp.explain:
            ctx.explained = left_out(ctx, entities, p.left_out_shown)
            meter.call.result = {"explain": record(ctx, ctx.explained)}
        return ctx

    def _nearby(
        self,
        key: DatasetKey,
        inp: QueryInput,
        meter: Meter,
        got: Gathered,
        entities: dict[int, Entity],
    ) -> tuple[dict[str, Any] | None, list[Edge]]:
        """geo: the places near the matched ones and their facts (``entities``
        gains their rows); nothing when the server has geo off."""
        if self.nearby is None:
            return None, []
        with meter.call.step("nearby") as c:
            nearby, near_edges = self.nearby.search(key, inp, meter, got.seeds.matched)
            near_edges = [e for e in near_edges if kept(e, inp)]
            for n in (nearby or {}).pop("_entities", []):
                entities.setdefault(n.id, n)
            need = {i for e in near_edges for i in (e.source_id, e.target_id)} - set(entities)
            if need:
                entities.update(self.graph.get_entities(key, sorted(need)))
            c["entities"] = len(nearby["nearby"]) if nearby else 0
        return nearby, near_edges

    def _notes(
        self,
        key: DatasetKey,
        got: Gathered,
        entities: dict[int, Entity],
        budget: int,
        p: RetrievalProfile,
    ) -> list[Note]:
        """The seeds' summaries and the user's preferences and instructions,
        under their share of the budget (memory/notes_context.py)."""
        if self.notes is None:
            return []
        seeds = [(i, entities[i].name) for i in got.seeds.order if i in entities]
        share = int(budget * self.settings.standing_share)
        vector = got.passages.found.vector
        return notes_for(
            self.notes, self.graph, key, vector, seeds, share, p.notes_summaries, p.notes_standing
        )

    def _prompts(
        self, key: DatasetKey, candidates: list[Scored], got: Gathered, p: RetrievalProfile
    ) -> list[Scored]:
        """The user's turns the best matched windows of the assistant's
        replies answer (memory/coverage.py): one batch read of those not
        read yet."""
        if not p.w_prompt:
            return []
        wanted = prompt_ids(candidates, p.neighbours_of)
        known = {**got.passages.beside, **got.passages.rows, **got.passages.texts}
        unread = [i for i in wanted if i not in known and i > 0]
        rows = {i: known[i] for i in wanted if i in known}
        if unread:
            rows.update(self.graph.get_artifacts(key, unread))
        return prompts_of(candidates, wanted, rows, p)

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
        sources: dict[int, tuple[int, float]],
        periods: list[Period],
        p: RetrievalProfile,
    ) -> list[Scored]:
        """Matched passages, scored by rank (and as the source of a good fact
        too), the rows next to them, and the source texts of the best facts
        that are passages."""
        out, own = _matched(rows, got, sources, periods, p)
        # The turns (windows) next to a match: the answer is often the reply.
        # (A row next to a match that is not a passage itself, a text with
        # chunks, is left out; one that is a fact's source is scored below.)
        near = {i: a for i, a in got.passages.beside.items() if self._is_passage(a)}
        beside = beside_scores(own, rows, near, p)
        for c in out:
            if c.passage is not None and c.passage.chunk.id in beside:
                s = beside.pop(c.passage.chunk.id)
                pool = c.why.inputs.get("pool") if c.why is not None else None
                s.inputs.update(pool=pool, own_score=c.score)
                c.score, c.why = s.total, s
        for bid, s in beside.items():
            if bid in near:
                nb = near[bid]
                s.inputs["pool"] = "beside"
                out.append(Scored(s.total, passage=Passage(nb, nb.summary, nb.text), why=s))
        for aid, (fact, share) in sources.items():
            row = rows.get(aid)
            if row is not None and aid not in got.passages.ranks and self._is_passage(row):
                s = source_only(share, fact)
                s.inputs["pool"] = "fact_source"
                out.append(Scored(s.total, passage=Passage(row, row.summary, row.text), why=s))
        return out


def _fact_pool(
    got: Gathered,
    near_edges: list[Edge],
    entities: dict[int, Entity],
    keep: Callable[[Edge], bool] | None,
) -> dict[int, Edge]:
    """Every fact read, once; an edge whose end was not read (its row is
    gone, or its type was not asked for) is left out, and so is a fact of a
    relation not asked for."""
    pool: dict[int, Edge] = {}
    for e in [*got.facts.hop1.values(), *got.facts.hop2, *got.facts.similar, *near_edges]:
        pool.setdefault(e.id, e)
    return {
        i: e
        for i, e in pool.items()
        if e.source_id in entities and e.target_id in entities and (keep is None or keep(e))
    }


def _fact_pools(got: Gathered) -> tuple[dict[int, str], dict[int, int]]:
    """Which pool found each fact (one hop, two hops, similar; else nearby)
    and its rank in the similar facts' search."""
    found: dict[int, str] = {}
    for e in got.facts.similar:
        found[e.id] = "similar_facts"
    for e in got.facts.hop2:
        found[e.id] = "two_hop"
    for i in got.facts.hop1:
        found[i] = "one_hop"
    ranks = {h.id: r for r, h in enumerate(got.passages.found.edges)}
    return found, ranks


def _score_facts(
    pool: dict[int, Edge],
    got: Gathered,
    entities: dict[int, Entity],
    matched_texts: set[int],
    periods: list[Period],
    p: RetrievalProfile,
) -> dict[int, Score]:
    """Each fact of the pool scored (:func:`.scoring.fact_score`) with its
    ends' names, recency, provenance and dates."""
    age = {eid: n for n, eid in enumerate(sorted(pool), start=1)}
    facts = len(age)
    # Per question, not per fact: the hub damping of every entity (a hundred
    # or so facts a question).
    passed = damped(got.facts.led, got.facts.degree, p)
    edge_sim, question = got.facts.edge_sim, got.question
    pools, sim_ranks = _fact_pools(got)
    out: dict[int, Score] = {}
    for e in pool.values():
        src, dst = entities[e.source_id].name, entities[e.target_id].name
        s = fact_score(
            reach(e, passed),
            edge_sim.get(e.id, 0.0),
            question,
            f"{src} {e.relation} {e.description} {dst}",
            p,
            age=(age[e.id], facts),
            provenance=e.artifact_id in matched_texts,
            when=bool(periods) and within(periods, e.valid_at, e.invalid_at),
        )
        s.inputs["pool"] = pools.get(e.id, "nearby")
        if e.id in sim_ranks:
            s.inputs["rank"] = sim_ranks[e.id]
        out[e.id] = s
    return out


def _sources(
    facts: dict[int, Score],
    pool: dict[int, Edge],
    rows: dict[int, Artifact],
    got: Gathered,
    p: RetrievalProfile,
) -> dict[int, tuple[int, float]]:
    """The texts the best facts were stated in (read, not matched): text ID
    -> (the fact, its share of the fact's score: the best fact's)."""
    total = {i: s.total for i, s in facts.items()}
    best = sorted(total, key=lambda i: -total[i])[: p.provenance_from]
    out: dict[int, tuple[int, float]] = {}
    for i in best:
        aid = pool[i].artifact_id
        if aid is not None and aid not in rows and aid in got.passages.texts:
            share = source_score(total[i], p)
            if share > out.get(aid, (0, 0.0))[1]:
                out[aid] = (i, share)
    return out


def _seed_lines(got: Gathered, entities: dict[int, Entity], p: RetrievalProfile) -> list[Scored]:
    """The seeds' own lines (their names and descriptions)."""
    out = []
    for i in got.seeds.order:
        if i in entities:
            s = seed_line_score(got.seeds.strength[i], p, **got.seeds.why.get(i, {}))
            out.append(Scored(s.total, entity=entities[i], why=s))
    return out


def _matched(
    rows: dict[int, Artifact],
    got: Gathered,
    sources: dict[int, tuple[int, float]],
    periods: list[Period],
    p: RetrievalProfile,
) -> tuple[list[Scored], dict[int, float]]:
    """The passages the searches matched, scored by rank (and as the source
    of a good fact too), and their scores by ID."""
    by_summary = {h.id for h in got.passages.found.summaries}
    out: list[Scored] = []
    own: dict[int, float] = {}
    for cid, (rank, by_text) in got.passages.ranks.items():
        row = rows.get(cid)
        if row is None:  # a deleted row's vector is dropped
            continue
        summary = row.summary if cid in by_summary else None
        # A turn's speaker is one of its words ("What did Melanie paint?").
        words = passage_text(row.text, row.speaker) if by_text else (summary or "")
        src = sources.get(cid)
        s = passage_score(
            rank,
            got.question,
            words,
            p,
            source=src[1] if src else 0.0,
            when=within(periods, row.reference_time),
        )
        s.inputs["pool"] = "text_search" if by_text else "summary_search"
        if src:
            s.inputs["source_of"] = src[0]
        own[cid] = s.total
        if by_text:
            whole = Passage(row, summary, row.text)
            short = [Passage(row, summary, None)] if summary is not None else []
            out.append(Scored(s.total, passage=whole, alternatives=short, why=s))
        elif summary is not None:
            out.append(Scored(s.total, passage=Passage(row, summary, None), why=s))
    return out, own
