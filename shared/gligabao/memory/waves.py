"""The read waves after the question's vector search, planned then run: each
planner is a pure function of what the waves before it read (which rows and
edges to read next, and what they are for), and :class:`Wave` sends a plan's
reads at once and joins them. :mod:`.gather` runs the waves; the order and
the bounds are its docstring's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from ..graph.port import GraphStore
from ..models import Artifact, DatasetKey, Edge, Entity
from ..retrieval_profile import RetrievalProfile
from ..text import index_terms
from ..vectors.port import Hit
from .hops import degree_of, lent_to, on_own_words, two_hop_from
from .parallel import start
from .passages import neighbour_ids, passage_rank
from .scoring import above, seed_strength, stem


@dataclass(frozen=True)
class Read:
    """One leaf read of a store: ``fn(*args)``."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]


class Wave:
    """A plan's reads, sent at once; :meth:`get` waits for one, a missing
    (unplanned) read is ``default``. On an error, :meth:`settle` waits for
    every read (nothing of the call still runs once its record is saved)."""

    def __init__(self, reads: dict[str, Read | None]) -> None:
        self._futures: dict[str, Future[Any]] = {
            name: start(r.fn, *r.args) for name, r in reads.items() if r is not None
        }

    def get(self, name: str, default: Any = None) -> Any:
        f = self._futures.get(name)
        return default if f is None else f.result()

    def settle(self) -> None:
        for f in self._futures.values():
            f.exception()


@dataclass
class Found:
    """What the vector search found (hybrid for the chunks)."""

    entities: list[Hit]
    edges: list[Hit]
    chunks: list[Hit]
    summaries: list[Hit]
    step: Any  # its trajectory step (timed on the worker)
    vector: list[float] = field(default_factory=list)  # the question's (memory/notes_context.py)


@dataclass
class Seeds:
    """Who the question is about: the entities it matched and their rows."""

    strength: dict[int, float]  # every seed (rows that exist), by strength
    rows: dict[int, Entity]  # the seeds' rows
    matched: list[Entity] = field(default_factory=list)  # the question matched (geo's)
    order: list[int] = field(default_factory=list)  # strongest first
    why: dict[int, dict[str, Any]] = field(default_factory=dict)  # pools, ranks (explain)
    fallback: bool = False  # nothing matched: the newest entities stand in


@dataclass
class FactPool:
    """The facts read and what their score needs from the graph."""

    edge_sim: dict[int, float]  # similar facts' cosine share above the threshold
    similar: list[Edge]
    around: list[Edge] = field(default_factory=list)  # the one-hop facts as read
    hop1: dict[int, Edge] = field(default_factory=dict)
    hop2: list[Edge] = field(default_factory=list)
    degree: Counter[int] = field(default_factory=Counter)  # facts per entity, one hop
    led: dict[int, float] = field(default_factory=dict)  # what an entity passes on
    early: dict[int, float] = field(default_factory=dict)  # scored on their own words


@dataclass
class PassagePool:
    """The passages matched, the rows next to them, the best facts' texts."""

    found: Found
    ranks: dict[int, tuple[int, bool]]  # matched passage -> (rank, found by its text)
    rows: dict[int, Artifact] = field(default_factory=dict)  # the matched passages' rows
    beside: dict[int, Artifact] = field(default_factory=dict)  # one off the best (not matched)
    texts: dict[int, Artifact] = field(default_factory=dict)  # the best facts' texts


@dataclass
class Expand:
    """Wave 3's plan: the seeds so far, the question's stems, the reads."""

    strength: dict[int, float]
    edge_sim: dict[int, float]
    question: set[str]  # the question's stems, less the names the question says
    vec_only: list[int]  # similar entities that are not keyword seeds
    ranks: dict[int, tuple[int, bool]]
    ranked: list[int]  # the matched passages, best first
    neighbours: list[int]  # whose edges are read for two hops
    unmatched: bool  # nothing matched before the reads: the fallback's read is sent now


def plan_expand(
    terms: list[str],
    kw: dict[int, int],
    kw_rows: dict[int, Entity],
    kw_around: list[Edge],
    found: Found,
    threshold: float,
    p: RetrievalProfile,
) -> Expand:
    """What wave 3 reads, from the keyword seeds and the vector search."""
    strength: dict[int, float] = {
        i: seed_strength(s, None, p) for i, s in kw.items() if i in kw_rows
    }
    for h in found.entities:
        strength[h.id] = strength.get(h.id, 0.0) + seed_strength(None, h.score, p)
    # A fact's similarity: how far its cosine is above the threshold (the
    # local model puts most texts at 0.75-0.9 of any question).
    edge_sim = {h.id: above(h.score, threshold) for h in found.edges}
    # The question's words that say more than a seed's name: "Dana" is in
    # every fact around Dana, "brother" picks one of them.
    named = {stem(t) for i in kw if kw[i] >= p.keyword_name_term for t in _names(kw_rows, i)}
    question = {stem(t) for t in terms} - named
    # Two hops from the keyword seeds (their edges are read): the best one-hop
    # facts, scored on their own words (the names of their ends are not read
    # yet), lend the entity they lead to a share of their score; the best such
    # entities that are not seeds have their edges read (at most hop2_from).
    neighbours = two_hop_from(kw_around, strength, edge_sim, question, p)
    ranks = passage_rank(found.chunks, found.summaries)
    return Expand(
        strength=strength,
        edge_sim=edge_sim,
        question=question,
        vec_only=[h.id for h in found.entities if h.id not in kw],
        ranks=ranks,
        ranked=sorted(ranks, key=lambda i: ranks[i][0]),
        neighbours=neighbours,
        unmatched=not strength and not edge_sim,
    )


