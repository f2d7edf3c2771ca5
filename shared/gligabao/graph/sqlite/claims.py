"""Claims of the SQLite graph store (names, facts): leases of the calls of
this process.

One process writes the file (the local server). A claim is a row, taken with
``INSERT OR IGNORE`` under the write lock; the call that holds it is known in
memory while it runs. A claim whose entity or edge is committed is permanent;
one of a live call of this process is waited for (briefly), then Busy; any
other (a call that died with an earlier process, or gave up) is taken over.

Claims commit without an fsync of their own (``durable=False``): they are
taken before the remember's commit, whose fsync (``synchronous=FULL``) makes
every earlier frame of the write-ahead log durable with it. A power cut
before that commit may lose them, and the remember with them (it never
answered); a claim left behind is a lease of a call that is no longer
running, taken over by the next one. A remember named three entities and two
facts: five fsyncs fewer (docs/performance.md).
"""

from __future__ import annotations

import threading
import time

from ... import clock
from ...errors import Busy
from ...models import DatasetKey
from ...sqlite.db import Database

Held = tuple[str, str, str, int]  # (pk, kind, key, row ID)


class SqliteClaims:
    def __init__(self, db: Database, lease_wait_s: float = 5.0) -> None:
        self.db = db
        self.lease_wait_s = lease_wait_s
        self._lock = threading.Lock()
        self._running: set[str] = set()  # txns of this process not committed nor aborted
        self._holders: dict[tuple[str, str, str], str] = {}  # (pk, kind, key) -> txn
        self._held: dict[str, list[Held]] = {}

    def _live(self, pk: str, kind: str, key: str) -> str | None:
        with self._lock:
            txn = self._holders.get((pk, kind, key))
            return txn if txn in self._running else None

    def _hold(self, txn: str, pk: str, kind: str, key: str, row_id: int) -> None:
        with self._lock:
            self._running.add(txn)
            self._holders[(pk, kind, key)] = txn
            self._held.setdefault(txn, []).append((pk, kind, key, row_id))

    def claim(self, key: DatasetKey, txn: str, kind: str, item: str, proposed: int) -> int:
        """The owner of one name (``kind`` "name") or fact triple ("fact"):
        ``proposed`` when this call takes it, else the row that holds it."""
        table, col, row_table = (
            ("names", "norm_name", "entities") if kind == "name" else ("facts", "triple", "edges")
        )
        owner_col = "entity_id" if kind == "name" else "edge_id"
        extra = "" if kind == "name" else ", claimed_at"
        extra_v = "" if kind == "name" else ", ?"
        deadline = time.monotonic() + self.lease_wait_s
        while True:
            with self.db.write(durable=False) as conn:
                conn.execute(
                    f"INSERT OR IGNORE INTO {table} (pk, {col}, {owner_col}{extra}) "
                    f"VALUES (?, ?, ?{extra_v})",
                    (key.pk, item, proposed) + (() if kind == "name" else (clock.now_str(),)),
                )
                owner = conn.execute(
                    f"SELECT {owner_col} FROM {table} WHERE pk = ? AND {col} = ?",
                    (key.pk, item),
                ).fetchone()[0]
                if owner == proposed:
                    self._hold(txn, key.pk, kind, item, proposed)
                    return owner
                row = conn.execute(
                    f"SELECT * FROM {row_table} WHERE pk = ? AND id = ?", (key.pk, owner)
                ).fetchone()
                if row is not None:
                    if kind == "name":
                        return int(owner)
                    edge = conn.execute(
                        "SELECT expired_at, invalid_at FROM edges WHERE pk = ? AND id = ?",
                        (key.pk, owner),
                    ).fetchone()
                    if edge == (None, None):
                        return int(owner)  # an open, committed edge holds it
                    holder = None  # ended: the triple is free for a new period
                else:
                    holder = self._live(key.pk, kind, item)
                if holder is None:
                    conn.execute(
                        f"UPDATE {table} SET {owner_col} = ? WHERE pk = ? AND {col} = ?",
                        (proposed, key.pk, item),
                    )
                    self._hold(txn, key.pk, kind, item, proposed)
                    return proposed
            if time.monotonic() >= deadline:
                raise Busy("a name or fact is being written by a concurrent call; try again", 1)
            time.sleep(0.05)

    def release(self, txn: str) -> None:
        """The call gave up: its claims are deleted (where it still holds them)."""
        held = self.forget(txn)
        with self.db.write(durable=False) as conn:
            for pk, kind, item, row_id in held:
                if kind == "name":
                    conn.execute(
                        "DELETE FROM names WHERE pk = ? AND norm_name = ? AND entity_id = ?",
                        (pk, item, row_id),
                    )
                else:
                    conn.execute(
                        "DELETE FROM facts WHERE pk = ? AND triple = ? AND edge_id = ?",
                        (pk, item, row_id),
                    )

    def forget(self, txn: str) -> list[Held]:
        """The call is over (committed or aborted): its claims are no longer
        leases; returns what it held."""
        with self._lock:
            self._running.discard(txn)
            held = self._held.pop(txn, [])
            for pk, kind, item, _ in held:
                if self._holders.get((pk, kind, item)) == txn:
                    del self._holders[(pk, kind, item)]
            return held
