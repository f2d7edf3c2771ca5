"""The graph store on the embedded SQLite file (``gligabao.sqlite.db``).

The same contract as the DynamoDB adapter (tests/contract/test_graph_store.py
runs one suite on both). Where DynamoDB needs conditional puts and undo lists,
SQLite has transactions: ``commit`` merges every update into the rows as they
are and writes every row inside one ``BEGIN IMMEDIATE``, so a failure or a
killed process leaves either all of a remember or none of it. Claims (names,
facts) are rows, taken with ``INSERT OR IGNORE`` under the same write lock;
their leases are the calls of this process (``claims.py``); the
commit itself is ``write.py``.

Every ``sqlite3`` failure leaves this module as ``UpstreamError``; "not found"
is None or empty, never an error.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from ... import clock
from ...crash import crash_point
from ...errors import NotFound, UpstreamError
from ...models import (
    Artifact,
    Committed,
    Dataset,
    DatasetKey,
    Edge,
    Entity,
    GraphWrite,
    KeywordHit,
)
from ...oneway import ERASED, erased_dataset
from ...sqlite.db import Database, sqlite_errors
from ..rules import unique
from .browse import SqliteBrowse
from .claims import SqliteClaims
from .erase import SqliteErase
from .outbox import Outbox, SqliteOutbox
from .rows import (
    ARTIFACT_COLS,
    EDGE_COLS,
    ENTITY_COLS,
    artifact_of,
    dataset_of,
    edge_of,
    entity_of,
    marks,
)
from .write import apply

ITER_PAGE = 500  # rows per read while iterating a dataset
# Bounded reads sent as one compound SELECT (SQLite allows 500 terms).
COMPOUND = 100
PARTITIONED = (
    *("entities", "terms", "names", "facts", "edges", "artifacts", "links", "changes"),
    *("schemas", "corrections", "merges", "expiries"),
    *("summaries", "standing", "note_options", "sessions", "exclusive_relations"),  # notes
)


@functools.cache
def _around_sql(kind: str, n: int) -> str:
    """Per entity and side, the newest ``limit`` edges from a partial index
    (named: the planner would otherwise walk the whole dataset by primary
    key), bounded like DynamoDB's two GSI queries; the 2n reads in one
    compound statement (one round through sqlite3 instead of 2n: a query
    reads around 10 to 30 entities)."""
    cond = "IS NULL" if kind == "live" else "IS NOT NULL"
    one = (
        "SELECT * FROM (SELECT {cols} FROM edges INDEXED BY edges_{kind}_{side} "
        "WHERE pk = ? AND {column} = ? AND expired_at {cond} ORDER BY id DESC LIMIT ?)"
    )
    parts = [
        one.format(cols=EDGE_COLS, kind=kind, side=side, column=column, cond=cond)
        for side, column in (("src", "source_id"), ("dst", "target_id"))
        for _ in range(n)
    ]
    return " UNION ALL ".join(parts)


@functools.cache
def _terms_sql(n: int) -> str:
    """The ``per_term`` newest entities of each of n terms, in term order."""
    one = (
        "SELECT * FROM (SELECT entity_id, in_name, in_description, norm_name, updated_at, term "
        "FROM terms WHERE pk = ? AND term = ? ORDER BY entity_id DESC LIMIT ?)"
    )
    return " UNION ALL ".join([one] * n)


class SqliteGraphStore(SqliteBrowse, SqliteErase):
    """GraphStore on one SQLite file, shared with the vectors and records."""

    overlap_reads = False  # a read here is cheaper than a thread handoff

    def __init__(
        self, db: Database, lease_wait_s: float = 5.0, outbox: Outbox | None = None
    ) -> None:
        self.db = db
        self.requests = 0  # statements of the query path, for the benchmarks
        self._claims = SqliteClaims(db, lease_wait_s)
        # where a commit's events go once it landed (None: not stored at all)
        self._outbox = SqliteOutbox(db, outbox) if outbox is not None else None

    def close(self) -> None:
        """The database is closed by its owner (it is shared)."""

    def _rows(self, sql: str, args: Iterable[Any]) -> list[tuple[Any, ...]]:
        with self.db.connect() as conn:
            self.requests += 1
            return conn.execute(sql, tuple(args)).fetchall()

    # --- datasets ------------------------------------------------------------------

    @sqlite_errors("graph store get_dataset")
    def get_dataset(self, key: DatasetKey) -> Dataset | None:
        rows = self._rows(
            "SELECT name, created_at, entities, edges, artifacts, generation FROM datasets "
            "WHERE user_id = ? AND name = ? AND deleted_at IS NULL",
            (key.user_id, key.dataset),
        )
        return dataset_of(rows[0]) if rows else None

    @sqlite_errors("graph store ensure_dataset")
    def ensure_dataset(self, key: DatasetKey) -> Dataset:
        with self.db.write() as conn:
            # A deleted dataset's name in use again: a new, empty dataset whose
            # ID counters go on from the old one's (IDs are never reused).
            # A new one: its counters from those an erase of the user kept.
            conn.execute(
                "INSERT INTO datasets (user_id, name, created_at, generation, next_entity, "
                "next_edge, next_artifact) SELECT ?, ?, ?, ?, coalesce(max(next_entity), 0), "
                "coalesce(max(next_edge), 0), coalesce(max(next_artifact), 0) FROM datasets "
                "WHERE user_id = ? AND name = ? "
                "ON CONFLICT (user_id, name) DO UPDATE SET deleted_at = NULL, "
                "created_at = excluded.created_at, generation = excluded.generation "
                "WHERE deleted_at IS NOT NULL",
                (
                    key.user_id,
                    key.dataset,
                    clock.now_str(),
                    uuid.uuid4().hex,
                    ERASED,
                    erased_dataset(key.user_id, key.dataset),
                ),
            )
            # (read in the same transaction: a concurrent delete cannot come between)
            rows = conn.execute(
                "SELECT name, created_at, entities, edges, artifacts, generation FROM datasets "
                "WHERE user_id = ? AND name = ? AND deleted_at IS NULL",
                (key.user_id, key.dataset),
            ).fetchall()
        return dataset_of(rows[0])

    @sqlite_errors("graph store get_schema")
    def get_schema(self, key: DatasetKey) -> dict[str, Any] | None:
        rows = self._rows("SELECT body FROM schemas WHERE pk = ?", (key.pk,))
        return json.loads(rows[0][0]) if rows else None

    @sqlite_errors("graph store put_schema")
    def put_schema(self, key: DatasetKey, schema: dict[str, Any]) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO schemas (pk, body, updated_at) VALUES (?, ?, ?)",
                (key.pk, json.dumps(schema, separators=(",", ":")), clock.now_str()),
            )

    @sqlite_errors("graph store list_datasets")
    def list_datasets(self, user_id: str) -> list[Dataset]:
        rows = self._rows(
            "SELECT name, created_at, entities, edges, artifacts, generation FROM datasets "
            "WHERE user_id = ? AND deleted_at IS NULL ORDER BY name",
            (user_id,),
        )
        return [dataset_of(r) for r in rows]

    @sqlite_errors("graph store delete_dataset")
    def delete_dataset(self, key: DatasetKey, events: list[dict[str, Any]] | None = None) -> bool:
        with self.db.write() as conn:
            for table in PARTITIONED:
                conn.execute(f"DELETE FROM {table} WHERE pk = ?", (key.pk,))
            # The row stays, marked deleted, with its ID counters: a vector
            # left anywhere can never resolve to a later row of the same name.
            cur = conn.execute(
                "UPDATE datasets SET deleted_at = ?, entities = 0, edges = 0, artifacts = 0 "
                "WHERE user_id = ? AND name = ? AND deleted_at IS NULL",
                (clock.now_str(), key.user_id, key.dataset),
            )
            # its events in the same transaction (the outbox table is no dataset's)
            if cur.rowcount > 0 and events and self._outbox is not None:
                self._outbox.put(conn, events)
        crash_point("dataset_deleted")  # tests: the event waits in the outbox
        self.deliver_waiting()
        return cur.rowcount > 0

    @sqlite_errors("graph store allocate_ids")
    def allocate_ids(
        self, key: DatasetKey, entities: int, edges: int, artifacts: int
    ) -> tuple[int, int, int]:
        if min(entities, edges, artifacts) < 0:
            raise ValueError("allocate_ids: negative block size")
        # No fsync of its own: the IDs are used by a later commit whose fsync
        # makes this one durable too (the log is synced in order); lost with
        # a power cut before it, they were used by nothing that survived.
        with self.db.write(durable=False) as conn:
            row = conn.execute(
                "UPDATE datasets SET next_entity = next_entity + ?, next_edge = next_edge + ?, "
                "next_artifact = next_artifact + ? WHERE user_id = ? AND name = ? "
                "AND deleted_at IS NULL RETURNING next_entity, next_edge, next_artifact",
                (entities, edges, artifacts, key.user_id, key.dataset),
            ).fetchone()
        if row is None:
            raise NotFound(f"dataset {key.dataset!r} does not exist")
        return row[0] - entities + 1, row[1] - edges + 1, row[2] - artifacts + 1

    # --- reads ---------------------------------------------------------------------

    def _by_ids(self, table: str, cols: str, key: DatasetKey, ids: list[int]) -> list[Any]:
        wanted = unique(int(i) for i in ids)
        if not wanted:
            return []
        return self._rows(
            f"SELECT {cols} FROM {table} WHERE pk = ? AND id IN ({marks(len(wanted))})",
            (key.pk, *wanted),
        )

    @sqlite_errors("graph store get_entities")
    def get_entities(self, key: DatasetKey, ids: list[int]) -> dict[int, Entity]:
        return {r[0]: entity_of(r) for r in self._by_ids("entities", ENTITY_COLS, key, ids)}

    @sqlite_errors("graph store get_edges")
    def get_edges(self, key: DatasetKey, ids: list[int]) -> dict[int, Edge]:
        return {r[0]: edge_of(r) for r in self._by_ids("edges", EDGE_COLS, key, ids)}

    @sqlite_errors("graph store get_artifacts")
    def get_artifacts(self, key: DatasetKey, ids: list[int]) -> dict[int, Artifact]:
        return {r[0]: artifact_of(r) for r in self._by_ids("artifacts", ARTIFACT_COLS, key, ids)}

    @sqlite_errors("graph store keyword_hits")
    def keyword_hits(self, key: DatasetKey, terms: list[str], per_term: int) -> list[KeywordHit]:
        wanted = [t for t in unique(terms) if t and "#" not in t]
        if not wanted or per_term <= 0:
            return []
        self.requests += len(wanted)  # one bounded read per term, COMPOUND of them at once
        rows: list[tuple[Any, ...]] = []
        for i in range(0, len(wanted), COMPOUND):
            part = wanted[i : i + COMPOUND]
            rows += self._rows(
                _terms_sql(len(part)), [x for t in part for x in (key.pk, t, per_term)]
            )
        return [KeywordHit(r[0], r[5], bool(r[1]), bool(r[2]), r[3], r[4]) for r in rows]

    @sqlite_errors("graph store recent_entities")
    def recent_entities(self, key: DatasetKey, limit: int) -> list[Entity]:
        if limit <= 0:
            return []
        rows = self._rows(
            f"SELECT {ENTITY_COLS} FROM entities WHERE pk = ? "
            "ORDER BY updated_at DESC, id DESC LIMIT ?",
            (key.pk, limit),
        )
        return [entity_of(r) for r in rows]

    @sqlite_errors("graph store recent_artifacts")
    def recent_artifacts(self, key: DatasetKey, limit: int) -> list[Artifact]:
        if limit <= 0:
            return []
        rows = self._rows(
            f"SELECT {ARTIFACT_COLS} FROM artifacts WHERE pk = ? ORDER BY id DESC LIMIT ?",
            (key.pk, limit),
        )
        return [artifact_of(r) for r in rows]

    @sqlite_errors("graph store live_edges_around")
    def live_edges_around(self, key: DatasetKey, entity_ids: list[int], limit: int) -> list[Edge]:
        return self._edges_around(key, entity_ids, limit, live=True)

    @sqlite_errors("graph store expired_edges_around")
    def expired_edges_around(
        self, key: DatasetKey, entity_ids: list[int], limit: int
    ) -> list[Edge]:
        return self._edges_around(key, entity_ids, limit, live=False)

    def _edges_around(
        self, key: DatasetKey, entity_ids: list[int], limit: int, *, live: bool
    ) -> list[Edge]:
        ids = unique(int(i) for i in entity_ids)
        if not ids or limit <= 0:
            return []
        found: dict[int, tuple[Any, ...]] = {}
        self.requests += 2 * len(ids)  # two bounded reads per entity, 2 * COMPOUND at once
        with self.db.connect() as conn:
            for j in range(0, len(ids), COMPOUND):
                part = ids[j : j + COMPOUND]
                args = [x for _side in (0, 1) for i in part for x in (key.pk, i, limit)]
                for r in conn.execute(_around_sql("live" if live else "gone", len(part)), args):
                    found[r[0]] = r
        return [edge_of(found[i]) for i in sorted(found, reverse=True)[:limit]]

    @sqlite_errors("graph store session_texts")
    def session_texts(
        self, key: DatasetKey, session_id: str, limit: int, before: int | None = None
    ) -> list[Artifact]:
        if limit <= 0:
            return []
        rows = self._rows(
            f"SELECT {ARTIFACT_COLS} FROM artifacts INDEXED BY artifacts_by_session "
            "WHERE pk = ? AND session_id = ? AND parent_id IS NULL AND id < ? "
            "ORDER BY id DESC LIMIT ?",
            (key.pk, session_id, before if before is not None else 2**62, limit),
        )
        return [artifact_of(r) for r in rows]

    @sqlite_errors("graph store entity_ids_by_names")
    def entity_ids_by_names(self, key: DatasetKey, norm_names: list[str]) -> dict[str, int]:
        names = [n for n in unique(norm_names) if n]
        if not names:
            return {}
        rows = self._rows(
            f"SELECT norm_name, entity_id FROM names WHERE pk = ? "
            f"AND norm_name IN ({marks(len(names))})",
            (key.pk, *names),
        )
        return {r[0]: r[1] for r in rows}

    # --- claims (claims.py) ----------------------------------------------------------

    @sqlite_errors("graph store claim_names")
    def claim_names(self, key: DatasetKey, txn: str, claims: dict[str, int]) -> dict[str, int]:
        out = dict(claims)  # an empty name is not claimable: nothing to collide with
        for name, entity_id in sorted(claims.items()):
            if name:
                out[name] = self._claims.claim(key, txn, "name", name, entity_id)
        return out

    @sqlite_errors("graph store claim_facts")
    def claim_facts(self, key: DatasetKey, txn: str, claims: dict[str, int]) -> dict[str, int]:
        return {
            t: self._claims.claim(key, txn, "fact", t, edge_id)
            for t, edge_id in sorted(claims.items())
        }

    @sqlite_errors("graph store abort")
    def abort(self, key: DatasetKey, txn: str) -> None:
        self._claims.release(txn)

    # --- provenance and export -----------------------------------------------------

    def _links(self, key: DatasetKey, kind: str, row_id: int) -> list[int]:
        rows = self._rows(
            "SELECT artifact_id FROM links WHERE pk = ? AND kind = ? AND row_id = ? "
            "ORDER BY artifact_id",
            (key.pk, kind, int(row_id)),
        )
        return [r[0] for r in rows]

    @sqlite_errors("graph store entity_artifacts")
    def entity_artifacts(self, key: DatasetKey, entity_id: int) -> list[int]:
        return self._links(key, "E", entity_id)

    @sqlite_errors("graph store edge_artifacts")
    def edge_artifacts(self, key: DatasetKey, edge_id: int) -> list[int]:
        return self._links(key, "D", edge_id)

    def _iter(self, table: str, cols: str, key: DatasetKey) -> Iterator[tuple[Any, ...]]:
        # Pages by ID, each its own short read: a long export never holds a
        # snapshot that keeps the WAL from being checkpointed.
        after = 0
        while True:
            rows = self._rows(
                f"SELECT {cols} FROM {table} WHERE pk = ? AND id > ? ORDER BY id LIMIT ?",
                (key.pk, after, ITER_PAGE),
            )
            yield from rows
            if len(rows) < ITER_PAGE:
                return
            after = rows[-1][0]

    def iter_entities(self, key: DatasetKey) -> Iterator[Entity]:
        return (entity_of(r) for r in self._iter_mapped("entities", ENTITY_COLS, key))

    def iter_edges(self, key: DatasetKey) -> Iterator[Edge]:
        return (edge_of(r) for r in self._iter_mapped("edges", EDGE_COLS, key))

    def iter_artifacts(self, key: DatasetKey) -> Iterator[Artifact]:
        return (artifact_of(r) for r in self._iter_mapped("artifacts", ARTIFACT_COLS, key))

    def _iter_mapped(self, table: str, cols: str, key: DatasetKey) -> Iterator[tuple[Any, ...]]:
        try:
            yield from self._iter(table, cols, key)
        except sqlite3.Error as exc:
            raise UpstreamError(f"graph store iter_{table} failed: {exc}") from exc

    # --- writes --------------------------------------------------------------------

    def commit(self, key: DatasetKey, write: GraphWrite) -> Committed:
        try:
            with self.db.write() as conn:
                done = apply(conn, key, write)
                if self._outbox is not None:
                    self._outbox.put(conn, write.events)
        except NotFound:
            raise
        except sqlite3.Error as exc:
            raise UpstreamError(
                "graph store write failed: a database error", detail=f"{type(exc).__name__}: {exc}"
            ) from exc
        crash_point("committed")  # tests: the events wait in the outbox
        if write.txn:
            self._claims.forget(write.txn)
        if self._outbox is not None:
            self._outbox.drain()
        return done
