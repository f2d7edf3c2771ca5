"""gather: the store reads of a query, sent in as few sequential waves as
their dependencies allow, and the ones that need no vector hidden behind the
embeddings call.

On AWS each read is a DynamoDB round trip (a few milliseconds) and the
question's embedding one HTTP request to the model (tens to hundreds). So:

* The question is embedded and searched on a worker (after reading the
  session's last messages, when the caller gave a session), while this
  thread reads what the words alone decide: the dataset (checked), the term
  index and the names table (wave 1), then the keyword seeds' rows and the
  edges around them (wave 2). Both are behind the embedding when it takes
  longer than two round trips; rarely one more (the row of a named entity a
  common word's term list left out).
* After the vector search, wave 3: the rows of the similar facts, entities
  and passages, the edges around the similar entities that are not keyword
  seeds, and the two-hop edges (around the best neighbours the keyword seeds'
  facts lead to).
* Wave 4: the rows of every fact's ends not read yet, and the texts the best
  facts were stated in; beside them, on a worker, the second round's search
  (by the words of the question and the names the best passage adds), then
  the rows of the passages it found: one wave more when the search takes
  longer than the wave (on DynamoDB's vector store, a Query for each of its
  words' postings).

So two or three waves follow the embedding. When nothing matched at all, the
newest entities are the seeds: their edges and ends cost two more waves.

Every bound is the retrieval profile's (:mod:`.profile`; the defaults): at
most 12 terms, 100 names, 10 + 10 seeds (two edge queries each), 8 two-hop
neighbours, 100 + 50 edges, one vector search round trip and one search by
words, 160 + 5 passages and the 20 rows next to the 10 best (read with them),
20 more from the second round; batch reads of at most 100 keys go out at
once.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from ..config import Settings
from ..errors import NotFound
from ..graph.port import GraphStore
from ..models import Artifact, DatasetKey, Edge, Entity
from ..records.meter import Meter
from ..records.model import Step
from ..retrieval_profile import RetrievalProfile
from ..text import is_turn, query_terms
from ..vectors.port import Hit, SearchRequest, VectorIndex
from .hops import two_hop_from
from .keywords import missing_named, name_lookups, rank_keywords
from .options import StageOptions
from .parallel import done, start
from .passages import passage_rank, second_round_ranks, second_round_text
from .temporal import Interval, contains
from .waves import (
    Expand,
    FactPool,
    Found,
    PassagePool,
    Read,
    Seeds,
    Wave,
    newest,
    plan_expand,
    plan_facts,
    seed_why,
    wave3_reads,
    wave4_reads,
)


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
    profile: RetrievalProfile | None = None  # the request's (local server); else the server's
    explain: bool = False  # every context item says why it is there; the best left out too
    entity_types: frozenset[str] | None = None  # casefolded: only entities of these types
    edge_types: frozenset[str] | None = None  # casefolded: only facts of these relations


@dataclass
class ByWords:
    """Waves 1 and 2: what the question's words alone found."""

    terms: list[str]
    kw: dict[int, int]  # keyword seeds and their points, best first
    rows: dict[int, Entity]  # their rows
    around: list[Edge]  # the edges around them


@dataclass
class Gathered:
    """The candidates' raw material, read; scoring is :mod:`.retrieve`'s."""

    seeds: Seeds
    facts: FactPool
    passages: PassagePool
    entities: dict[int, Entity]  # seeds and every read fact's ends
    question: set[str]  # the question's stems, less the seeds' names


def held(edge: Edge, instant: str) -> bool:
    """The edge's fact held at ``instant`` (its validity interval contains it)."""
    return contains(Interval(edge.valid_at, edge.invalid_at), instant)


def kept(e: Edge, inp: QueryInput) -> bool:
    """Superseded facts never enter the context, whichever way they came;
    with as_of, the facts valid then do, superseded or not."""
    return e.live if inp.as_of is None else held(e, inp.as_of)


