"""The SQLite graph store's browse reads and its forget (one write
transaction: a killed process leaves all of a forget or none of it)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any, cast

from ...crash import crash_point
from ...errors import NotFound
from ...models import (
    Artifact,
    Correction,
    DatasetKey,
    EdgeChange,
    Entity,
    ForgetPlan,
    Forgotten,
    Merge,
)
from ...sqlite.db import Database, sqlite_errors
from ..rules import claim_of, is_open, undone
from .outbox import SqliteOutbox
from .rows import ARTIFACT_COLS, EDGE_COLS, ENTITY_COLS, artifact_of, edge_of, entity_of, marks

CHANGE_COLS = "edge_id, artifact_id, by_edge, at, prev_invalid_at, prev_expired_at"


def _change_of(row: tuple[Any, ...]) -> EdgeChange:
    return EdgeChange(*row)


class SqliteBrowse:
    """Mixed into SqliteGraphStore (which gives ``db``, ``_outbox`` and ``_rows``)."""

    db: Database
    _outbox: SqliteOutbox | None

    def _rows(self, sql: str, args: Iterable[Any]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    @sqlite_errors("graph store entities_page")
    def entities_page(self, key: DatasetKey, limit: int, after: str | None) -> list[Entity]:
        if limit <= 0:
            return []
        where, args = "", cast(tuple[Any, ...], ())
        if after is not None:
            at, _, row_id = after.rpartition("#")
            where = "AND (updated_at < ? OR (updated_at = ? AND id < ?))"
            args = (at, at, int(row_id))
        rows = self._rows(
            f"SELECT {ENTITY_COLS} FROM entities INDEXED BY entities_by_updated WHERE pk = ? "
            f"{where} ORDER BY updated_at DESC, id DESC LIMIT ?",
            (key.pk, *args, limit),
        )
        return [entity_of(r) for r in rows]

    @sqlite_errors("graph store texts_page")
    def texts_page(self, key: DatasetKey, limit: int, before: int | None) -> list[Artifact]:
        if limit <= 0:
            return []
        rows = self._rows(
            f"SELECT {ARTIFACT_COLS} FROM artifacts WHERE pk = ? AND parent_id IS NULL "
            "AND id < ? ORDER BY id DESC LIMIT ?",
            (key.pk, before if before is not None else 2**62, limit),
        )
        return [artifact_of(r) for r in rows]

    @sqlite_errors("graph store session_page")
    def session_page(
        self, key: DatasetKey, session_id: str, limit: int, after: int | None
    ) -> list[Artifact]:
        if limit <= 0:
            return []
        rows = self._rows(
            f"SELECT {ARTIFACT_COLS} FROM artifacts INDEXED BY artifacts_by_session "
            "WHERE pk = ? AND session_id = ? AND parent_id IS NULL AND id > ? "
            "ORDER BY id LIMIT ?",
            (key.pk, session_id, after or 0, limit),
        )
        return [artifact_of(r) for r in rows]

    @sqlite_errors("graph store chunks_of")
    def chunks_of(self, key: DatasetKey, artifact_id: int) -> list[Artifact]:
        rows = self._rows(
            f"SELECT {ARTIFACT_COLS} FROM artifacts WHERE pk = ? AND parent_id = ? ORDER BY id",
            (key.pk, int(artifact_id)),
        )
        return [artifact_of(r) for r in rows]

    @sqlite_errors("graph store artifact_links")
    def artifact_links(self, key: DatasetKey, artifact_id: int) -> tuple[list[int], list[int]]:
        rows = self._rows(
            "SELECT kind, row_id FROM links INDEXED BY links_by_artifact "
            "WHERE pk = ? AND artifact_id = ? ORDER BY kind, row_id",
            (key.pk, int(artifact_id)),
        )
        return [r[1] for r in rows if r[0] == "E"], [r[1] for r in rows if r[0] == "D"]

    @sqlite_errors("graph store edge_changes")
    def edge_changes(
        self, key: DatasetKey, edge_id: int
    ) -> tuple[list[EdgeChange], list[EdgeChange]]:
        made = self._rows(
            f"SELECT {CHANGE_COLS} FROM changes WHERE pk = ? AND by_edge = ? ORDER BY seq",
            (key.pk, int(edge_id)),
        )
        suffered = self._rows(
            f"SELECT {CHANGE_COLS} FROM changes WHERE pk = ? AND edge_id = ? ORDER BY seq",
            (key.pk, int(edge_id)),
        )
        return [_change_of(r) for r in made], [_change_of(r) for r in suffered]

    @sqlite_errors("graph store changes_by_artifact")
    def changes_by_artifact(self, key: DatasetKey, artifact_ids: list[int]) -> list[EdgeChange]:
        ids = sorted({int(i) for i in artifact_ids})
        if not ids:
            return []
        rows = self._rows(
            f"SELECT {CHANGE_COLS} FROM changes WHERE pk = ? "
            f"AND artifact_id IN ({marks(len(ids))}) ORDER BY seq",
            (key.pk, *ids),
        )
        return [_change_of(r) for r in rows]

    @sqlite_errors("graph store corrections")
    def corrections(self, key: DatasetKey, edge_ids: list[int]) -> dict[int, Correction]:
        ids = sorted({int(i) for i in edge_ids})
        if not ids:
            return {}
        rows = self._rows(
            "SELECT edge_id, replaces, who, at, reason FROM corrections WHERE pk = ? "
            f"AND edge_id IN ({marks(len(ids))})",
            (key.pk, *ids),
        )
        return {r[0]: Correction(*r) for r in rows}

    @sqlite_errors("graph store merges")
    def merges(self, key: DatasetKey, entity_id: int) -> list[Merge]:
        rows = self._rows(
            "SELECT entity_id, artifact_id, names, reason, at FROM merges "
            "WHERE pk = ? AND entity_id = ? ORDER BY artifact_id",
            (key.pk, int(entity_id)),
        )
        return [Merge(r[0], r[1], tuple(json.loads(r[2])), r[3], r[4]) for r in rows]

    @sqlite_errors("graph store due_expiries")
    def due_expiries(self, now: str, limit: int) -> list[tuple[DatasetKey, int, str]]:
        rows = self._rows(
            "SELECT user_id, dataset, artifact_id, expires_at FROM expiries INDEXED BY "
            "expiries_due WHERE expires_at <= ? ORDER BY expires_at LIMIT ?",
            (now, limit),
        )
        return [(DatasetKey(r[0], r[1]), r[2], r[3]) for r in rows]

    @sqlite_errors("graph store drop_expiry")
    def drop_expiry(self, key: DatasetKey, artifact_id: int, expires_at: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM expiries WHERE pk = ? AND artifact_id = ?", (key.pk, artifact_id)
            )

    @sqlite_errors("graph store self_superseding_relations")
    def self_superseding_relations(self, key: DatasetKey) -> set[str]:
        rows = self._rows(
            "SELECT DISTINCT o.relation FROM changes c "
            "JOIN edges o ON o.pk = c.pk AND o.id = c.edge_id "
            "JOIN edges n ON n.pk = c.pk AND n.id = c.by_edge "
            "WHERE c.pk = ? AND c.by_edge IS NOT NULL AND o.relation = n.relation",
            (key.pk,),
        )
        return {r[0] for r in rows}

    @sqlite_errors("graph store forget")
    def forget(self, key: DatasetKey, plan: ForgetPlan) -> Forgotten:
        crash_point("forget_planned")  # tests: killed before the transaction
        with self.db.write() as conn:
            done = _apply_forget(conn, key, plan)
            if self._outbox is not None and plan.events is not None:
                self._outbox.put(conn, plan.events(done))  # in the forget's transaction
        crash_point("forget_committed")  # tests: the event waits in the outbox
        if self._outbox is not None:
            self._outbox.drain()
        return done


def _apply_forget(conn: sqlite3.Connection, key: DatasetKey, plan: ForgetPlan) -> Forgotten:
    pk = key.pk
    texts = [plan.artifact_id, *plan.chunks] if plan.edge_id is None else []
    if texts:
        gone = conn.execute(
            f"DELETE FROM artifacts WHERE pk = ? AND id IN ({marks(len(texts))})", (pk, *texts)
        ).rowcount
        what = f"artifact {plan.artifact_id}"
    else:  # one fact: its row must still be there
        gone = conn.execute(
            "SELECT COUNT(*) FROM edges WHERE pk = ? AND id = ?", (pk, plan.edge_id)
        ).fetchone()[0]
        what = f"edge {plan.edge_id}"
    if (
        not conn.execute(
            "SELECT 1 FROM datasets WHERE user_id = ? AND name = ? AND deleted_at IS NULL",
            (key.user_id, key.dataset),
        ).fetchone()
        or gone == 0
    ):
        raise NotFound(f"{what} does not exist")
    if not texts:
        gone = 0  # no text goes
    edge_ids = [e.id for e in plan.edges]
    entity_ids = [e.id for e in plan.entities]
    for table, col, ids in (
        ("edges", "id", edge_ids),
        ("facts", "edge_id", edge_ids),
        ("entities", "id", entity_ids),
        ("terms", "entity_id", entity_ids),
        ("names", "entity_id", entity_ids),
        ("merges", "entity_id", entity_ids),
    ):
        if ids:
            conn.execute(
                f"DELETE FROM {table} WHERE pk = ? AND {col} IN ({marks(len(ids))})", (pk, *ids)
            )
    if texts:
        for table in ("links", "merges", "expiries"):
            conn.execute(
                f"DELETE FROM {table} WHERE pk = ? AND artifact_id IN ({marks(len(texts))})",
                (pk, *texts),
            )
    for kind, ids in (("D", edge_ids), ("E", entity_ids)):
        if ids:
            conn.execute(
                f"DELETE FROM links WHERE pk = ? AND kind = ? AND row_id IN ({marks(len(ids))})",
                (pk, kind, *ids),
            )
    conn.executemany(
        "UPDATE edges SET artifact_id = ? WHERE pk = ? AND id = ?",
        [(art, pk, eid) for eid, art in plan.kept_edges.items()],
    )
    restored = _restore(conn, pk, plan)
    if texts:
        conn.execute(
            f"DELETE FROM changes WHERE pk = ? AND artifact_id IN ({marks(len(texts))})",
            (pk, *texts),
        )
    if edge_ids:
        m = marks(len(edge_ids))
        conn.execute(
            f"DELETE FROM changes WHERE pk = ? AND (edge_id IN ({m}) OR by_edge IN ({m}))",
            (pk, *edge_ids, *edge_ids),
        )
        conn.execute(f"DELETE FROM corrections WHERE pk = ? AND edge_id IN ({m})", (pk, *edge_ids))
    conn.execute(
        "UPDATE datasets SET entities = entities - ?, edges = edges - ?, "
        "artifacts = artifacts - ? WHERE user_id = ? AND name = ?",
        (len(entity_ids), len(edge_ids), gone, key.user_id, key.dataset),
    )
    return Forgotten(
        artifacts=[plan.artifact_id] if texts else [],
        edges=sorted(edge_ids),
        entities=sorted(entity_ids),
        restored=sorted(restored),
        chunks=len(plan.chunks),
    )


def _restore(conn: sqlite3.Connection, pk: str, plan: ForgetPlan) -> list[int]:
    """Put back what the forgotten texts superseded (rules.undone), each edge
    only if it is as the plan read it; the IDs of those put back."""
    restored: list[int] = []
    for change, was in plan.restored:
        row = conn.execute(
            f"SELECT {EDGE_COLS} FROM edges WHERE pk = ? AND id = ?", (pk, change.edge_id)
        ).fetchone()
        if row is None or edge_of(row) != was:
            continue  # changed since the plan was read: left as it is
        back = undone(change, was)
        if is_open(back):  # rules.undone: takes back its claim, or stays closed
            triple = claim_of(back)
            conn.execute(
                "INSERT OR IGNORE INTO facts (pk, triple, edge_id, claimed_at) VALUES (?, ?, ?, ?)",
                (pk, triple, was.id, change.at),
            )
            owner = conn.execute(
                "SELECT edge_id FROM facts WHERE pk = ? AND triple = ?", (pk, triple)
            ).fetchone()[0]
            if owner != was.id:
                continue
        conn.execute(
            "UPDATE edges SET invalid_at = ?, expired_at = ? WHERE pk = ? AND id = ?",
            (back.invalid_at, back.expired_at, pk, was.id),
        )
        restored.append(was.id)
    return restored
