"""remember, stage 4: the typed write plan (``GraphWrite``) from what was
resolved, and the response built from it. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..models import (
    Artifact,
    Committed,
    Edge,
    EdgeUpdate,
    Entity,
    EntityUpdate,
    GraphWrite,
    Merge,
    merge_description,
)
from .facts import FactsPlan
from .names import Reason
from .resolve import Resolved
from .window import Said


@dataclass
class Planned:
    write: GraphWrite
    entities: list[Entity]  # as they will read after the write
    edges: list[Edge]
    invalidated: list[dict[str, Any]]


def artifacts_of(
    text: str,
    chunks: list[str],
    summaries: list[str],
    first_artifact: int,
    now: str,
    reference_time: str,
    session_id: str | None,
    call_id: str | None,
    speaker: str | None = None,
) -> list[Artifact]:
    """The text's artifact, then one per chunk (children of the first)."""
    parent = Artifact(
        first_artifact, text, now, reference_time, session_id, call_id=call_id, speaker=speaker
    )
    out = [parent]
    for i, chunk in enumerate(chunks):
        out.append(
            Artifact(
                first_artifact + 1 + i,
                chunk,
                now,
                reference_time,
                session_id,
                parent.id,
                i,
                call_id,
                summaries[i] if i < len(summaries) else None,  # (none without extraction)
                speaker,
            )
        )
    return out


def message_artifacts(
    messages: list[Said], first_artifact: int, now: str, session_id: str | None, call_id: str | None
) -> list[Artifact]:
    """One artifact per message of a window, in order, each with its time and speaker."""
    return [
        Artifact(
            first_artifact + i,
            m.text,
            now,
            m.reference_time,
            m.session_id or session_id,
            call_id=call_id,
            speaker=m.speaker,
        )
        for i, m in enumerate(messages)
    ]


def build(
    txn: str,
    now: str,
    artifacts: list[Artifact],
    unique: list[Resolved],
    first_edge: int,
    facts: FactsPlan,
    raced: dict[int, Edge],
    windowed: bool = False,
) -> Planned:
    """The typed write: new rows, updates of stored rows (merged by the store
    into the rows as they are when it commits), provenance links. In a
    window (``windowed``: one artifact per message) a fact links to the
    message that states it, and an entity, or a fact the model did not
    place, to every message of the window."""
    parent, chunk_ids = artifacts[0], [a.id for a in artifacts[1:]]
    every = [a.id for a in artifacts]
    write = GraphWrite(txn=txn, now=now, artifacts=list(artifacts))
    entities_out = _plan_entities(write, unique, now)
    ids_by_norm = {ex.norm: r.entity.id for r in unique for ex in r.extracted}

    def artifact_of(chunk: int | None) -> list[int]:
        if windowed:
            return every if chunk is None else [every[chunk]]
        return [parent.id] if chunk is None else [parent.id, chunk_ids[chunk]]

    _entity_links(write, unique, artifact_of, now)

    edges_out: list[Edge] = []
    for i, nf in enumerate(facts.new):
        if i in raced:
            continue
        f = nf.fact
        edge = Edge(
            first_edge + i,
            ids_by_norm[f.source],
            ids_by_norm[f.target],
            f.relation,
            f.description,
            artifact_of(f.chunk)[0],
            f.valid_at,
            f.invalid_at,
            now,
            None,
            dict(f.attributes),
        )
        write.new_edges.append(edge)
        edges_out.append(edge)
        for a in artifact_of(f.chunk):
            write.edge_links.append((edge.id, a))
    for eid, old in facts.restated.items():
        new = facts.ended.get(eid, old)
        if new is not old:
            write.edge_updates.append(
                EdgeUpdate(eid, invalid_at=new.invalid_at, artifact_id=parent.id)
            )
        for a in every if windowed else [parent.id]:
            write.edge_links.append((eid, a))
        edges_out.append(new)
    # Facts whose claim a concurrent call won: restated on its edge (which
    # has committed: a claim is returned to others only once it has).
    touched: set[int] = set()
    for i, winner in sorted(raced.items()):
        for a in artifact_of(facts.new[i].fact.chunk):
            write.edge_links.append((winner.id, a))
        if winner.id in facts.restated or winner.id in touched:
            continue
        touched.add(winner.id)
        edges_out.append(winner)
    invalidated: list[dict[str, Any]] = []
    by_id = {e.id: e for e in facts.around}
    for eid, at in sorted(facts.superseded.items()):
        old = by_id[eid]
        # (the interval rules set ``at``: never before the old valid_at)
        ended_by = EdgeUpdate(
            eid,
            invalid_at=at,
            expired_at=now,
            artifact_id=parent.id,
            by_edge=_successor(old, write),
        )
        new = ended_by.apply(old)
        write.edge_updates.append(ended_by)
        invalidated.append({"id": eid, "invalid_at": new.invalid_at, "expired_at": now})
    for eid, new in sorted(facts.ended.items()):
        invalidated.append({"id": eid, "invalid_at": new.invalid_at})
    return Planned(write, entities_out, edges_out, invalidated)


