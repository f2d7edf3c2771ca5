"""The SQLite graph store's columns and how its rows become models: shared by
the reads (``store.py``) and the commit (``write.py``)."""

from __future__ import annotations

import json
from typing import Any

from ...models import Artifact, Dataset, Edge, Entity
from ...text import index_terms

ENTITY_COLS = (
    "id, name, type, description, created_at, updated_at, lat, lon, attributes, attribute_history"
)
EDGE_COLS = (
    "id, source_id, target_id, relation, description, artifact_id, valid_at, invalid_at, "
    "created_at, expired_at, attributes"
)
ARTIFACT_COLS = (
    "id, text, created_at, reference_time, session_id, parent_id, idx, call_id, summary, speaker"
)


def marks(n: int) -> str:
    """``n`` placeholders for an ``IN (...)`` list."""
    return ",".join("?" * n)


def entity_of(row: tuple[Any, ...]) -> Entity:
    """The two last columns are JSON objects (NULL: none, as a row written
    before attributes existed reads)."""
    id_, name, type_, desc, created, updated, lat, lon, values, history = row
    return Entity(
        id_,
        name,
        type_,
        desc,
        created,
        updated,
        lat,
        lon,
        json.loads(values or "{}"),
        json.loads(history or "{}"),
    )


def entity_values(e: Entity) -> tuple[Any, ...]:
    """The ``ENTITY_COLS`` of an entity, in order."""
    return (
        e.id,
        e.name,
        e.type,
        e.description,
        e.created_at,
        e.updated_at,
        e.lat,
        e.lon,
        json.dumps(e.attributes, separators=(",", ":")) if e.attributes else None,
        json.dumps(e.attribute_history, separators=(",", ":")) if e.attribute_history else None,
    )


def edge_of(row: tuple[Any, ...]) -> Edge:
    """The last column is a JSON object (NULL: none)."""
    id_, src, dst, relation, desc, artifact_id, valid_at, invalid_at, created, expired, values = row
    return Edge(
        id_,
        src,
        dst,
        relation,
        desc,
        artifact_id,
        valid_at,
        invalid_at,
        created,
        expired,
        json.loads(values or "{}"),
    )


def edge_values(e: Edge) -> tuple[Any, ...]:
    """The ``EDGE_COLS`` of an edge, in order."""
    return (
        e.id,
        e.source_id,
        e.target_id,
        e.relation,
        e.description,
        e.artifact_id,
        e.valid_at,
        e.invalid_at,
        e.created_at,
        e.expired_at,
        json.dumps(e.attributes, separators=(",", ":")) if e.attributes else None,
    )


def artifact_of(row: tuple[Any, ...]) -> Artifact:
    return Artifact(*row)


def dataset_of(row: tuple[Any, ...]) -> Dataset:
    return Dataset(
        name=row[0],
        created_at=row[1],
        entities=row[2],
        edges=row[3],
        artifacts=row[4],
        generation=row[5] or "",
    )


def entity_terms(e: Entity) -> list[tuple[str, bool, bool]]:
    """The keyword rows of an entity: (term, in its name, in its description)."""
    in_name, in_desc = index_terms(e.name), index_terms(e.description)
    return [(t, t in in_name, t in in_desc) for t in sorted(in_name | in_desc)]
