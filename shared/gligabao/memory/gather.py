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

Every bound is a constant: at most 12 terms, 100 names, 10 + 10 seeds (two
edge queries each), ``HOP2_FROM`` neighbours, 100 + 50 edges, one vector
search round trip and one search by words, 80 + 5 passages and the 20 rows
next to the 10 best (read with them), 20 more from the second round; batch
reads of at most 100 keys go out at once.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from ..config import Settings
from ..errors import NotFound
from ..graph.port import GraphStore
from ..models import Artifact, DatasetKey, Edge, Entity
from ..records.meter import Meter
from ..records.model import Step
from ..text import index_terms, query_terms
from ..vectors.port import Hit, SearchRequest, VectorIndex
from .hops import degree_of, lent_to, on_own_words, two_hop_from
from .keywords import PER_TERM, missing_named, name_lookups, rank_keywords
from .options import StageOptions
from .parallel import done, start
from .passages import (
    NEIGHBOURS_OF,
    SECOND_ROUND_PASSAGES,
    neighbour_ids,
    passage_rank,
    second_round_ranks,
    second_round_text,
)
from .scoring import W_ENTITY_SIM, W_KEYWORD, above, stem
from .temporal import Interval, contains

# Candidate pools (what may compete for the budget, not what is sent).
KEYWORD_SEEDS = 10
SIMILAR_ENTITIES = 10
SIMILAR_EDGES = 20
# Passages: a wide pool, cut by relevance (their score decays with the
# rank, and the relevance floor leaves out the tail): LoCoMo's evidence turns
# are often past the 10th (bench/locomo.py; docs/retrieval.md). 80: with
# passages alone (the lower floor) and a run of one session's turns stamped
# once, a pool of 60 ran out before the budget (turns 0.867 in 2,300 tokens;
# 80: 0.874 in 2,400). With the 20 rows next to the best matches and the 5
# summaries that is 105 keys: two BatchGetItem requests, sent at once.
SIMILAR_PASSAGES = 80
SIMILAR_SUMMARIES = 5
FALLBACK_SEEDS = 25
EDGE_CAP = 100  # one hop
HOP2_CAP = 50
SOURCE_READS = 20  # texts of the best facts read (chosen before their ends are)
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


@dataclass
class Found:
    """What the vector search found (hybrid for the chunks)."""

    entities: list[Hit]
    edges: list[Hit]
    chunks: list[Hit]
    summaries: list[Hit]
    step: Step  # its trajectory step (timed on the worker)
    vector: list[float] = field(default_factory=list)  # the question's (memory/notes_context.py)


@dataclass
class Gathered:
    """The candidates' raw material, read; scoring is :mod:`.retrieve`'s."""

    strength: dict[int, float]  # every seed (rows that exist), by strength
    seeds: list[int]  # strongest first
    matched: list[Entity]  # the entities the question matched (the geo search's)
    found: Found
    ranks: dict[int, tuple[int, bool]]  # matched passage -> (rank, found by its text)
    edge_sim: dict[int, float]  # similar facts' cosine to the question
    similar_edges: list[Edge]
    hop1: dict[int, Edge]
    hop2: list[Edge]
    entities: dict[int, Entity]  # seeds and every read fact's ends
    passages: dict[int, Artifact]  # rows of the matched passages
    beside: dict[int, Artifact]  # rows one off the best matched passages (not matched)
    texts: dict[int, Artifact]  # texts the best facts were stated in
    question: set[str]  # the question's stems, less the seeds' names
    degree: Counter[int]  # facts per entity among the one-hop facts
    led: dict[int, float]  # what an entity passes on to its facts


def held(edge: Edge, instant: str) -> bool:
    """The edge's fact held at ``instant`` (its validity interval contains it)."""
    return contains(Interval(edge.valid_at, edge.invalid_at), instant)


def kept(e: Edge, inp: QueryInput) -> bool:
    """Superseded facts never enter the context, whichever way they came;
    with as_of, the facts valid then do, superseded or not."""
    return e.live if inp.as_of is None else held(e, inp.as_of)


def _names(entities: dict[int, Entity], i: int) -> set[str]:
    e = entities.get(i)
    return index_terms(e.name) if e is not None else set()


