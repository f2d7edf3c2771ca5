"""The SQLite store's outbox (docs/events.md): a commit's events are rows of
``outbox`` written in its transaction, delivered after it and deleted once
delivered. What a killed process left (or a receiver refused) goes out with
the next commit: at least once, each event with its own ID."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

from ...sqlite.db import Database

log = logging.getLogger(__name__)

# Delivers events (their bodies); False: not all of them were delivered.
Outbox = Callable[[list[dict[str, Any]]], bool]
DRAIN = 100  # events delivered at once, oldest first


class SqliteOutbox:
    def __init__(self, db: Database, deliver: Outbox) -> None:
        self.db = db
        self.deliver = deliver
        # one drain at a time in the process: two would send the same rows twice
        self._lock = threading.Lock()

    @staticmethod
    def put(conn: sqlite3.Connection, events: list[dict[str, Any]]) -> None:
        """Inside the commit's transaction: its events land with it or not at all."""
        conn.executemany(
            "INSERT OR IGNORE INTO outbox (id, body) VALUES (?, ?)",
            [(e["id"], json.dumps(e, separators=(",", ":"))) for e in events],
        )

    def drain(self) -> None:
        """Deliver what waits (never raises: the commit has landed)."""
        with self._lock:
            try:
                with self.db.connect() as conn:
                    rows = conn.execute(
                        "SELECT seq, body FROM outbox ORDER BY seq LIMIT ?", (DRAIN,)
                    ).fetchall()
                if not rows or not self.deliver([json.loads(b) for _, b in rows]):
                    return
                with self.db.write() as conn:
                    conn.executemany("DELETE FROM outbox WHERE seq = ?", [(s,) for s, _ in rows])
            except sqlite3.Error:
                log.warning("the events' outbox could not be drained", exc_info=True)