def around_reads(
    g: GraphStore, key: DatasetKey, ids: list[int], limit: int, as_of: str | None, name: str
) -> dict[str, Read | None]:
    """The edges around the entities: the live ones, and with as_of the
    superseded ones too (two reads at once)."""
    if not ids:
        return {}
    out: dict[str, Read | None] = {f"{name}_live": Read(g.live_edges_around, (key, ids, limit))}
    if as_of is not None:
        out[f"{name}_expired"] = Read(g.expired_edges_around, (key, ids, limit))
    return out


def wave3_reads(
    g: GraphStore, key: DatasetKey, plan: Expand, as_of: str | None, p: RetrievalProfile
) -> dict[str, Read | None]:
    """Wave 3: the rows of what the search found (the passages with the rows
    one off the best of them: their neighbours in a session or a text); the
    edges around the similar entities that are not keyword seeds; the
    two-hop edges; the fallback's newest entities when nothing matched."""
    wanted = [*plan.ranks, *neighbour_ids(plan.ranked, p.neighbours_of)]
    return {
        "vec_rows": Read(g.get_entities, (key, plan.vec_only)) if plan.vec_only else None,
        "similar": Read(g.get_edges, (key, list(plan.edge_sim))) if plan.edge_sim else None,
        "passages": Read(g.get_artifacts, (key, wanted)) if plan.ranks else None,
        "recent": Read(g.recent_entities, (key, p.fallback_seeds)) if plan.unmatched else None,
        **around_reads(g, key, plan.neighbours, p.hop2_cap, as_of, "hop2"),
        **around_reads(g, key, plan.vec_only, p.edge_cap, as_of, "vec"),
    }


def plan_facts(
    around: list[Edge],
    hop2_all: list[Edge],
    similar: list[Edge],
    seeds: Seeds,
    edge_sim: dict[int, float],
    question: set[str],
    p: RetrievalProfile,
) -> FactPool:
    """The fact pool once the edges are read: the facts on their own words
    (they choose the texts read as the best facts' sources), and what each
    entity passes on to its facts: its own strength as a seed, or what the
    facts leading to it lent it, whichever is more."""
    hop1 = {e.id: e for e in around}
    degree = degree_of(around)
    facts = [*around, *similar]
    early = on_own_words(facts, seeds.strength, degree, edge_sim, question, p)
    given = lent_to(around, early, seeds.strength, p)
    strength = seeds.strength
    led = {n: max(strength.get(n, 0.0), given.get(n, 0.0)) for n in {*strength, *given}}
    return FactPool(
        edge_sim=edge_sim,
        similar=similar,
        around=around,
        hop1=hop1,
        hop2=[e for e in hop2_all if e.id not in hop1],
        degree=degree,
        led=led,
        early=early,
    )


def wave4_reads(
    g: GraphStore,
    key: DatasetKey,
    facts: FactPool,
    seeds: Seeds,
    passages: dict[int, Artifact],
    p: RetrievalProfile,
) -> dict[str, Read | None]:
    """Wave 4: the ends not read yet, and the texts the best facts (scored
    on their own words) were stated in."""
    early = facts.early
    every = [*facts.around, *facts.similar]
    best = sorted(every, key=lambda e: (-early[e.id], e.id))[: p.source_reads]
    source_ids = sorted({a for e in best if (a := e.artifact_id) is not None and a not in passages})
    need = sorted(_ends([*every, *facts.hop2]) - set(seeds.rows))
    return {
        "texts": Read(g.get_artifacts, (key, source_ids)) if source_ids else None,
        "ends": Read(g.get_entities, (key, need)) if need else None,
    }


def seed_why(
    strength: dict[int, float], kw: dict[int, int], found: Found, fallback: bool
) -> dict[int, dict[str, Any]]:
    """How each seed was found: which pools, its rank and points there."""
    sim = {h.id: (r, h.score) for r, h in enumerate(found.entities)}
    kw_rank = {i: r for r, i in enumerate(kw)}
    out: dict[int, dict[str, Any]] = {}
    for i in strength:
        why: dict[str, Any] = {}
        pools = []
        if fallback:
            pools.append("newest_entities")
        elif i in kw_rank:
            pools.append("keywords")
            why["keyword_points"] = kw[i]
            why["keyword_rank"] = kw_rank[i]
        if not fallback and i in sim:
            pools.append("similar_entities")
            why["rank"], why["cosine"] = sim[i]
        why["pool"] = "+".join(pools)
        out[i] = why
    return out


def newest(edges: list[Edge], limit: int) -> list[Edge]:
    """The ``limit`` newest (highest ID) of the edges, each once."""
    unique = {e.id: e for e in edges}
    return [unique[i] for i in sorted(unique, reverse=True)[:limit]]


def _names(entities: dict[int, Entity], i: int) -> set[str]:
    e = entities.get(i)
    return index_terms(e.name) if e is not None else set()


def _ends(edges: list[Edge]) -> set[int]:
    return {i for e in edges for i in (e.source_id, e.target_id)}