def _ends(edges: list[Edge]) -> set[int]:
    return {i for e in edges for i in (e.source_id, e.target_id)}


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
        self, key: DatasetKey, inp: QueryInput, meter: Meter, *, check_dataset: bool
    ) -> Gathered:
        searched = start(self._search, key, inp, meter)
        try:
            terms, kw, kw_rows, kw_around = self._by_words(key, inp, meter, check_dataset)
            found = searched.result()
            meter.call.steps.append(found.step)
        except BaseException:
            _settle(searched)
            raise
        return self._after_search(key, inp, meter, terms, kw, kw_rows, kw_around, found)

    # --- behind the embedding ---------------------------------------------------

    def _session_said(self, key: DatasetKey, inp: QueryInput) -> list[str]:
        """The session's last messages, oldest first (their ends): what "what
        about her?" refers to. The newest artifacts of the dataset are read,
        so a session quiet for a while behind others has none."""
        if inp.session_id is None:
            return []
        recent = self.graph.recent_artifacts(key, SESSION_LOOKBACK)
        last = [a for a in recent if a.session_id == inp.session_id and a.parent_id is None]
        return [a.text[-SESSION_CHARS:] for a in reversed(last[:SESSION_MESSAGES])]

    def _search(self, key: DatasetKey, inp: QueryInput, meter: Meter) -> Found:
        """On a worker: the session's last messages, the embedding, the
        search. Its step is recorded by the caller, after keyword_seeds, so
        that the trajectory's order does not depend on which ends first."""
        t0 = time.perf_counter()
        said = self._session_said(key, inp)
        qvec = meter.embed(["\n".join([*said, inp.query])], "query").vectors[0]
        t = self.settings.query_threshold
        ents, edges, chunks, sums = self.vectors.search(
            key,
            [
                SearchRequest("entities", qvec, SIMILAR_ENTITIES, t),
                SearchRequest("edges", qvec, SIMILAR_EDGES, t, live=inp.as_of is None),
                SearchRequest("chunks", qvec, SIMILAR_PASSAGES, t, text=inp.query),
                SearchRequest("summaries", qvec, SIMILAR_SUMMARIES, t),
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

    def _search_again(self, key: DatasetKey, text: str) -> list[Hit]:
        """The second round, on a worker: the passages by their words alone
        (an empty vector: the question's found its passages in the first
        round; on DynamoDB this saves a SearchVectors and a Query)."""
        req = SearchRequest("chunks", [], SECOND_ROUND_PASSAGES, 0.0, text=text)
        return self.vectors.search(key, [req])[0]

    def _by_words(
        self, key: DatasetKey, inp: QueryInput, meter: Meter, check_dataset: bool
    ) -> tuple[list[str], dict[int, int], dict[int, Entity], list[Edge]]:
        """Waves 1 and 2: the dataset, the keyword seeds, their rows and the
        edges around them."""
        with meter.call.step("keyword_seeds") as c:
            terms = query_terms(inp.query)
            exists = start(self.graph.get_dataset, key) if check_dataset else done(True)
            lookups = name_lookups(inp.query, terms) if terms else []
            hits_f = start(self.graph.keyword_hits, key, terms, PER_TERM) if terms else done([])
            named_f = start(self.graph.entity_ids_by_names, key, lookups) if lookups else done({})
            hits, named = hits_f.result(), named_f.result()
            if exists.result() is None:
                raise NotFound(f"dataset {inp.dataset!r} does not exist")
            missing = missing_named(hits, named)
            named_rows = self.graph.get_entities(key, missing) if missing else {}
            kw = rank_keywords(inp.query, terms, hits, named_rows, KEYWORD_SEEDS)
            rows_f = start(self.graph.get_entities, key, list(kw)) if kw else done({})
            around = self._around(key, list(kw), EDGE_CAP, inp)
            c["terms"] = len(terms)
            c["seeds"] = len(kw)
            return terms, kw, rows_f.result(), around

    # --- after the search ---------------------------------------------------------

    def _after_search(
        self,
        key: DatasetKey,
        inp: QueryInput,
        meter: Meter,
        terms: list[str],
        kw: dict[int, int],
        kw_rows: dict[int, Entity],
        kw_around: list[Edge],
        found: Found,
    ) -> Gathered:
        g = self.graph
        with meter.call.step("expand") as c:
            strength: dict[int, float] = {i: W_KEYWORD * s for i, s in kw.items() if i in kw_rows}
            for h in found.entities:
                strength[h.id] = strength.get(h.id, 0.0) + W_ENTITY_SIM * h.score
            # A fact's similarity: how far its cosine is above the threshold
            # (the local model puts most texts at 0.75-0.9 of any question).
            t = self.settings.query_threshold
            edge_sim = {h.id: above(h.score, t) for h in found.edges}
            # The question's words that say more than a seed's name: "Dana"
            # is in every fact around Dana, "brother" picks one of them.
            named = {stem(t) for i in kw if kw[i] >= 3 for t in _names(kw_rows, i)}
            question = {stem(t) for t in terms} - named
            # Two hops from the keyword seeds (their edges are read): the best
            # one-hop facts, scored on their own words (the names of their
            # ends are not read yet), lend the entity they lead to a share of
            # their score; the best such entities that are not seeds have
            # their edges read (at most HOP2_FROM).
            neighbours = two_hop_from(kw_around, strength, edge_sim, question)

            # Wave 3: the rows of what the search found; the edges around the
            # similar entities that are not keyword seeds; the two-hop edges.
            vec_only = [h.id for h in found.entities if h.id not in kw]
            ranks = passage_rank(found.chunks, found.summaries)
            vec_rows_f = start(g.get_entities, key, vec_only) if vec_only else done({})
            similar_f = start(g.get_edges, key, list(edge_sim)) if edge_sim else done({})
            # The rows one off the best matches are read with them (their
            # neighbours in a session or a text: retrieve keeps the adjacent).
            ranked = sorted(ranks, key=lambda i: ranks[i][0])
            wanted = [*ranks, *neighbour_ids(ranked, NEIGHBOURS_OF)]
            passages_f = start(g.get_artifacts, key, wanted) if ranks else done({})
            unmatched = not strength and not edge_sim  # the fallback's read, sent now
            recent_f = start(g.recent_entities, key, FALLBACK_SEEDS) if unmatched else done([])
            fallback = False
            hop2_f = self._around_start(key, neighbours, HOP2_CAP, inp)
            vec_around = self._around(key, vec_only, EDGE_CAP, inp)
            hop2_all = self._around_join(hop2_f, inp)
            similar_edges = [e for e in similar_f.result().values() if kept(e, inp)]
            seed_rows = {**kw_rows, **vec_rows_f.result()}
            strength = {i: s for i, s in strength.items() if i in seed_rows}  # deleted rows
            read_rows = passages_f.result()
            passages = {i: a for i, a in read_rows.items() if i in ranks}
            beside = {i: a for i, a in read_rows.items() if i not in ranks}
            around = _newest([*kw_around, *vec_around], EDGE_CAP)
            matched = [seed_rows[i] for i in strength]  # keyword ones first
            if not strength and not similar_edges:
                # Nothing matched: the newest entities stand in for seeds (two
                # more waves: their edges, then the two-hop edges).
                recent = recent_f.result() or g.recent_entities(key, FALLBACK_SEEDS)
                seed_rows = {e.id: e for e in recent}
                strength = {e.id: W_KEYWORD for e in recent}
                around = self._around(key, list(strength), EDGE_CAP, inp)
                neighbours = two_hop_from(around, strength, edge_sim, question)
                hop2_all = self._around(key, neighbours, HOP2_CAP, inp)
                fallback = True
            hop1 = {e.id: e for e in around}
            hop2 = [e for e in hop2_all if e.id not in hop1]
            degree = degree_of(around)
            facts = [*around, *similar_edges]
            early = on_own_words(facts, strength, degree, edge_sim, question)
            lent = lent_to(around, early, strength)
            # What an entity passes to its facts: its own strength as a seed,
            # or what the facts leading to it lent it, whichever is more.
            led = {n: max(strength.get(n, 0.0), lent.get(n, 0.0)) for n in {*strength, *lent}}

            c["seeds"] = len(strength)
            c["fallback"] = int(fallback)
            c["edges"] = len(hop1)
            c["two_hop_edges"] = len(hop2)

        with meter.call.step("entities") as c:
            # Wave 4: the ends not read yet, and the texts the best facts
            # (scored on their own words) were stated in. Beside it, the
            # second round: the names the best match adds to the question find
            # what a bridge question's second hop says ("the woman who
            # portrayed Corliss Archer" -> "Shirley Temple" -> her career);
            # the rows it finds are read once it answers.
            again = second_round_text(inp.query, ranked, passages)
            second_f = start(self._search_again, key, again) if again else done([])
            best = sorted(facts, key=lambda e: (-early[e.id], e.id))[:SOURCE_READS]
            source_ids = sorted(
                {a for e in best if (a := e.artifact_id) is not None and a not in passages}
            )
            texts_f = start(g.get_artifacts, key, source_ids) if source_ids else done({})
            need = sorted(_ends([*facts, *hop2]) - set(seed_rows))
            ends_f = start(g.get_entities, key, need) if need else done({})
            try:
                more = second_round_ranks(second_f.result(), ranks)
                unread = [i for i in more if i not in beside]
                more_rows = {**beside, **(g.get_artifacts(key, unread) if unread else {})}
                entities = {**seed_rows, **ends_f.result()}
                texts = texts_f.result()
            except BaseException:
                for f in (second_f, texts_f, ends_f):
                    _settle(f)
                raise
            for i, rank in more.items():
                if i in more_rows:  # a deleted row's vector is dropped
                    ranks[i] = rank
                    passages[i] = more_rows[i]
                    beside.pop(i, None)
            seeds = sorted(strength, key=lambda i: (-strength[i], i))
            c["entities"] = len(entities)
            c["texts"] = len(texts)
            c["second_round"] = sum(1 for i in more if i in passages)
        return Gathered(
            strength=strength,
            seeds=seeds,
            matched=matched,
            found=found,
            ranks=ranks,
            edge_sim=edge_sim,
            similar_edges=similar_edges,
            hop1=hop1,
            hop2=hop2,
            entities=entities,
            passages=passages,
            beside=beside,
            texts=texts,
            question=question,
            degree=degree,
            led=led,
        )

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


def _newest(edges: list[Edge], limit: int) -> list[Edge]:
    """The ``limit`` newest (highest ID) of the edges, each once."""
    unique = {e.id: e for e in edges}
    return [unique[i] for i in sorted(unique, reverse=True)[:limit]]


__all__ = [
    "Found",
    "Gathered",
    "Gatherer",
    "QueryInput",
    "held",
    "kept",
    "passage_rank",
]
