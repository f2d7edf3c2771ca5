"""The commit protocol of the DynamoDB graph store (docs/commit-protocol.md).

A remember's rows are written tagged with its ``txn`` and stay invisible to
every reader until one TransactWriteItems turns its commit record (a row
``C#<txn>`` of the terms table) from pending to committed; the same
transaction writes every update of a stored row, each conditional on the row
as read. Claims (names, facts) are leases: owner ``txn`` and ``lease_until``;
an expired lease of a call that did not commit is taken over after its commit
record is marked aborted (so that the slow owner can no longer commit).
Leftovers of dead calls are finished (committed) or removed (not committed)
by the next commit in the dataset.

The numbered write points, where ``GB_TEST_CRASH_AT=<name>`` (tests only)
makes the process exit on the spot, as a killed Lambda would:
1 ``claimed`` (leases taken), 2 ``intent`` (commit record pending),
3 ``rows`` (half of the new rows), 4 ``written`` (all new rows),
5 ``committed`` (the transaction landed), 6 ``untagged`` (tags removed,
record not yet deleted).
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from pynamodb.exceptions import PynamoDBException, TransactWriteError
from pynamodb.expressions.condition import Condition
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from ..errors import Busy, NotFound, UpstreamError
from ..models import Committed, DatasetKey, Edge, Entity, GraphWrite
from .batch import batch_write, is_condition_failure, unique
from .rows import (
    INTENT_PREFIX,
    MAX_KEY_BYTES,
    artifact_row,
    edge_from_row,
    edge_link_sk,
    edge_row,
    edge_unchanged,
    entity_from_row,
    entity_link_sk,
    entity_row,
    entity_unchanged,
    fact_claim_sk,
    intent_sk,
    is_open,
    term_rows,
)
from .tables import ArtifactRow, DatasetRow, EdgeRow, EntityRow, LinkRow, NameRow, TermRow

log = logging.getLogger(__name__)

R = TypeVar("R")

PENDING, COMMITTED, ABORTED = "pending", "committed", "aborted"
POLL_S = 0.1  # between two looks at a live lease
TRANSACT_MAX = 100  # DynamoDB's limit of items in one TransactWriteItems
COMMIT_ATTEMPTS = 8  # the transaction, again after a concurrent update of a row
CLAIM_ROUNDS = 50  # looks at one claim that keeps changing hands before Busy
CRASH_ENV = "GB_TEST_CRASH_AT"
LOCK_PREFIX = "U#"  # update locks share the terms table too (see TermRow)


def crash_point(name: str) -> None:
    """Tests only: die here, as a killed Lambda would (no cleanup, no flush)."""
    if os.environ.get(CRASH_ENV) == name:
        os._exit(137)


def pack(data: Any) -> bytes:
    return zlib.compress(json.dumps(data, separators=(",", ":")).encode())


def unpack(blob: bytes | None) -> dict[str, Any]:
    return json.loads(zlib.decompress(blob)) if blob else {}


def _key_of(row: Model) -> tuple[Any, Any]:
    return getattr(row, str(row._hash_keyname)), getattr(row, str(row._range_keyname))


class Commits:
    """The protocol's moves; ``map`` runs a function over items in parallel."""

    def __init__(
        self,
        map_: Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]],
        lease_s: float,
        wait_s: float,
    ) -> None:
        self._map = map_
        self.lease_s = lease_s
        self.wait_s = wait_s
        self._lock = threading.Lock()
        self._leases: dict[str, float] = {}  # txn -> lease_until, this process's calls
        self._claims: dict[str, dict[str, list[str]]] = {}  # txn -> names / facts claimed

    # --- states and visibility ----------------------------------------------------

    def states(self, pk: str, txns: Iterable[str]) -> dict[str, str]:
        """The state of each txn's commit record (absent: no record)."""
        wanted = unique(txns)
        if not wanted:
            return {}
        rows = TermRow.batch_get(
            [(pk, intent_sk(t)) for t in wanted],
            consistent_read=True,
            attributes_to_get=["sk", "state"],
        )
        return {r.sk[len(INTENT_PREFIX) :]: r.state or PENDING for r in rows}

    def visible(self, pk: str, rows: list[Any]) -> list[Any]:
        """The rows a reader may see: untagged, or tagged by a committed txn.
        A tagged row whose record is gone is read again: the record of a
        committed txn is deleted only after its rows lost their tags."""
        tagged = [r for r in rows if getattr(r, "txn", None)]
        if not tagged:
            return rows
        states = self.states(pk, (r.txn for r in tagged))
        unknown = [r for r in tagged if r.txn not in states]
        fresh: dict[tuple[Any, Any], Any] = {}
        if unknown:
            model = type(unknown[0])
            for r in model.batch_get([_key_of(r) for r in unknown], consistent_read=True):
                if not r.txn:
                    fresh[_key_of(r)] = r
        out = []
        for r in rows:
            if not getattr(r, "txn", None) or states.get(r.txn) == COMMITTED:
                out.append(r)
            elif r.txn not in states:
                again = fresh.get(_key_of(r))
                if again is not None:
                    out.append(again)
        return out

    # --- leases -------------------------------------------------------------------

    def lease_of(self, txn: str) -> float:
        with self._lock:
            return self._leases.setdefault(txn, time.time() + self.lease_s)

    def _note_claims(self, txn: str, kind: str, sks: list[str]) -> None:
        with self._lock:
            self._claims.setdefault(txn, {}).setdefault(kind, []).extend(sks)

    def _forget(self, txn: str) -> dict[str, list[str]]:
        with self._lock:
            self._leases.pop(txn, None)
            return self._claims.pop(txn, {})

    def _check_lease(self, txn: str) -> None:
        # One second of margin for the clocks of two Lambdas to disagree.
        if time.time() > self.lease_of(txn) - 1:
            raise Busy("the write ran past its lease; try again", 1)

    def mark_aborted(self, pk: str, txn: str, lease_until: float, owner: bool = False) -> bool:
        """Make sure ``txn`` can no longer commit: its record becomes (or is
        created as) aborted, unless it committed. True when it is aborted.
        Only the owner may abort a record whose lease is still live."""
        expired = TermRow.state == PENDING
        if not owner:
            expired = expired & (TermRow.lease_until < time.time())
        row = TermRow(pk, intent_sk(txn))
        try:
            row.update(
                actions=[
                    TermRow.state.set(ABORTED),
                    TermRow.entity_id.set(TermRow.entity_id | 0),
                    TermRow.lease_until.set(TermRow.lease_until | lease_until),
                ],
                condition=TermRow.sk.does_not_exist() | expired | (TermRow.state == ABORTED),
            )
            return True
        except PynamoDBException as exc:
            if not is_condition_failure(exc):
                raise
        return self.states(pk, [txn]).get(txn) == ABORTED

    def claim(
        self,
        model: type[NameRow] | type[TermRow],
        pk: str,
        sk: str,
        txn: str,
        proposed: int,
        holds: Callable[[int], bool],
    ) -> int:
        """One lease (see the port's claim_names). ``holds(owner)``: whether a
        committed owner still holds the claim (a fact's edge may have ended)."""
        lease_until = self.lease_of(txn)
        range_attr = model.norm_name if model is NameRow else model.sk  # type: ignore[union-attr]
        condition: Condition | None = range_attr.does_not_exist()
        deadline = time.time() + self.wait_s
        for _ in range(CLAIM_ROUNDS):
            if condition is not None:
                try:
                    model(pk, sk, entity_id=proposed, txn=txn, lease_until=lease_until).save(
                        condition=condition
                    )
                    return proposed
                except PynamoDBException as exc:
                    if not is_condition_failure(exc):
                        raise
            try:
                row = model.get(pk, sk, consistent_read=True)
            except model.DoesNotExist:
                condition = range_attr.does_not_exist()
                continue
            owner = int(row.entity_id)
            if row.txn == txn:
                return owner
            if not row.txn or self.states(pk, [row.txn]).get(row.txn) == COMMITTED:
                if holds(owner):
                    return owner
                condition = (model.entity_id == owner) & (
                    model.txn == row.txn if row.txn else model.txn.does_not_exist()
                )
                continue
            now = time.time()
            if (row.lease_until or 0) > now:  # a live lease: wait for it, briefly
                if now >= deadline:
                    raise Busy(
                        "a name or fact is being written by a concurrent call; try again",
                        math.ceil(float(row.lease_until) - now),
                    )
                time.sleep(POLL_S)
                condition = None
                continue
            if not self.mark_aborted(pk, row.txn, float(row.lease_until or 0)):
                condition = None  # it committed meanwhile: look again
                continue
            condition = (model.entity_id == owner) & (model.txn == row.txn)
        raise Busy("a name or fact kept changing hands; try again", 1)

    def claim_all(
        self,
        model: type[NameRow] | type[TermRow],
        kind: str,
        pk: str,
        txn: str,
        claims: dict[str, int],
        holds: Callable[[int], bool],
    ) -> dict[str, int]:
        items = [(sk, i) for sk, i in claims.items() if sk and len(sk.encode()) <= MAX_KEY_BYTES]
        self._note_claims(txn, kind, [sk for sk, _ in items])
        out = dict(claims)  # a key too long to claim has nothing to collide with
        # One at a time, in key order, names before facts before locks: every
        # call takes its leases in one global order, so that no two calls
        # ever wait for each other (no deadlock).
        for sk, proposed in sorted(items):
            out[sk] = self.claim(model, pk, sk, txn, proposed, holds)
        return out

    # --- commit -------------------------------------------------------------------

    def commit(self, key: DatasetKey, write: GraphWrite) -> Committed:
        if not write.txn:
            write = replace(write, txn=uuid.uuid4().hex)
        pk, txn = key.pk, write.txn
        self.recover(key)
        new_rows: list[Model] = [artifact_row(pk, a, txn) for a in write.artifacts]
        terms: list[str] = []
        for entity in write.new_entities:
            new_rows.append(entity_row(pk, entity, txn))
            rows = term_rows(pk, entity)
            terms += rows
            new_rows.extend(rows.values())
        new_rows += [edge_row(pk, e, txn) for e in write.new_edges]
        links = unique(
            [entity_link_sk(e, a) for e, a in write.entity_links]
            + [edge_link_sk(e, a) for e, a in write.edge_links]
        )
        new_rows += [LinkRow(pk, sk) for sk in links]
        # Locks on the stored rows to update, one at a time in key order (no
        # deadlock): concurrent updates of one row take turns, so that the
        # transaction's conditions do not fail in the common case.
        locks = sorted(
            {f"{LOCK_PREFIX}E#{u.id}" for u in write.entity_updates}
            | {f"{LOCK_PREFIX}D#{u.id}" for u in write.edge_updates}
        )
        self._note_claims(txn, "locks", locks)
        for sk in locks:
            self.claim(TermRow, pk, sk, txn, 0, lambda _: False)
        claims = self._claims.get(txn, {})
        keys = {
            "entities": [e.id for e in write.new_entities],
            "edges": [e.id for e in write.new_edges],
            "artifacts": [a.id for a in write.artifacts],
            "terms": terms,
            "links": links,
            "names": claims.get("names", []),
            "facts": claims.get("facts", []),
            "locks": locks,
        }
        self._check_lease(txn)
        try:
            TermRow(
                pk,
                intent_sk(txn),
                entity_id=0,
                state=PENDING,
                lease_until=self.lease_of(txn),
                keys=pack(keys),
            ).save(condition=TermRow.sk.does_not_exist())
        except PynamoDBException as exc:
            if not is_condition_failure(exc):
                raise
            raise Busy("the write's leases were taken over; try again", 1) from exc
        crash_point("intent")
        half = len(new_rows) // 2
        batch_write(puts=new_rows[:half])
        crash_point("rows")
        batch_write(puts=new_rows[half:])
        crash_point("written")
        committed, finish = self._transact(key, write)
        crash_point("committed")
        self.finish(pk, txn, keys, finish)
        self._forget(txn)
        return committed

    def _transact(self, key: DatasetKey, write: GraphWrite) -> tuple[Committed, dict[str, Any]]:
        """The commit point: one TransactWriteItems. Stored rows are updated
        as they read now; a concurrent update between the read and the
        transaction cancels it, and it is built again."""
        pk, txn = key.pk, write.txn
        counts = (len(write.new_entities), len(write.new_edges), len(write.artifacts))
        for attempt in range(COMMIT_ATTEMPTS):
            self._check_lease(txn)
            ents = self._read(EntityRow, entity_from_row, pk, [u.id for u in write.entity_updates])
            edges = self._read(EdgeRow, edge_from_row, pk, [u.id for u in write.edge_updates])
            out = Committed()
            changed_ents: list[tuple[Entity, Entity]] = []
            changed_edges: list[tuple[Edge, Edge]] = []
            for eu in write.entity_updates:
                cur = ents.get(eu.id)
                if cur is None:
                    raise UpstreamError("graph store write failed: an entity to update is gone")
                new = eu.apply(cur, write.now)
                out.entities[eu.id] = new
                if new != cur:
                    changed_ents.append((cur, new))
            for du in write.edge_updates:
                cur_edge = edges.get(du.id)
                if cur_edge is None:
                    raise UpstreamError("graph store write failed: an edge to update is gone")
                new_edge = du.apply(cur_edge)
                out.edges[du.id] = new_edge
                if new_edge != cur_edge:
                    changed_edges.append((cur_edge, new_edge))
            if 2 + len(changed_ents) + len(changed_edges) > TRANSACT_MAX:
                raise UpstreamError("graph store write failed: too many stored rows to update")
            finish = {
                "terms": [new.id for _, new in changed_ents],
                "gone": sorted(
                    {sk for old, _ in changed_ents for sk in term_rows(pk, old)}
                    - {sk for _, new in changed_ents for sk in term_rows(pk, new)}
                ),
                "release": [
                    [fact_claim_sk(f"{o.source_id}#{o.relation}#{o.target_id}"), o.id]
                    for o, n in changed_edges
                    if is_open(o) and not is_open(n)
                ],
            }
            conn = EntityRow._get_connection().connection
            try:
                with TransactWrite(connection=conn) as tx:
                    tx.update(
                        TermRow(pk, intent_sk(txn)),
                        actions=[TermRow.state.set(COMMITTED), TermRow.finish.set(pack(finish))],
                        condition=TermRow.state == PENDING,
                    )
                    tx.update(
                        DatasetRow(key.user_id, key.dataset),
                        actions=[
                            DatasetRow.entities.add(counts[0]),
                            DatasetRow.edges.add(counts[1]),
                            DatasetRow.artifacts.add(counts[2]),
                        ],
                        condition=DatasetRow.user_id.exists()
                        & DatasetRow.deleted_at.does_not_exist(),
                    )
                    for old, new in changed_ents:
                        tx.save(entity_row(pk, new), condition=entity_unchanged(old))
                    for old_e, new_e in changed_edges:
                        tx.save(edge_row(pk, new_e), condition=edge_unchanged(old_e))
                return out, finish
            except TransactWriteError as exc:
                reasons = [
                    getattr(r, "code", None) == "ConditionalCheckFailed"
                    for r in (exc.cancellation_reasons or [])
                ]
                if not any(reasons):
                    raise
                if reasons[0]:
                    raise Busy("the write's leases were taken over; try again", 1) from exc
                if len(reasons) > 1 and reasons[1]:
                    raise NotFound(f"dataset {key.dataset!r} was deleted") from exc
                cap = min(1.0, 0.05 * 2**attempt)
                time.sleep(random.uniform(cap / 2, cap))
        raise Busy("the rows to update kept changing; try again", 1)

    def _read(
        self, model: Any, convert: Callable[[Any], R], pk: str, ids: list[int]
    ) -> dict[int, R]:
        wanted = unique(ids)
        if not wanted:
            return {}
        rows = list(model.batch_get([(pk, i) for i in wanted], consistent_read=True))
        return {int(r.id): convert(r) for r in self.visible(pk, rows)}

    # --- after the commit point, and cleanup ---------------------------------------

    def finish(self, pk: str, txn: str, keys: dict[str, Any], finish: dict[str, Any]) -> None:
        """Roll a committed txn forward (idempotent: a crash here is finished
        by the next commit in the dataset): tags off, the keyword rows of the
        updated entities, the claims of the edges that ended; then the record."""
        jobs: list[tuple[Any, Any, Any]] = []
        for model, kind in (
            (EntityRow, "entities"),
            (EdgeRow, "edges"),
            (ArtifactRow, "artifacts"),
        ):
            jobs += [(model, i, (model.txn.remove(),)) for i in keys.get(kind, [])]
        claim_models: list[tuple[Any, str]] = [(NameRow, "names"), (TermRow, "facts")]
        for model, kind in claim_models:
            jobs += [
                (model, sk, (model.txn.remove(), model.lease_until.remove()))
                for sk in keys.get(kind, [])
            ]

        def untag(job: tuple[Any, Any, Any]) -> None:
            model, rk, actions = job
            try:
                model(pk, rk).update(actions=list(actions), condition=model.txn == txn)
            except PynamoDBException as exc:
                if not is_condition_failure(exc):
                    raise

        self._map(untag, jobs)
        self._map(lambda sk: self._drop(TermRow, pk, sk, txn), keys.get("locks", []))
        if finish.get("terms"):
            current = self._read(EntityRow, entity_from_row, pk, finish["terms"])
            puts = {sk: r for e in current.values() for sk, r in term_rows(pk, e).items()}
            gone = [TermRow(pk, sk) for sk in finish.get("gone", []) if sk not in puts]
            batch_write(puts=list(puts.values()), deletes=gone)

        def release(item: list[Any]) -> None:
            sk, edge_id = item
            if len(sk.encode()) > MAX_KEY_BYTES:
                return
            try:
                TermRow(pk, sk).delete(condition=TermRow.entity_id == int(edge_id))
            except PynamoDBException as exc:
                if not is_condition_failure(exc):
                    raise

        self._map(release, finish.get("release", []))
        crash_point("untagged")
        TermRow(pk, intent_sk(txn)).delete()

    def cleanup(self, pk: str, txn: str, keys: dict[str, Any]) -> None:
        """Remove what an aborted txn wrote (its IDs and keys are its own):
        the claims first, since they are what other calls wait for."""
        claims: list[tuple[Any, str]] = [(NameRow, sk) for sk in keys.get("names", [])]
        claims += [(TermRow, sk) for sk in keys.get("facts", []) + keys.get("locks", [])]
        self._map(lambda job: self._drop(job[0], pk, job[1], txn), claims)
        rows: list[Model] = []
        row_models: list[tuple[Any, str]] = [
            (EntityRow, "entities"),
            (EdgeRow, "edges"),
            (ArtifactRow, "artifacts"),
        ]
        for model, kind in row_models:
            rows += [model(pk, i) for i in keys.get(kind, [])]
        rows += [TermRow(pk, sk) for sk in keys.get("terms", [])]
        rows += [LinkRow(pk, sk) for sk in keys.get("links", [])]
        batch_write(deletes=rows)

    @staticmethod
    def _drop(model: Any, pk: str, rk: str, txn: str) -> None:
        """Delete a claim or lock, if ``txn`` still holds it."""
        try:
            model(pk, rk).delete(condition=model.txn == txn)
        except PynamoDBException as exc:
            if not is_condition_failure(exc):
                raise

    def abort(self, key: DatasetKey, txn: str) -> None:
        claims = self._forget(txn)
        pk = key.pk
        if not self.mark_aborted(pk, txn, time.time(), owner=True):
            return  # committed: nothing to undo
        try:
            record = TermRow.get(pk, intent_sk(txn), consistent_read=True)
            keys = unpack(record.keys)
        except TermRow.DoesNotExist:
            keys = {}
        keys.setdefault("names", claims.get("names", []))
        keys.setdefault("facts", claims.get("facts", []))
        keys.setdefault("locks", claims.get("locks", []))
        self.cleanup(pk, txn, keys)
        TermRow(pk, intent_sk(txn)).delete()

    def recover(self, key: DatasetKey) -> None:
        """Finish or remove the leftovers of calls whose lease ended (one
        Query on the dataset's commit records)."""
        pk, now = key.pk, time.time()
        for rec in TermRow.query(pk, TermRow.sk.startswith(INTENT_PREFIX), consistent_read=True):
            txn, lease_until = rec.sk[len(INTENT_PREFIX) :], float(rec.lease_until or 0)
            if lease_until > now:
                continue
            if rec.state == COMMITTED:
                log.warning("finishing the commit of %s, left by a call that died", txn)
                self.finish(pk, txn, unpack(rec.keys), unpack(rec.finish))
            elif rec.state == PENDING or (rec.state == ABORTED and rec.keys):
                if self.mark_aborted(pk, txn, lease_until):
                    log.warning("removing the rows of %s, left by a call that died", txn)
                    self.cleanup(pk, txn, unpack(rec.keys))
                    # a marker, kept while a late call of that txn could still try
                    TermRow(pk, intent_sk(txn)).update(actions=[TermRow.keys.remove()])
            elif lease_until + self.lease_s < now:
                TermRow(pk, intent_sk(txn)).delete()
