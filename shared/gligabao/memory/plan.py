"""remember, stage 4: the typed write plan (``GraphWrite``) from what was
resolved, and the response built from it. Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..models import Artifact, Edge, Entity, GraphWrite
from .extract import merge_description
from .facts import FactsPlan
from .resolve import Resolved


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
) -> list[Artifact]:
    """The text's artifact, then one per chunk (children of the first)."""
    parent = Artifact(first_artifact, text, now, reference_time, session_id, call_id=call_id)
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
                summaries[i],
            )
        )
    return out


def build(
    now: str,
    artifacts: list[Artifact],
    unique: list[Resolved],
    first_edge: int,
    facts: FactsPlan,
    raced: dict[int, Edge],
) -> Planned:
    """The rows to write, from the entities as last read (no mutation of
    ``unique``: a retry builds them again)."""
    parent, chunk_ids = artifacts[0], [a.id for a in artifacts[1:]]
    write = GraphWrite(artifacts=list(artifacts))
    entities_out: list[Entity] = []
    for r in unique:
        desc, type_ = r.entity.description, r.entity.type
        for ex in r.extracted:
            desc = merge_description(desc, ex.description)
            type_ = type_ or ex.type
        if r.created:
            ent = replace(r.entity, description=desc, type=type_, created_at=now, updated_at=now)
            write.new_entities.append(ent)
        elif (desc, type_) != (r.entity.description, r.entity.type) or not r.entity.updated_at:
            # (no updated_at: the winner of a name race whose row has not
            # landed; written conditionally too, so that this call fails
            # rather than link to an entity that may never exist)
            ent = replace(r.entity, description=desc, type=type_, updated_at=now)
            write.updated_entities.append((r.entity, ent))
        else:
            ent = r.entity
        entities_out.append(ent)
    ids_by_norm = {ex.norm: r.entity.id for r in unique for ex in r.extracted}

    def artifact_of(chunk: int | None) -> list[int]:
        return [parent.id] if chunk is None else [parent.id, chunk_ids[chunk]]

    for r in unique:
        for a in sorted({a for ex in r.extracted for a in artifact_of(ex.chunk)}):
            write.entity_links.append((r.entity.id, a))

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
            parent.id,
            f.valid_at,
            f.invalid_at,
            now,
            None,
        )
        write.new_edges.append(edge)
        edges_out.append(edge)
        for a in artifact_of(f.chunk):
            write.edge_links.append((edge.id, a))
    for eid, old in facts.restated.items():
        new = facts.ended.get(eid, old)
        if new is not old:
            write.updated_edges.append((old, new))
        write.edge_links.append((eid, parent.id))
        edges_out.append(new)
    # Facts whose claim a concurrent call won: restated on its edge. The
    # edge is written again unchanged (a conditional put), so that this
    # write fails rather than link to an edge whose write was undone.
    touched: set[int] = set()
    for i, winner in sorted(raced.items()):
        for a in artifact_of(facts.new[i].fact.chunk):
            write.edge_links.append((winner.id, a))
        if winner.id in facts.restated or winner.id in touched:
            continue
        touched.add(winner.id)
        write.updated_edges.append((winner, winner))
        edges_out.append(winner)
    invalidated: list[dict[str, Any]] = []
    by_id = {e.id: e for e in facts.around}
    for eid, at in sorted(facts.superseded.items()):
        old = by_id[eid]
        # (the interval rules set ``at``: never before the old valid_at)
        new = replace(old, expired_at=now, invalid_at=at or old.invalid_at)
        write.updated_edges.append((old, new))
        invalidated.append({"id": eid, "invalid_at": new.invalid_at, "expired_at": now})
    for eid, new in sorted(facts.ended.items()):
        invalidated.append({"id": eid, "invalid_at": new.invalid_at})
    return Planned(write, entities_out, edges_out, invalidated)


def response(
    planned: Planned,
    created: set[int],
    names: dict[int, str],
    artifact_id: int,
    chunks: int,
    session_id: str | None,
) -> dict[str, Any]:
    """The remember's answer (``names``: every entity ID the edges name)."""
    out: dict[str, Any] = {}
    if session_id is not None:
        out["session_id"] = session_id
    out["artifact_id"] = artifact_id
    out["entities"] = [
        {**e.public(), "created": e.id in created}
        for e in sorted(planned.entities, key=lambda e: e.id)
    ]
    out["edges"] = [e.public(names) for e in sorted(planned.edges, key=lambda e: e.id)]
    out["invalidated"] = planned.invalidated
    out["chunks"] = chunks
    return out
