"""The graph store on the embedded SQLite file (``gligabao.sqlite_db``).

The same contract as the DynamoDB adapter (tests/contract/test_graph_store.py
runs one suite on both). Where DynamoDB needs conditional puts and undo lists,
SQLite has transactions: ``commit`` merges every update into the rows as they
are and writes every row inside one ``BEGIN IMMEDIATE``, so a failure or a
killed process leaves either all of a remember or none of it. Claims (names,
facts) are rows, taken with ``INSERT OR IGNORE`` under the same write lock;
their leases are the calls of this process (see ``_claim``).

Every ``sqlite3`` failure leaves this module as ``UpstreamError``; "not found"
is None or empty, never an error.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any, ParamSpec, TypeVar

from .. import clock
from ..errors import Busy, NotFound, UpstreamError
from ..models import (
    Artifact,
    Committed,
    Dataset,
    DatasetKey,
    Edge,
    Entity,
    GraphWrite,
    KeywordHit,
)
from ..sqlite_db import Database, sqlite_errors
from ..text import index_terms, normalize_name
from .port import fact_triple

P = ParamSpec("P")
R = TypeVar("R")

ITER_PAGE = 500  # rows per read while iterating a dataset
PARTITIONED = ("entities", "terms", "names", "facts", "edges", "artifacts", "links")


def _unique(values: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _open(e: Edge) -> bool:
    """Live and not ended: the edge that holds its triple's fact claim."""
    return e.expired_at is None and e.invalid_at is None


ENTITY_COLS = "id, name, type, description, created_at, updated_at, lat, lon"
EDGE_COLS = (
    "id, source_id, target_id, relation, description, artifact_id, valid_at, invalid_at, "
    "created_at, expired_at"
)
ARTIFACT_COLS = "id, text, created_at, reference_time, session_id, parent_id, idx, call_id, summary"


def _entity(row: tuple[Any, ...]) -> Entity:
    return Entity(*row)


def _edge(row: tuple[Any, ...]) -> Edge:
    return Edge(*row)


def _artifact(row: tuple[Any, ...]) -> Artifact:
    return Artifact(*row)


def _dataset(row: tuple[Any, ...]) -> Dataset:
    return Dataset(name=row[0], created_at=row[1], entities=row[2], edges=row[3], artifacts=row[4])


def _terms(e: Entity) -> list[tuple[str, bool, bool]]:
    in_name, in_desc = index_terms(e.name), index_terms(e.description)
    return [(t, t in in_name, t in in_desc) for t in sorted(in_name | in_desc)]


