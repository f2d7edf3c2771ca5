"""remember, stage 3: which facts are new, which restate a live edge (and
may end it), and which live edges the new facts supersede or end (the
invalidate call, judged by the interval rules). Reads only."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..ai import prompts
from ..graph.port import GraphStore
from ..models import DatasetKey, Edge
from ..records.meter import Meter
from ..vectors.port import SearchRequest, VectorIndex
from .extract import Fact
from .llm_json import llm_json
from .options import StageOptions
from .resolve import Resolved
from .temporal import Interval, end_on_restatement
from .timeline import FactView, candidates, effects, restated_period

AROUND_CAP = 100  # live facts read around the new facts' entities
SIMILAR_EDGES = 10  # edges read per new fact by text similarity (invalidate candidates)


@dataclass
class NewFact:
    fact: Fact
    source_id: int  # 0 while the entity is new (its ID comes at write time)
    target_id: int
    vector: list[float]


@dataclass
class FactsPlan:
    new: list[NewFact] = field(default_factory=list)
    restated: dict[int, Edge] = field(default_factory=dict)  # live edges stated again
    ended: dict[int, Edge] = field(default_factory=dict)  # restated ones that now end
    superseded: dict[int, str | None] = field(default_factory=dict)  # edge id -> invalid_at
    around: list[Edge] = field(default_factory=list)  # live edges near the entities


def classify(
    graph: GraphStore,
    key: DatasetKey,
    facts: list[Fact],
    edge_vecs: list[list[float]],
    by_norm: dict[str, Resolved],
) -> FactsPlan:
    """A fact already live between the same entities with the same relation
    is restated (a new provenance link), not duplicated. A fact from an
    entity to itself is dropped."""
    existing_ids = list({id(r): r.entity.id for r in by_norm.values() if not r.created}.values())
    plan = FactsPlan()
    plan.around = graph.live_edges_around(key, existing_ids, AROUND_CAP) if existing_ids else []
    live_by_triple: dict[tuple[int, int, str], list[Edge]] = {}
    for e in plan.around:  # newest first
        live_by_triple.setdefault((e.source_id, e.target_id, e.relation), []).append(e)
    seen: set[tuple[int, int, str]] = set()
    for f, vec in zip(facts, edge_vecs, strict=True):
        if by_norm[f.source] is by_norm[f.target]:
            continue  # a self-loop ("Alice knows Alice Smith")
        s, t = by_norm[f.source].entity, by_norm[f.target].entity
        triple = (s.id, t.id, f.relation)
        # A new entity has no ID yet (0): a fact is told apart by the
        # resolved entities themselves, one object per entity.
        same = (id(by_norm[f.source]), id(by_norm[f.target]), f.relation)
        if same in seen:
            continue
        seen.add(same)
        interval = Interval(f.valid_at, f.invalid_at)
        old = (
            restated_period(live_by_triple.get(triple, []), interval)
            if not (by_norm[f.source].created or by_norm[f.target].created)
            else None
        )
        if old is not None:
            plan.restated[old.id] = old
            end = end_on_restatement(Interval(old.valid_at, old.invalid_at), interval)
            if end is not None:
                plan.ended[old.id] = replace(old, invalid_at=end)
            continue
        plan.new.append(NewFact(f, s.id, t.id, vec))
    return plan


def _views(plan: FactsPlan, by_norm: dict[str, Resolved]) -> list[FactView]:
    return [
        FactView(
            0 if by_norm[nf.fact.source].created else nf.source_id,
            0 if by_norm[nf.fact.target].created else nf.target_id,
            nf.fact.relation,
            Interval(nf.fact.valid_at, nf.fact.invalid_at),
        )
        for nf in plan.new
    ]


def similar_edges(
    graph: GraphStore,
    vectors: VectorIndex,
    threshold: float,
    key: DatasetKey,
    plan: FactsPlan,
    views: list[FactView],
) -> list[set[int]]:
    """Per new fact, the IDs of the live edges of its entities whose text is
    similar to its own (one vector request for all facts). An edge found that
    ``plan.around`` lacks (an entity with many facts) is read and appended."""
    out: list[set[int]] = [set() for _ in views]
    wanted = [i for i, v in enumerate(views) if v.source_id or v.target_id]
    if not wanted:
        return out
    reqs = [
        SearchRequest("edges", plan.new[i].vector, SIMILAR_EDGES, threshold, live=True)
        for i in wanted
    ]
    for i, hits in zip(wanted, vectors.search(key, reqs), strict=True):
        out[i] = {h.id for h in hits}
    missing = sorted(set().union(*out) - {e.id for e in plan.around})
    if missing:
        ends = {x for v in views for x in (v.source_id, v.target_id) if x}
        # An edge of a new fact's own triple is left to the fact claims (it
        # is restated on the claim's owner), not judged.
        triples = {(v.source_id, v.target_id, v.relation) for v in views}
        for e in graph.get_edges(key, missing).values():
            if (
                e.live
                and (e.source_id in ends or e.target_id in ends)
                and (e.source_id, e.target_id, e.relation) not in triples
            ):
                plan.around.append(e)
    return out


def _line(f: Fact, by_norm: dict[str, Resolved]) -> str:
    """A new fact as the invalidate call reads it (by_norm, not names: a new
    entity's ID is still 0 here)."""
    src, dst = by_norm[f.source].entity.name, by_norm[f.target].entity.name
    line = f"{src} --{f.relation}--> {dst}"
    if f.description:
        line += f": {f.description}"
    return (
        line
        + f" [valid_at={f.valid_at}"
        + (f", invalid_at={f.invalid_at}]" if f.invalid_at else "]")
    )


def invalidate(
    graph: GraphStore,
    vectors: VectorIndex,
    threshold: float,
    key: DatasetKey,
    meter: Meter,
    opts: StageOptions,
    plan: FactsPlan,
    by_norm: dict[str, Resolved],
) -> int:
    """One LLM call for all new facts (none without candidates). The
    candidates are the live facts of the new facts' entities (same ends, same
    relation, or a similar text); the model nominates, the interval rules
    decide: fills ``plan.superseded`` and ``plan.ended``, moves duplicates
    from ``plan.new`` to ``plan.restated``, ends the new facts told out of
    order. Returns the number of candidates shown."""
    views = _views(plan, by_norm)
    similar = similar_edges(graph, vectors, threshold, key, plan, views)
    shown = candidates(views, plan.around, similar, set(plan.restated))
    if not (plan.new and shown):
        return len(shown)
    names = {r.entity.id: r.entity.name for r in by_norm.values()}
    for e in shown:
        names.setdefault(e.source_id, "")
        names.setdefault(e.target_id, "")
    missing = [i for i, n in names.items() if not n]
    if missing:
        for eid, ent in graph.get_entities(key, missing).items():
            names[eid] = ent.name
    lines = [_line(nf.fact, by_norm) for nf in plan.new]
    data = llm_json(
        meter,
        opts,
        "invalidate",
        prompts.INVALIDATE_SYSTEM,
        prompts.invalidate_user(lines, shown, names),
        2048,
    )
    fx = effects(data, views, shown)
    by_id = {e.id: e for e in shown}
    plan.superseded = fx.superseded
    for eid, end in fx.ended.items():
        plan.restated[eid] = by_id[eid]
        plan.ended[eid] = replace(by_id[eid], invalid_at=end)
    for eid in fx.absorbed.values():
        plan.restated[eid] = by_id[eid]
    for i, end in fx.new_ends.items():
        plan.new[i].fact.invalid_at = end
    plan.new = [nf for i, nf in enumerate(plan.new) if i not in fx.absorbed]
    return len(shown)
