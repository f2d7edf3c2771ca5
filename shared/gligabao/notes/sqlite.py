"""The notes store on the local server's SQLite file (tables ``summaries``,
``standing``, ``note_options``, ``sessions`` and ``exclusive_relations``,
created with the rest of the schema in sqlite/db.py and deleted with a
dataset's rows: graph/sqlite/store.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..models import DatasetKey
from ..sqlite.db import Database, sqlite_errors
from .port import SessionMark, Standing, Summary, vector_norm


def _marks(n: int) -> str:
    return ",".join("?" * n)


# Statements' vectors parsed, by their JSON: a query weighs up to KEPT of
# them (memory/standing.py), the same ones query after query, and parsing
# hundreds of floats each cost more than the rest of the read.
PARSED_KEPT = 2048
# (read through the index standing_newest, sqlite/db.py)
NEWEST_STANDING = (
    "SELECT id, source, kind, topic, text, artifact_id, created_at, vec "
    "FROM standing WHERE pk = ? ORDER BY created_at DESC, id DESC LIMIT ?"
)


@dataclass(frozen=True)
class _Due:
    """Where a kind of leased mark lives: its table, its ID column and the
    column whose time says it is due (NULL: not due)."""

    table: str
    id_col: str
    due_col: str


_STALE = _Due("summaries", "entity_id", "stale_since")
_ENDED = _Due("sessions", "session_id", "ended_at")


def _take(
    db: Database, due: _Due, key: DatasetKey, limit: int, now_s: float, lease_s: float
) -> list[Any]:
    """Lease up to ``limit`` due marks no other job holds, oldest first, in
    one write transaction (so two jobs never take the same one)."""
    t, col, when = due.table, due.id_col, due.due_col
    with db.write(durable=False) as conn:
        rows = conn.execute(
            f"SELECT {col} FROM {t} WHERE pk = ? AND {when} IS NOT NULL "
            f"AND coalesce(lease_until, 0) < ? ORDER BY {when}, {col} LIMIT ?",
            (key.pk, now_s, limit),
        ).fetchall()
        ids = [r[0] for r in rows]
        if ids:
            conn.execute(
                f"UPDATE {t} SET lease_until = ? WHERE pk = ? AND {col} IN ({_marks(len(ids))})",
                (now_s + lease_s, key.pk, *ids),
            )
    return ids


def _count(db: Database, due: _Due, key: DatasetKey, limit: int) -> int:
    """How many marks are due, counting up to ``limit``."""
    with db.connect() as conn:
        row = conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {due.table} WHERE pk = ? "
            f"AND {due.due_col} IS NOT NULL LIMIT ?)",
            (key.pk, limit),
        ).fetchone()
    return int(row[0])


class SqliteNotesStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._parsed: dict[str, tuple[tuple[float, ...], float]] = {}

    def _vector(self, raw: str | None) -> tuple[list[float], float | None]:
        """A statement's vector and its length, parsed and measured once."""
        if not raw:
            return [], None
        got = self._parsed.get(raw)
        if got is None:
            if len(self._parsed) >= PARSED_KEPT:
                self._parsed.clear()
            vec = tuple(json.loads(raw))
            got = self._parsed[raw] = (vec, vector_norm(vec))
        return list(got[0]), got[1]

    @sqlite_errors("notes store mark_stale")
    def mark_stale(self, key: DatasetKey, entity_ids: list[int], now: str) -> None:
        ids = sorted(set(entity_ids))
        if not ids:
            return
        with self.db.write(durable=False) as conn:
            conn.executemany(
                "INSERT INTO summaries (pk, entity_id, stale_since) VALUES (?, ?, ?) "
                "ON CONFLICT (pk, entity_id) DO UPDATE SET stale_since = excluded.stale_since",
                [(key.pk, i, now) for i in ids],
            )

    @sqlite_errors("notes store take_stale")
    def take_stale(self, key: DatasetKey, limit: int, now_s: float, lease_s: float) -> list[int]:
        return _take(self.db, _STALE, key, limit, now_s, lease_s)

    @sqlite_errors("notes store stale_count")
    def stale_count(self, key: DatasetKey, limit: int) -> int:
        return _count(self.db, _STALE, key, limit)

    @sqlite_errors("notes store get_summaries")
    def get_summaries(self, key: DatasetKey, ids: list[int]) -> dict[int, Summary]:
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT entity_id, text, refs, updated_at, stale_since FROM summaries "
                f"WHERE pk = ? AND entity_id IN ({_marks(len(wanted))})",
                (key.pk, *wanted),
            ).fetchall()
        out: dict[int, Summary] = {}
        for eid, text, refs, updated_at, stale in rows:
            got = json.loads(refs) if refs else {}
            out[eid] = Summary(
                eid, text or "", got.get("edges", []), got.get("artifacts", []), updated_at, stale
            )
        return out

    @sqlite_errors("notes store put_summaries")
    def put_summaries(self, key: DatasetKey, summaries: list[Summary], taken_at: str) -> None:
        with self.db.write() as conn:
            for s in summaries:
                refs = json.dumps({"edges": s.edges, "artifacts": s.artifacts})
                # Marked again after the job took it: its facts changed while
                # the model wrote, so it stays stale (the next job rewrites it).
                conn.execute(
                    "INSERT INTO summaries (pk, entity_id, text, refs, updated_at) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (pk, entity_id) DO UPDATE SET "
                    "text = excluded.text, refs = excluded.refs, updated_at = excluded.updated_at, "
                    "lease_until = NULL, stale_since = CASE WHEN stale_since > ? "
                    "THEN stale_since ELSE NULL END",
                    (key.pk, s.entity_id, s.text, refs, s.updated_at, taken_at),
                )

    @sqlite_errors("notes store add_standing")
    def add_standing(self, key: DatasetKey, items: list[Standing]) -> None:
        if not items:
            return
        with self.db.write() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO standing (pk, source, id, kind, topic, text, "
                "artifact_id, created_at, vec) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        key.pk,
                        s.source,
                        s.id,
                        s.kind,
                        s.topic,
                        s.text,
                        s.artifact_id,
                        s.created_at,
                        json.dumps(s.vector),
                    )
                    for s in items
                ],
            )

    @sqlite_errors("notes store standing")
    def standing(self, key: DatasetKey, limit: int) -> list[Standing]:
        with self.db.connect() as conn:
            rows = conn.execute(NEWEST_STANDING, (key.pk, limit)).fetchall()
        return [
            Standing(r[0], r[1], r[2], r[3], r[4], r[5], r[6], *self._vector(r[7])) for r in rows
        ]

    @sqlite_errors("notes store get_options")
    def get_options(self, key: DatasetKey) -> dict[str, Any]:
        with self.db.connect() as conn:
            row = conn.execute(
                "SELECT options FROM note_options WHERE pk = ?", (key.pk,)
            ).fetchone()
        return dict(json.loads(row[0])) if row else {}

    @sqlite_errors("notes store set_options")
    def set_options(self, key: DatasetKey, options: dict[str, Any]) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO note_options (pk, options) VALUES (?, ?)",
                (key.pk, json.dumps(options)),
            )

    # --- sessions ---------------------------------------------------------
    @sqlite_errors("notes store open_sessions")
    def open_sessions(self, key: DatasetKey, limit: int) -> dict[str, str]:
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT session_id, last_at FROM sessions WHERE pk = ? AND open = 1 LIMIT ?",
                (key.pk, limit),
            ).fetchall()
        return {r[0]: r[1] for r in rows}

    @sqlite_errors("notes store touch_session")
    def touch_session(self, key: DatasetKey, session_id: str, at: str, open_: bool) -> None:
        with self.db.write(durable=False) as conn:
            conn.execute(
                "INSERT INTO sessions (pk, session_id, last_at, open) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (pk, session_id) DO UPDATE SET open = excluded.open, "
                "last_at = max(coalesce(last_at, ''), excluded.last_at)",
                (key.pk, session_id, at, int(open_)),
            )

    @sqlite_errors("notes store end_sessions")
    def end_sessions(self, key: DatasetKey, session_ids: list[str], now: str) -> None:
        with self.db.write(durable=False) as conn:
            conn.executemany(
                "INSERT INTO sessions (pk, session_id, open, ended_at) VALUES (?, ?, 0, ?) "
                "ON CONFLICT (pk, session_id) DO UPDATE SET open = 0, ended_at = excluded.ended_at",
                [(key.pk, sid, now) for sid in sorted(set(session_ids))],
            )

    @sqlite_errors("notes store take_ended")
    def take_ended(self, key: DatasetKey, limit: int, now_s: float, lease_s: float) -> list[str]:
        return _take(self.db, _ENDED, key, limit, now_s, lease_s)

    @sqlite_errors("notes store ended_count")
    def ended_count(self, key: DatasetKey, limit: int) -> int:
        return _count(self.db, _ENDED, key, limit)

    @sqlite_errors("notes store get_session")
    def get_session(self, key: DatasetKey, session_id: str) -> SessionMark | None:
        with self.db.connect() as conn:
            row = conn.execute(
                "SELECT last_at, open, ended_at, artifact_id FROM sessions "
                "WHERE pk = ? AND session_id = ?",
                (key.pk, session_id),
            ).fetchone()
        if row is None:
            return None
        return SessionMark(session_id, row[0], bool(row[1]), row[2], row[3])

    @sqlite_errors("notes store put_session_summary")
    def put_session_summary(
        self, key: DatasetKey, session_id: str, artifact_id: int | None, taken_at: str
    ) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE sessions SET artifact_id = coalesce(?, artifact_id), lease_until = NULL, "
                "ended_at = CASE WHEN ended_at > ? THEN ended_at ELSE NULL END "
                "WHERE pk = ? AND session_id = ?",
                (artifact_id, taken_at, key.pk, session_id),
            )

    @sqlite_errors("notes store drop_session")
    def drop_session(self, key: DatasetKey, session_id: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM sessions WHERE pk = ? AND session_id = ?", (key.pk, session_id)
            )

    @sqlite_errors("notes store mark_exclusive")
    def mark_exclusive(self, key: DatasetKey, relations: list[str]) -> None:
        if not relations:
            return
        with self.db.write(durable=False) as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO exclusive_relations (pk, relation) VALUES (?, ?)",
                [(key.pk, r) for r in sorted(set(relations))],
            )

    @sqlite_errors("notes store exclusive_relations")
    def exclusive_relations(self, key: DatasetKey) -> set[str]:
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT relation FROM exclusive_relations WHERE pk = ?", (key.pk,)
            ).fetchall()
        return {r[0] for r in rows}
