"""The SQLite graph store's commit: one remember's rows and updates, applied
inside one write transaction (the caller's ``BEGIN IMMEDIATE``), so that a
failure or a killed process leaves all of it or none of it."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ...errors import Busy, NotFound, UpstreamError
from ...models import Committed, DatasetKey, EdgeChange, Entity, GraphWrite
from ...text import normalize_name
from ..rules import claim_of, releases_claim
from .rows import (
    ARTIFACT_COLS,
    EDGE_COLS,
    ENTITY_COLS,
    edge_of,
    edge_values,
    entity_of,
    entity_terms,
    entity_values,
)

# (Busy: a remember sent again starts over on the dataset as it is now.)
RECREATED = "the dataset was erased or deleted while this call ran; try again"


def apply(conn: sqlite3.Connection, key: DatasetKey, write: GraphWrite) -> Committed:
    pk = key.pk
    n_ent, n_edge, n_art = len(write.new_entities), len(write.new_edges), len(write.artifacts)
    # The dataset first: a write to a deleted dataset fails before any row,
    # and so does one planned against an earlier life of the name (an erase
    # or a delete ran meanwhile, and the name was used again): its claims
    # and the rows it read went with that life.
    cur = conn.execute(
        "UPDATE datasets SET entities = entities + ?, edges = edges + ?, "
        "artifacts = artifacts + ? WHERE user_id = ? AND name = ? AND deleted_at IS NULL "
        "AND (? = '' OR generation = ?)",
        (n_ent, n_edge, n_art, key.user_id, key.dataset, write.generation, write.generation),
    )
    if cur.rowcount == 0:
        live = conn.execute(
            "SELECT 1 FROM datasets WHERE user_id = ? AND name = ? AND deleted_at IS NULL",
            (key.user_id, key.dataset),
        ).fetchone()
        if live:
            raise Busy(RECREATED, 1)
        raise NotFound(f"dataset {key.dataset!r} does not exist")
    conn.executemany(
        f"INSERT OR REPLACE INTO artifacts (pk, {ARTIFACT_COLS}) VALUES (?{', ?' * 10})",
        [
            (
                pk,
                a.id,
                a.text,
                a.created_at,
                a.reference_time,
                a.session_id,
                a.parent_id,
                a.index,
                a.call_id,
                a.summary,
                a.speaker,
            )
            for a in write.artifacts
        ],
    )
    for entity in write.new_entities:
        put_entity(conn, pk, entity)
    conn.executemany(
        f"INSERT OR REPLACE INTO edges (pk, {EDGE_COLS}) VALUES (?{', ?' * 11})",
        [(pk, *edge_values(e)) for e in write.new_edges],
    )
    links = [("E", e, a) for e, a in write.entity_links]
    links += [("D", e, a) for e, a in write.edge_links]
    conn.executemany(
        "INSERT OR IGNORE INTO links (pk, kind, row_id, artifact_id) VALUES (?, ?, ?, ?)",
        [(pk, *link) for link in links],
    )
    conn.executemany(
        "DELETE FROM links WHERE pk = ? AND kind = 'E' AND row_id = ? AND artifact_id = ?",
        [(pk, e, a) for e, a in write.entity_unlinks],
    )
    conn.executemany(
        "INSERT OR REPLACE INTO corrections (pk, edge_id, replaces, who, at, reason) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(pk, c.edge_id, c.replaces, c.who, c.at, c.reason) for c in write.corrections],
    )
    conn.executemany(
        "INSERT OR REPLACE INTO merges (pk, entity_id, artifact_id, names, reason, at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [
            (pk, m.entity_id, m.artifact_id, json.dumps(m.names), m.reason, m.at)
            for m in write.merges
        ],
    )
    conn.executemany(
        "INSERT OR REPLACE INTO expiries (pk, artifact_id, expires_at, user_id, dataset) "
        "VALUES (?, ?, ?, ?, ?)",
        [(pk, a, at, key.user_id, key.dataset) for a, at in write.expiries],
    )
    conn.executemany(  # a split moves the mention: the merge goes with it
        "DELETE FROM merges WHERE pk = ? AND entity_id = ? AND artifact_id = ?",
        [(pk, e, a) for e, a in write.entity_unlinks],
    )
    done = Committed()
    # Inside the write lock: the rows as they are now, merged.
    for eu in write.entity_updates:
        cur_ent = entity_of(_stored(conn, "entities", ENTITY_COLS, pk, eu.id, "an entity"))
        new = eu.apply(cur_ent, write.now)
        done.entities[eu.id] = new
        if new != cur_ent:
            conn.execute("DELETE FROM terms WHERE pk = ? AND entity_id = ?", (pk, eu.id))
            put_entity(conn, pk, new)
    for du in write.edge_updates:
        old_edge = edge_of(_stored(conn, "edges", EDGE_COLS, pk, du.id, "an edge"))
        new_edge = du.apply(old_edge)
        done.edges[du.id] = new_edge
        change = du.change(old_edge, new_edge, write.now)
        if change is not None:
            put_change(conn, pk, change)
        conn.execute(
            "UPDATE edges SET invalid_at = ?, expired_at = ? WHERE pk = ? AND id = ?",
            (new_edge.invalid_at, new_edge.expired_at, pk, du.id),
        )
        if releases_claim(old_edge, new_edge):
            conn.execute(
                "DELETE FROM facts WHERE pk = ? AND triple = ? AND edge_id = ?",
                (pk, claim_of(old_edge), old_edge.id),
            )
    _move_claims(conn, pk, write)
    return done


def _move_claims(conn: sqlite3.Connection, pk: str, write: GraphWrite) -> None:
    """A correction of the same triple: its new open edge takes the claim
    the old one gave up (unless another edge took it meanwhile)."""
    new_by_id = {e.id: e for e in write.new_edges}
    for _old, new_id in write.moved_claims:
        e = new_by_id[new_id]
        conn.execute(
            "INSERT OR IGNORE INTO facts (pk, triple, edge_id, claimed_at) VALUES (?, ?, ?, ?)",
            (pk, claim_of(e), e.id, write.now),
        )


def put_change(conn: sqlite3.Connection, pk: str, c: EdgeChange) -> None:
    conn.execute(
        "INSERT INTO changes (pk, edge_id, artifact_id, by_edge, at, prev_invalid_at, "
        "prev_expired_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (pk, c.edge_id, c.artifact_id, c.by_edge, c.at, c.prev_invalid_at, c.prev_expired_at),
    )


def _stored(
    conn: sqlite3.Connection, table: str, cols: str, pk: str, row_id: int, what: str
) -> tuple[Any, ...]:
    """The row to update as it is now; ``what`` names it if it is gone."""
    row = conn.execute(
        f"SELECT {cols} FROM {table} WHERE pk = ? AND id = ?", (pk, row_id)
    ).fetchone()
    if row is None:
        raise UpstreamError(f"graph store write failed: {what} to update is gone")
    return row


def put_entity(conn: sqlite3.Connection, pk: str, e: Entity) -> None:
    """An entity's row and its keyword rows (``terms``)."""
    norm = normalize_name(e.name)
    conn.execute(
        f"INSERT OR REPLACE INTO entities (pk, {ENTITY_COLS}, norm_name) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (pk, *entity_values(e), norm),
    )
    conn.executemany(
        "INSERT OR REPLACE INTO terms (pk, term, entity_id, in_name, in_description, "
        "norm_name, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(pk, t, e.id, n, d, norm, e.updated_at) for t, n, d in entity_terms(e)],
    )