def _settle(f: Future[Any]) -> None:
    """Wait for a worker's task, ignoring its outcome (before raising, so
    that nothing of this call still runs once its record is saved)."""
    f.exception()


class Gatherer:
    def __init__(self, graph: GraphStore, vectors: VectorIndex, settings: Settings) -> None:
        self.graph = graph
        self.vectors = vectors
        self.settings = settings

    def gather(
        self,
        key: DatasetKey,
        inp: QueryInput,
        meter: Meter,
        p: RetrievalProfile,
        *,
        check_dataset: bool,
    ) -> Gathered:
        searched = start(self._search, key, inp, meter, p)
        try:
            words = self._by_words(key, inp, meter, p, check_dataset)
            found = searched.result()
            meter.call.steps.append(found.step)
        except BaseException:
            _settle(searched)
            raise
        return self._after_search(key, inp, meter, p, words, found)

    # --- behind the embedding ---------------------------------------------------

    def _session_said(self, key: DatasetKey, inp: QueryInput, p: RetrievalProfile) -> list[str]:
        """The session's last messages, oldest first (their ends): what "what
        about her?" refers to. The newest artifacts of the dataset are read,
        so a session quiet for a while behind others has none."""
        if inp.session_id is None:
            return []
        recent = self.graph.recent_artifacts(key, p.session_lookback)
        last = [a for a in recent if a.session_id == inp.session_id and a.parent_id is None]
        return [a.text[-p.session_chars :] for a in reversed(last[: p.session_messages])]

    def _search(self, key: DatasetKey, inp: QueryInput, meter: Meter, p: RetrievalProfile) -> Found:
        """On a worker: the session's last messages, the embedding, the
        search. Its step is recorded by the caller, after keyword_seeds, so
        that the trajectory's order does not depend on which ends first."""
        t0 = time.perf_counter()
        said = self._session_said(key, inp, p)
        qvec = meter.embed(["\n".join([*said, inp.query])], "query").vectors[0]
        t = self.settings.query_threshold
        ents, edges, chunks, sums = self.vectors.search(
            key,
            [
                SearchRequest("entities", qvec, p.similar_entities, t),
                SearchRequest("edges", qvec, p.similar_edges, t, live=inp.as_of is None),
                SearchRequest("chunks", qvec, p.similar_passages, t, text=inp.query),
                SearchRequest("summaries", qvec, p.similar_summaries, t),
            ],
        )
        counts = {
            "session_messages": len(said),
            "entities": len(ents),
            "edges": len(edges),
            "chunks": len(chunks),
            "summaries": len(sums),
        }
        step = Step("search_vectors", (time.perf_counter() - t0) * 1000, counts)
        return Found(ents, edges, chunks, sums, step, qvec)

    def _search_again(self, key: DatasetKey, text: str, p: RetrievalProfile) -> list[Hit]:
        """The second round, on a worker: the passages by their words alone
        (an empty vector: the question's found its passages in the first
        round; on DynamoDB this saves a SearchVectors and a Query)."""
        req = SearchRequest("chunks", [], p.second_round_passages, 0.0, text=text)
        return self.vectors.search(key, [req])[0]

    def _by_words(
        self,
        key: DatasetKey,
        inp: QueryInput,
        meter: Meter,
        p: RetrievalProfile,
        check_dataset: bool,
    ) -> ByWords:
        """Waves 1 and 2: the dataset, the keyword seeds, their rows and the
        edges around them."""
        with meter.call.step("keyword_seeds") as c:
            terms = query_terms(inp.query)
            exists = start(self.graph.get_dataset, key) if check_dataset else done(True)
            lookups = name_lookups(inp.query, terms) if terms else []
            hits_f = (
                start(self.graph.keyword_hits, key, terms, p.keyword_per_term)
                if terms
                else done([])
            )
            named_f = start(self.graph.entity_ids_by_names, key, lookups) if lookups else done({})
            hits, named = hits_f.result(), named_f.result()
            if exists.result() is None:
                raise NotFound(f"dataset {inp.dataset!r} does not exist")
            missing = missing_named(hits, named)
            named_rows = self.graph.get_entities(key, missing) if missing else {}
            kw = rank_keywords(inp.query, terms, hits, named_rows, p.keyword_seeds, p)
            rows_f = start(self.graph.get_entities, key, list(kw)) if kw else done({})
            around = self._around(key, list(kw), p.edge_cap, inp)
            c["terms"] = len(terms)
            c["seeds"] = len(kw)
            return ByWords(terms, kw, rows_f.result(), around)

    # --- after the search ---------------------------------------------------------

    def _after_search(
        self,
        key: DatasetKey,
        inp: QueryInput,
        meter: Meter,
        p: RetrievalProfile,
        words: ByWords,
        found: Found,
    ) -> Gathered:
        with meter.call.step("expand") as c:
            t = self.settings.query_threshold
            plan = plan_expand(words.terms, words.kw, words.rows, words.around, found, t, p)
            seeds, facts, passages = self._expand(key, inp, p, words, found, plan)
            c["seeds"] = len(seeds.strength)
            c["fallback"] = int(seeds.fallback)
            c["edges"] = len(facts.hop1)
            c["two_hop_edges"] = len(facts.hop2)

        with meter.call.step("entities") as c:
            entities, more = self._ends_and_texts(key, inp, p, seeds, facts, passages)
            seeds.order = sorted(seeds.strength, key=lambda i: (-seeds.strength[i], i))
            seeds.why = seed_why(seeds.strength, words.kw, found, seeds.fallback)
            c["entities"] = len(entities)
            c["texts"] = len(passages.texts)
            c["second_round"] = sum(1 for i in more if i in passages.rows)
        return Gathered(seeds, facts, passages, entities, plan.question)

    def _expand(
        self,
        key: DatasetKey,
        inp: QueryInput,
        p: RetrievalProfile,
        words: ByWords,
        found: Found,
        plan: Expand,
    ) -> tuple[Seeds, FactPool, PassagePool]:
        """Wave 3 (and the fallback's two when nothing matched)."""
        wave = Wave(wave3_reads(self.graph, key, plan, inp.as_of, p))
        try:
            hop2_all = self._joined(wave, "hop2", inp)
            vec_around = self._joined(wave, "vec", inp)
            similar = [e for e in wave.get("similar", {}).values() if kept(e, inp)]
            seed_rows = {**words.rows, **wave.get("vec_rows", {})}
            read_rows = wave.get("passages", {})
            recent = wave.get("recent", [])
        except BaseException:
            wave.settle()
            raise
        strength = {i: s for i, s in plan.strength.items() if i in seed_rows}  # deleted rows
        ranks = plan.ranks
        pool = PassagePool(
            found,
            ranks,
            rows={i: a for i, a in read_rows.items() if i in ranks},
            beside={i: a for i, a in read_rows.items() if i not in ranks},
        )
        seeds = Seeds(strength, seed_rows, matched=[seed_rows[i] for i in strength])
        around = newest([*words.around, *vec_around], p.edge_cap)
        if not strength and not similar:
            # Nothing matched: the newest entities stand in for seeds (two
            # more waves: their edges, then the two-hop edges).
            recent = recent or self.graph.recent_entities(key, p.fallback_seeds)
            seeds = Seeds({e.id: p.w_keyword for e in recent}, {e.id: e for e in recent})
            seeds.matched, seeds.fallback = [], True
            around = self._around(key, list(seeds.strength), p.edge_cap, inp)
            ahead = two_hop_from(around, seeds.strength, plan.edge_sim, plan.question, p)
            hop2_all = self._around(key, ahead, p.hop2_cap, inp)
        facts = plan_facts(around, hop2_all, similar, seeds, plan.edge_sim, plan.question, p)
        return seeds, facts, pool

    def _ends_and_texts(
        self,
        key: DatasetKey,
        inp: QueryInput,
        p: RetrievalProfile,
        seeds: Seeds,
        facts: FactPool,
        pool: PassagePool,
    ) -> tuple[dict[int, Entity], dict[int, tuple[int, bool]]]:
        """Wave 4: the ends not read yet, and the texts the best facts were
        stated in. Beside it, the second round: the names the best match adds
        to the question find what a bridge question's second hop says ("the
        woman who portrayed Corliss Archer" -> "Shirley Temple" -> her
        career); the rows it finds are read once it answers. Returns the
        entities and the second round's passages (``pool`` gains them)."""
        again = second_round_text(
            inp.query, sorted(pool.ranks, key=lambda i: pool.ranks[i][0]), pool.rows, p
        )
        second = Read(self._search_again, (key, again, p)) if again else None
        wave = Wave({"second": second, **wave4_reads(self.graph, key, facts, seeds, pool.rows, p)})
        try:
            more = second_round_ranks(
                wave.get("second", []), pool.ranks, p.second_round_rank, _documents(pool.rows, p)
            )
            unread = [i for i in more if i not in pool.beside and i not in pool.rows]
            more_rows = {
                **pool.beside,
                **pool.rows,
                **(self.graph.get_artifacts(key, unread) if unread else {}),
            }
            entities = {**seeds.rows, **wave.get("ends", {})}
            pool.texts = wave.get("texts", {})
        except BaseException:
            wave.settle()
            raise
        for i, rank in more.items():
            if i in more_rows:  # a deleted row's vector is dropped
                pool.ranks[i] = rank
                pool.rows[i] = more_rows[i]
                pool.beside.pop(i, None)
        return entities, more

    def _joined(self, wave: Wave, name: str, inp: QueryInput) -> list[Edge]:
        """The edges around some entities a wave read (live, and with as_of
        expired), with as_of only the facts that held then."""
        edges = [*wave.get(f"{name}_live", []), *wave.get(f"{name}_expired", [])]
        if inp.as_of is None:
            return edges
        return [e for e in edges if held(e, inp.as_of)]

    def _around_start(
        self, key: DatasetKey, ids: list[int], limit: int, inp: QueryInput
    ) -> list[Future[list[Edge]]]:
        """Start reading the edges around the entities: the live ones, and
        with as_of the superseded ones too (two reads at once)."""
        if not ids:
            return []
        out = [start(self.graph.live_edges_around, key, ids, limit)]
        if inp.as_of is not None:
            out.append(start(self.graph.expired_edges_around, key, ids, limit))
        return out

    @staticmethod
    def _around_join(futures: list[Future[list[Edge]]], inp: QueryInput) -> list[Edge]:
        """With as_of, of both only the facts that held then."""
        edges = [e for f in futures for e in f.result()]
        if inp.as_of is None:
            return edges
        return [e for e in edges if held(e, inp.as_of)]

    def _around(self, key: DatasetKey, ids: list[int], limit: int, inp: QueryInput) -> list[Edge]:
        return self._around_join(self._around_start(key, ids, limit, inp), inp)


def _documents(rows: dict[int, Artifact], p: RetrievalProfile) -> frozenset[int]:
    """The passages of documents (no speaker; a window only when it is not a
    transcript's turn): a bridge question's second hop there is another
    document the first one names, which the second round may lift. A whole
    text is one even when it opens like a chat line ("Shirley Temple: ...")."""
    if not p.second_round_lift:
        return frozenset()
    return frozenset(
        i
        for i, a in rows.items()
        if a.speaker is None and (a.parent_id is None or not is_turn(a.text))
    )


__all__ = [
    "Found",
    "Gathered",
    "Gatherer",
    "QueryInput",
    "held",
    "kept",
    "passage_rank",
]