def landed(planned: Planned, committed: Committed) -> None:
    """The stored rows the commit updated, as they now read (a concurrent
    call may have enriched them too)."""
    planned.entities = [committed.entities.get(e.id, e) for e in planned.entities]
    by_id = {e.id: e for e in planned.edges}
    by_id.update({i: e for i, e in committed.edges.items() if i in by_id})
    planned.edges = list(by_id.values())
    for item in planned.invalidated:
        edge = committed.edges.get(item["id"])
        if edge is not None:
            item["invalid_at"] = edge.invalid_at
            if "expired_at" in item:
                item["expired_at"] = edge.expired_at


def response(
    planned: Planned,
    matched: dict[int, Reason | None],
    names: dict[int, str],
    artifacts: list[int],
    chunks: int,
    session_id: str | None,
) -> dict[str, Any]:
    """The remember's answer (``matched``: the stored entities the text
    named, with why; ``names``: every entity ID the edges name;
    ``artifacts``: the texts stored, in order, not their chunks). ``artifact_id``
    is the first of them (a text's own; a window's first message)."""
    out: dict[str, Any] = {}
    if session_id is not None:
        out["session_id"] = session_id
    out["artifact_id"] = artifacts[0]
    out["artifacts"] = artifacts
    out["entities"] = [
        {**e.public(), "created": e.id not in matched, "match": matched.get(e.id)}
        for e in sorted(planned.entities, key=lambda e: e.id)
    ]
    out["edges"] = [e.public(names) for e in sorted(planned.edges, key=lambda e: e.id)]
    out["invalidated"] = planned.invalidated
    out["chunks"] = chunks
    return out


def _successor(old: Edge, write: GraphWrite) -> int | None:
    """The new edge of this write that takes over from ``old``: same source
    and relation (the superseding rules compare those), else None."""
    for edge in write.new_edges:
        if edge.source_id == old.source_id and edge.relation == old.relation:
            return edge.id
    return None


def _plan_entities(write: GraphWrite, unique: list[Resolved], now: str) -> list[Entity]:
    """The new entities (their extracted descriptions merged) and the updates
    of stored ones, into ``write``; every entity as it will read after it."""
    out: list[Entity] = []
    for r in unique:
        # the attributes the texts gave it (validated upstream): the last given wins
        attributes = {k: v for ex in r.extracted for k, v in ex.attributes.items()}
        if r.created:
            desc, type_ = r.entity.description, r.entity.type
            for ex in r.extracted:
                desc = merge_description(desc, ex.description)
                type_ = type_ or ex.type
            ent = replace(
                r.entity,
                description=desc,
                type=type_,
                created_at=now,
                updated_at=now,
                attributes=attributes,
            )
            write.new_entities.append(ent)
        else:
            update = EntityUpdate(
                r.entity.id,
                [ex.description for ex in r.extracted],
                next((ex.type for ex in r.extracted if ex.type), ""),
                attributes,
            )
            ent = update.apply(r.entity, now)
            if ent is not r.entity:
                write.entity_updates.append(update)
        out.append(ent)
    return out


def _entity_links(
    write: GraphWrite,
    unique: list[Resolved],
    artifact_of: Callable[[int | None], list[int]],
    now: str,
) -> None:
    """Each entity's links to the texts that name it; for a name filed under
    a stored entity, the merge: which names of which text went to it, why."""
    for r in unique:
        for a in sorted({a for ex in r.extracted for a in artifact_of(ex.chunk)}):
            write.entity_links.append((r.entity.id, a))
        if not r.created and r.match is not None:
            by_text: dict[int, list[str]] = {}
            for ex in r.extracted:
                by_text.setdefault(artifact_of(ex.chunk)[0], []).append(ex.name)
            write.merges += [
                Merge(r.entity.id, a, tuple(dict.fromkeys(ns)), r.match, now)
                for a, ns in sorted(by_text.items())
            ]
