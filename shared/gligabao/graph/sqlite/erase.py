"""The SQLite graph store's part of erasing a user: the mark an unfinished
erase leaves (``erasures``), and its last step, which removes the user's
dataset rows and keeps their ID counters under a one-way hash."""

from __future__ import annotations

from typing import Any

from ... import clock
from ...crash import crash_point
from ...oneway import ERASED, erased_dataset
from ...sqlite.db import Database, sqlite_errors
from .outbox import SqliteOutbox


class SqliteErase:
    """Mixed into SqliteGraphStore (which gives ``db`` and ``_outbox``)."""

    db: Database
    _outbox: SqliteOutbox | None

    @sqlite_errors("graph store dataset_names")
    def dataset_names(self, user_id: str) -> list[str]:
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT name FROM datasets WHERE user_id = ? ORDER BY name", (user_id,)
            ).fetchall()
        return [r[0] for r in rows]

    @sqlite_errors("graph store begin_erase")
    def begin_erase(self, user_id: str, call_id: str) -> str:
        with self.db.write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO erasures (user_id, call_id, started_at) VALUES (?, ?, ?)",
                (user_id, call_id, clock.now_str()),
            )
            row = conn.execute(
                "SELECT call_id FROM erasures WHERE user_id = ?", (user_id,)
            ).fetchone()
        return str(row[0])

    @sqlite_errors("graph store pending_erasures")
    def pending_erasures(self) -> list[tuple[str, str]]:
        with self.db.connect() as conn:
            rows = conn.execute(
                "SELECT user_id, call_id FROM erasures ORDER BY started_at"
            ).fetchall()
        return [(r[0], r[1]) for r in rows]

    @sqlite_errors("graph store end_erase")
    def end_erase(self, user_id: str, events: list[dict[str, Any]] | None = None) -> int:
        # The ``outbox`` table is not the user's: the erase's event is written
        # in the transaction that removes the mark, and survives it.
        with self.db.write() as conn:
            rows = conn.execute(
                "SELECT name, next_entity, next_edge, next_artifact FROM datasets "
                "WHERE user_id = ?",
                (user_id,),
            ).fetchall()
            now = clock.now_str()
            # The counters under a hash of (user, dataset), never the names:
            # the highest of what was kept before and what the rows say.
            conn.executemany(
                "INSERT INTO datasets (user_id, name, created_at, next_entity, next_edge, "
                "next_artifact, deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (user_id, name) DO UPDATE SET "
                "next_entity = max(next_entity, excluded.next_entity), "
                "next_edge = max(next_edge, excluded.next_edge), "
                "next_artifact = max(next_artifact, excluded.next_artifact)",
                [
                    (ERASED, erased_dataset(user_id, name), now, ent, edge, art, now)
                    for name, ent, edge, art in rows
                ],
            )
            conn.execute("DELETE FROM datasets WHERE user_id = ?", (user_id,))
            conn.execute("DELETE FROM erasures WHERE user_id = ?", (user_id,))
            if self._outbox is not None and events:
                self._outbox.put(conn, events)
        crash_point("erase_ended")  # tests: the event waits in the outbox
        self.deliver_waiting()
        return len(rows)

    def deliver_waiting(self) -> None:
        if self._outbox is not None:
            self._outbox.drain()

    @sqlite_errors("graph store keep_events")
    def keep_events(self, events: list[dict[str, Any]]) -> None:
        if self._outbox is not None and events:
            with self.db.write() as conn:
                self._outbox.put(conn, events)

    def send_events(self, events: list[dict[str, Any]]) -> None:
        self.deliver_waiting()  # these, and any a dead process left
