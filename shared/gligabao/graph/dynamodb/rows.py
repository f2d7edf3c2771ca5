"""Rows of the graph tables: their keys, and conversions between the
pynamodb rows and the models."""

from __future__ import annotations

import json
from typing import Any

from pynamodb.expressions.condition import Condition

from ...dynamodb.tables import ArtifactRow, DatasetRow, EdgeRow, EntityRow, TermRow
from ...models import Artifact, Dataset, Edge, Entity
from ...text import index_terms, normalize_name

ID_BASE = 10**12  # IDs stay below this (12 digits in sort keys)
MAX_KEY_BYTES = 1024  # DynamoDB's limit for a sort key
FACT_CLAIM_PREFIX = "F#"  # fact claims share the terms table (see TermRow)
INTENT_PREFIX = "C#"  # so do the commit records (see graph/dynamodb/commit.py)


def inverted_id(entity_id: int) -> str:
    return f"{ID_BASE - entity_id:012d}"


def term_sk(term: str, entity_id: int) -> str:
    return f"{term}#{inverted_id(entity_id)}"


def entity_link_sk(entity_id: int, artifact_id: int) -> str:
    return f"E#{entity_id:012d}#{artifact_id:012d}"


def edge_link_sk(edge_id: int, artifact_id: int) -> str:
    return f"D#{edge_id:012d}#{artifact_id:012d}"


def fact_claim_sk(triple: str) -> str:
    return FACT_CLAIM_PREFIX + triple


def updated_key(updated_at: str, entity_id: int) -> str:
    return f"{updated_at}#{entity_id:012d}"


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def dataset_from_row(row: DatasetRow) -> Dataset:
    return Dataset(
        name=row.name,
        created_at=row.created_at,
        entities=int(row.entities or 0),
        edges=int(row.edges or 0),
        artifacts=int(row.artifacts or 0),
        generation=row.generation or "",
    )


def entity_row(pk: str, e: Entity, txn: str | None = None) -> EntityRow:
    return EntityRow(
        pk,
        e.id,
        name=e.name,
        norm_name=normalize_name(e.name),
        type=e.type,
        description=e.description,
        created_at=e.created_at,
        updated_at=e.updated_at,
        updated_key=updated_key(e.updated_at, e.id),
        lat=e.lat,
        lon=e.lon,
        attributes=_json_or_none(e.attributes),
        attribute_history=_json_or_none(e.attribute_history),
        txn=txn,
    )


def entity_from_row(row: EntityRow) -> Entity:
    return Entity(
        id=int(row.id),
        name=row.name,
        type=row.type or "",
        description=row.description or "",
        created_at=row.created_at or "",
        updated_at=row.updated_at or "",
        lat=_opt_float(row.lat),
        lon=_opt_float(row.lon),
        attributes=json.loads(row.attributes or "{}"),
        attribute_history=json.loads(row.attribute_history or "{}"),
    )


def _json_or_none(value: dict[str, Any]) -> str | None:
    return json.dumps(value, separators=(",", ":")) if value else None


def term_rows(pk: str, e: Entity) -> dict[str, TermRow]:
    """The keyword index rows of an entity, by sort key."""
    in_name = index_terms(e.name)
    in_desc = index_terms(e.description)
    norm = normalize_name(e.name)
    out: dict[str, TermRow] = {}
    for term in in_name | in_desc:
        sk = term_sk(term, e.id)
        if len(sk.encode()) > MAX_KEY_BYTES:  # a pathological "word": not indexable
            continue
        out[sk] = TermRow(
            pk,
            sk,
            entity_id=e.id,
            in_name=term in in_name,
            in_description=term in in_desc,
            norm_name=norm,
            updated_at=e.updated_at,
        )
    return out


def edge_row(pk: str, e: Edge, txn: str | None = None) -> EdgeRow:
    live = e.expired_at is None
    return EdgeRow(
        pk,
        e.id,
        source_id=e.source_id,
        target_id=e.target_id,
        relation=e.relation,
        description=e.description,
        artifact_id=e.artifact_id,
        valid_at=e.valid_at,
        invalid_at=e.invalid_at,
        created_at=e.created_at,
        expired_at=e.expired_at,
        live_src=f"{pk}#{e.source_id}" if live else None,
        live_dst=f"{pk}#{e.target_id}" if live else None,
        gone_src=None if live else f"{pk}#{e.source_id}",
        gone_dst=None if live else f"{pk}#{e.target_id}",
        vstate="live" if live else "gone",
        attributes=_json_or_none(e.attributes),
        txn=txn,
    )


def edge_from_row(row: EdgeRow) -> Edge:
    return Edge(
        id=int(row.id),
        source_id=int(row.source_id),
        target_id=int(row.target_id),
        relation=row.relation,
        description=row.description or "",
        artifact_id=_opt_int(row.artifact_id),
        valid_at=row.valid_at,
        invalid_at=row.invalid_at,
        created_at=row.created_at or "",
        expired_at=row.expired_at,
        attributes=json.loads(row.attributes or "{}"),
    )


def artifact_row(pk: str, a: Artifact, txn: str | None = None) -> ArtifactRow:
    return ArtifactRow(
        pk,
        a.id,
        text=a.text,
        created_at=a.created_at,
        reference_time=a.reference_time,
        session_id=a.session_id,
        parent_id=a.parent_id,
        index=a.index,
        call_id=a.call_id,
        summary=a.summary,
        speaker=a.speaker,
        session_key=(
            f"{pk}#{a.session_id}" if a.session_id is not None and a.parent_id is None else None
        ),
        txn=txn,
    )


def artifact_from_row(row: ArtifactRow) -> Artifact:
    return Artifact(
        id=int(row.id),
        text=row.text or "",
        created_at=row.created_at or "",
        reference_time=row.reference_time or "",
        session_id=row.session_id,
        parent_id=_opt_int(row.parent_id),
        index=_opt_int(row.index),
        call_id=row.call_id,
        summary=row.summary,
        speaker=row.speaker,
    )


def same(attr: Any, value: Any) -> Condition:
    """attr == value, or attr absent when value is None."""
    return attr.does_not_exist() if value is None else attr == value


def edge_unchanged(old: Edge) -> Condition:
    return (
        EdgeRow.id.exists()
        & same(EdgeRow.expired_at, old.expired_at)
        & same(EdgeRow.invalid_at, old.invalid_at)
    )


def entity_unchanged(old: Entity) -> Condition:
    # updated_at has second precision: two updates within one second would
    # both pass a check on it alone, and the second would erase the first.
    return (
        (EntityRow.updated_at == old.updated_at)
        & (EntityRow.description == old.description)
        & (EntityRow.type == old.type)
    )


def intent_sk(txn: str) -> str:
    return INTENT_PREFIX + txn
