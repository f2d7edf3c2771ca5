"""remember, stage 3: which facts are new, which restate a live edge (and
may end it), and which live edges the new facts supersede (the invalidate
call). Reads only."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..ai import prompts
from ..ai.jsonreply import as_id
from ..graph.port import GraphStore
from ..models import DatasetKey, Edge
from ..records.meter import Meter
from .extract import Fact, llm_json
from .options import StageOptions
from .resolve import Resolved

AROUND_CAP = 100  # live facts around the new facts' entities shown to invalidate


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
    superseded: dict[int, int] = field(default_factory=dict)  # edge id -> index in new
    around: list[Edge] = field(default_factory=list)  # live edges near the entities


def restated_edge(olds: list[Edge], f: Fact) -> Edge | None:
    """The live edge that a fact states again, or None when the fact is new.
    ``olds`` (newest first) have the fact's source, target and relation."""
    if not olds:
        return None
    for old in olds:  # the period in which the fact starts
        if (old.valid_at or "") <= f.valid_at and (
            old.invalid_at is None or f.valid_at < old.invalid_at
        ):
            return old
    if f.invalid_at is None and all(o.invalid_at and o.invalid_at <= f.valid_at for o in olds):
        return None  # holds again after every period of it ended: a new period
    return next((o for o in olds if o.invalid_at is None), olds[0])


def classify(
    graph: GraphStore,
    key: DatasetKey,
    facts: list[Fact],
    edge_vecs: list[list[float]],
    by_norm: dict[str, Resolved],
) -> FactsPlan:
    """A fact already live between the same entities with the same relation
    is restated (a new provenance link), not duplicated."""
    existing_ids = list({id(r): r.entity.id for r in by_norm.values() if not r.created}.values())
    plan = FactsPlan()
    plan.around = graph.live_edges_around(key, existing_ids, AROUND_CAP) if existing_ids else []
    live_by_triple: dict[tuple[int, int, str], list[Edge]] = {}
    for e in plan.around:  # newest first
        live_by_triple.setdefault((e.source_id, e.target_id, e.relation), []).append(e)
    seen: set[tuple[int, int, str]] = set()
    for f, vec in zip(facts, edge_vecs, strict=True):
        s, t = by_norm[f.source].entity, by_norm[f.target].entity
        triple = (s.id, t.id, f.relation)
        # A new entity has no ID yet (0): a fact is told apart by the
        # resolved entities themselves, one object per entity.
        same = (id(by_norm[f.source]), id(by_norm[f.target]), f.relation)
        if same in seen:
            continue
        seen.add(same)
        old = (
            restated_edge(live_by_triple.get(triple, []), f)
            if not (by_norm[f.source].created or by_norm[f.target].created)
            else None
        )
        if old is not None:
            plan.restated[old.id] = old
            if f.invalid_at and not old.invalid_at:
                plan.ended[old.id] = replace(old, invalid_at=f.invalid_at)
            continue
        plan.new.append(NewFact(f, s.id, t.id, vec))
    return plan


def invalidate(
    graph: GraphStore,
    key: DatasetKey,
    meter: Meter,
    opts: StageOptions,
    plan: FactsPlan,
    by_norm: dict[str, Resolved],
) -> int:
    """One LLM call for all new facts (none without candidates): fills
    ``plan.superseded``. Returns the number of candidates shown."""
    names = {r.entity.id: r.entity.name for r in by_norm.values()}
    for e in plan.around:
        names.setdefault(e.source_id, "")
        names.setdefault(e.target_id, "")
    candidates = [e for e in plan.around if e.id not in plan.restated]
    if not (plan.new and candidates):
        return len(candidates)
    missing = [i for i, n in names.items() if not n]
    if missing:
        for eid, ent in graph.get_entities(key, missing).items():
            names[eid] = ent.name
    lines = []
    for nf in plan.new:
        f = nf.fact
        # by_norm, not names: a new entity's ID is still 0 here
        src, dst = by_norm[f.source].entity.name, by_norm[f.target].entity.name
        line = f"{src} --{f.relation}--> {dst}"
        if f.description:
            line += f": {f.description}"
        line += f" [valid_at={f.valid_at}" + (
            f", invalid_at={f.invalid_at}]" if f.invalid_at else "]"
        )
        lines.append(line)
    data = llm_json(
        meter,
        opts,
        "invalidate",
        prompts.INVALIDATE_SYSTEM,
        prompts.invalidate_user(lines, candidates, names),
        2048,
    )
    cand_ids = {e.id for e in candidates}
    for item in data.get("invalidated") or []:
        if not isinstance(item, dict):
            continue
        edge_id, by = as_id(item.get("edge_id")), as_id(item.get("by"))
        if (
            edge_id is not None
            and edge_id in cand_ids
            and by is not None
            and 0 <= by < len(plan.new)
        ):
            plan.superseded.setdefault(edge_id, by)
    return len(candidates)