class SqliteGraphStore:
    """GraphStore on one SQLite file, shared with the vectors and records."""

    def __init__(self, db: Database, lease_wait_s: float = 5.0) -> None:
        self.db = db
        self.requests = 0  # statements of the query path, for the benchmarks
        self.lease_wait_s = lease_wait_s
        self._lock = threading.Lock()
        self._running: set[str] = set()  # txns of this process not committed nor aborted
        self._holders: dict[tuple[str, str, str], str] = {}  # (pk, kind, key) -> txn
        self._held: dict[str, list[tuple[str, str, str, int]]] = {}

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
            "SELECT name, created_at, entities, edges, artifacts FROM datasets "
            "WHERE user_id = ? AND name = ? AND deleted_at IS NULL",
            (key.user_id, key.dataset),
        )
        return _dataset(rows[0]) if rows else None

    @sqlite_errors("graph store ensure_dataset")
    def ensure_dataset(self, key: DatasetKey) -> Dataset:
        with self.db.write() as conn:
            # A deleted dataset's name in use again: a new, empty dataset whose
            # ID counters go on from the old one's (IDs are never reused).
            conn.execute(
                "INSERT INTO datasets (user_id, name, created_at) VALUES (?, ?, ?) "
                "ON CONFLICT (user_id, name) DO UPDATE SET deleted_at = NULL, "
                "created_at = excluded.created_at WHERE deleted_at IS NOT NULL",
                (key.user_id, key.dataset, clock.now_str()),
            )
        found = self.get_dataset(key)
        if found is None:  # deleted between the insert and the read
            raise UpstreamError("graph store ensure_dataset failed: dataset vanished")
        return found

    @sqlite_errors("graph store list_datasets")
    def list_datasets(self, user_id: str) -> list[Dataset]:
        rows = self._rows(
            "SELECT name, created_at, entities, edges, artifacts FROM datasets "
            "WHERE user_id = ? AND deleted_at IS NULL ORDER BY name",
            (user_id,),
        )
        return [_dataset(r) for r in rows]

    @sqlite_errors("graph store delete_dataset")
    def delete_dataset(self, key: DatasetKey) -> bool:
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
            return cur.rowcount > 0

    @sqlite_errors("graph store allocate_ids")
    def allocate_ids(
        self, key: DatasetKey, entities: int, edges: int, artifacts: int
    ) -> tuple[int, int, int]:
        if min(entities, edges, artifacts) < 0:
            raise ValueError("allocate_ids: negative block size")
        with self.db.write() as conn:
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
        wanted = _unique(int(i) for i in ids)
        if not wanted:
            return []
        return self._rows(
            f"SELECT {cols} FROM {table} WHERE pk = ? AND id IN ({_marks(len(wanted))})",
            (key.pk, *wanted),
        )

    @sqlite_errors("graph store get_entities")
    def get_entities(self, key: DatasetKey, ids: list[int]) -> dict[int, Entity]:
        return {r[0]: _entity(r) for r in self._by_ids("entities", ENTITY_COLS, key, ids)}

    @sqlite_errors("graph store get_edges")
    def get_edges(self, key: DatasetKey, ids: list[int]) -> dict[int, Edge]:
        return {r[0]: _edge(r) for r in self._by_ids("edges", EDGE_COLS, key, ids)}

    @sqlite_errors("graph store get_artifacts")
    def get_artifacts(self, key: DatasetKey, ids: list[int]) -> dict[int, Artifact]:
        return {r[0]: _artifact(r) for r in self._by_ids("artifacts", ARTIFACT_COLS, key, ids)}

    @sqlite_errors("graph store keyword_hits")
    def keyword_hits(self, key: DatasetKey, terms: list[str], per_term: int) -> list[KeywordHit]:
        wanted = [t for t in _unique(terms) if t and "#" not in t]
        if not wanted or per_term <= 0:
            return []
        out: list[KeywordHit] = []
        with self.db.read() as conn:
            for term in wanted:
                self.requests += 1
                rows = conn.execute(
                    "SELECT entity_id, in_name, in_description, norm_name, updated_at FROM terms "
                    "WHERE pk = ? AND term = ? ORDER BY entity_id DESC LIMIT ?",
                    (key.pk, term, per_term),
                ).fetchall()
                out += [KeywordHit(r[0], term, bool(r[1]), bool(r[2]), r[3], r[4]) for r in rows]
        return out

    @sqlite_errors("graph store recent_entities")
    def recent_entities(self, key: DatasetKey, limit: int) -> list[Entity]:
        if limit <= 0:
            return []
        rows = self._rows(
            f"SELECT {ENTITY_COLS} FROM entities WHERE pk = ? "
            "ORDER BY updated_at DESC, id DESC LIMIT ?",
            (key.pk, limit),
        )
        return [_entity(r) for r in rows]

    @sqlite_errors("graph store recent_artifacts")
    def recent_artifacts(self, key: DatasetKey, limit: int) -> list[Artifact]:
        if limit <= 0:
            return []
        rows = self._rows(
            f"SELECT {ARTIFACT_COLS} FROM artifacts WHERE pk = ? ORDER BY id DESC LIMIT ?",
            (key.pk, limit),
        )
        return [_artifact(r) for r in rows]

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
        ids = _unique(int(i) for i in entity_ids)
        if not ids or limit <= 0:
            return []
        # Per entity and side, the newest ``limit`` edges from a partial index
        # (named: the planner would otherwise walk the whole dataset by
        # primary key); bounded like DynamoDB's two GSI queries.
        kind, cond = ("live", "IS NULL") if live else ("gone", "IS NOT NULL")
        found: dict[int, tuple[Any, ...]] = {}
        with self.db.read() as conn:
            for side, column in (("src", "source_id"), ("dst", "target_id")):
                for entity_id in ids:
                    self.requests += 1
                    for r in conn.execute(
                        f"SELECT {EDGE_COLS} FROM edges INDEXED BY edges_{kind}_{side} "
                        f"WHERE pk = ? AND {column} = ? AND expired_at {cond} "
                        "ORDER BY id DESC LIMIT ?",
                        (key.pk, entity_id, limit),
                    ):
                        found[r[0]] = r
        return [_edge(found[i]) for i in sorted(found, reverse=True)[:limit]]

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
        return [_artifact(r) for r in rows]

    @sqlite_errors("graph store entity_ids_by_names")
    def entity_ids_by_names(self, key: DatasetKey, norm_names: list[str]) -> dict[str, int]:
        names = [n for n in _unique(norm_names) if n]
        if not names:
            return {}
        rows = self._rows(
            f"SELECT norm_name, entity_id FROM names WHERE pk = ? "
            f"AND norm_name IN ({_marks(len(names))})",
            (key.pk, *names),
        )
        return {r[0]: r[1] for r in rows}

    # --- claims: leases of the calls of this process ------------------------------
    #
    # One process writes the file (the local server). A claim is a row; the
    # call that holds it is known in memory while it runs. A claim whose
    # entity or edge is committed is permanent; one of a live call of this
    # process is waited for (briefly), then Busy; any other (a call that died
    # with an earlier process, or gave up) is taken over.

    def _live(self, pk: str, kind: str, key: str) -> str | None:
        with self._lock:
            txn = self._holders.get((pk, kind, key))
            return txn if txn in self._running else None

    def _hold(self, txn: str, pk: str, kind: str, key: str, row_id: int) -> None:
        with self._lock:
            self._running.add(txn)
            self._holders[(pk, kind, key)] = txn
            self._held.setdefault(txn, []).append((pk, kind, key, row_id))

    def _claim(self, key: DatasetKey, txn: str, kind: str, item: str, proposed: int) -> int:
        table, col, row_table = (
            ("names", "norm_name", "entities") if kind == "name" else ("facts", "triple", "edges")
        )
        owner_col = "entity_id" if kind == "name" else "edge_id"
        extra = "" if kind == "name" else ", claimed_at"
        extra_v = "" if kind == "name" else ", ?"
        deadline = time.monotonic() + self.lease_wait_s
        while True:
            with self.db.write() as conn:
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

    @sqlite_errors("graph store claim_names")
    def claim_names(self, key: DatasetKey, txn: str, claims: dict[str, int]) -> dict[str, int]:
        out = dict(claims)  # an empty name is not claimable: nothing to collide with
        for name, entity_id in sorted(claims.items()):
            if name:
                out[name] = self._claim(key, txn, "name", name, entity_id)
        return out

    @sqlite_errors("graph store claim_facts")
    def claim_facts(self, key: DatasetKey, txn: str, claims: dict[str, int]) -> dict[str, int]:
        return {
            t: self._claim(key, txn, "fact", t, edge_id) for t, edge_id in sorted(claims.items())
        }

    @sqlite_errors("graph store abort")
    def abort(self, key: DatasetKey, txn: str) -> None:
        held = self._forget(txn)
        with self.db.write() as conn:
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

    def _forget(self, txn: str) -> list[tuple[str, str, str, int]]:
        with self._lock:
            self._running.discard(txn)
            held = self._held.pop(txn, [])
            for pk, kind, item, _ in held:
                if self._holders.get((pk, kind, item)) == txn:
                    del self._holders[(pk, kind, item)]
            return held

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
        return (_entity(r) for r in self._iter_mapped("entities", ENTITY_COLS, key))

    def iter_edges(self, key: DatasetKey) -> Iterator[Edge]:
        return (_edge(r) for r in self._iter_mapped("edges", EDGE_COLS, key))

    def iter_artifacts(self, key: DatasetKey) -> Iterator[Artifact]:
        return (_artifact(r) for r in self._iter_mapped("artifacts", ARTIFACT_COLS, key))

    def _iter_mapped(self, table: str, cols: str, key: DatasetKey) -> Iterator[tuple[Any, ...]]:
        try:
            yield from self._iter(table, cols, key)
        except sqlite3.Error as exc:
            raise UpstreamError(f"graph store iter_{table} failed: {exc}") from exc

    # --- writes --------------------------------------------------------------------

    def commit(self, key: DatasetKey, write: GraphWrite) -> Committed:
        try:
            with self.db.write() as conn:
                done = self._apply(conn, key, write)
        except NotFound:
            raise
        except sqlite3.Error as exc:
            raise UpstreamError(
                "graph store write failed: a database error", detail=f"{type(exc).__name__}: {exc}"
            ) from exc
        if write.txn:
            self._forget(write.txn)
        return done

    def _apply(self, conn: sqlite3.Connection, key: DatasetKey, write: GraphWrite) -> Committed:
        pk = key.pk
        n_ent, n_edge, n_art = len(write.new_entities), len(write.new_edges), len(write.artifacts)
        # The dataset first: a write to a deleted dataset fails before any row.
        cur = conn.execute(
            "UPDATE datasets SET entities = entities + ?, edges = edges + ?, "
            "artifacts = artifacts + ? WHERE user_id = ? AND name = ? AND deleted_at IS NULL",
            (n_ent, n_edge, n_art, key.user_id, key.dataset),
        )
        if cur.rowcount == 0:
            raise NotFound(f"dataset {key.dataset!r} does not exist")
        conn.executemany(
            f"INSERT OR REPLACE INTO artifacts (pk, {ARTIFACT_COLS}) VALUES (?{', ?' * 9})",
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
                )
                for a in write.artifacts
            ],
        )
        for entity in write.new_entities:
            self._put_entity(conn, pk, entity)
        conn.executemany(
            f"INSERT OR REPLACE INTO edges (pk, {EDGE_COLS}) VALUES (?{', ?' * 10})",
            [
                (
                    pk,
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
                )
                for e in write.new_edges
            ],
        )
        links = [("E", e, a) for e, a in write.entity_links]
        links += [("D", e, a) for e, a in write.edge_links]
        conn.executemany(
            "INSERT OR IGNORE INTO links (pk, kind, row_id, artifact_id) VALUES (?, ?, ?, ?)",
            [(pk, *link) for link in links],
        )
        done = Committed()
        # Inside the write lock: the rows as they are now, merged.
        for eu in write.entity_updates:
            row = conn.execute(
                f"SELECT {ENTITY_COLS} FROM entities WHERE pk = ? AND id = ?", (pk, eu.id)
            ).fetchone()
            if row is None:
                raise UpstreamError("graph store write failed: an entity to update is gone")
            cur_ent = _entity(row)
            new = eu.apply(cur_ent, write.now)
            done.entities[eu.id] = new
            if new != cur_ent:
                conn.execute("DELETE FROM terms WHERE pk = ? AND entity_id = ?", (pk, eu.id))
                self._put_entity(conn, pk, new)
        for du in write.edge_updates:
            row = conn.execute(
                f"SELECT {EDGE_COLS} FROM edges WHERE pk = ? AND id = ?", (pk, du.id)
            ).fetchone()
            if row is None:
                raise UpstreamError("graph store write failed: an edge to update is gone")
            old_edge = _edge(row)
            new_edge = du.apply(old_edge)
            done.edges[du.id] = new_edge
            conn.execute(
                "UPDATE edges SET invalid_at = ?, expired_at = ? WHERE pk = ? AND id = ?",
                (new_edge.invalid_at, new_edge.expired_at, pk, du.id),
            )
            if _open(old_edge) and not _open(new_edge):
                # superseded or ended: the triple is free for a new period
                triple = fact_triple(old_edge.source_id, old_edge.relation, old_edge.target_id)
                conn.execute(
                    "DELETE FROM facts WHERE pk = ? AND triple = ? AND edge_id = ?",
                    (pk, triple, old_edge.id),
                )
        return done

    @staticmethod
    def _put_entity(conn: sqlite3.Connection, pk: str, e: Entity) -> None:
        norm = normalize_name(e.name)
        conn.execute(
            f"INSERT OR REPLACE INTO entities (pk, {ENTITY_COLS}, norm_name) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                pk,
                e.id,
                e.name,
                e.type,
                e.description,
                e.created_at,
                e.updated_at,
                e.lat,
                e.lon,
                norm,
            ),
        )
        conn.executemany(
            "INSERT OR REPLACE INTO terms (pk, term, entity_id, in_name, in_description, "
            "norm_name, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(pk, t, e.id, n, d, norm, e.updated_at) for t, n, d in _terms(e)],
        )
