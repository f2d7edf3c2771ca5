"""After the commit point of the DynamoDB graph store, and cleanup
(docs/commit-protocol.md): a committed txn is rolled forward (``finish``:
tags off, keyword rows, released claims, then the record), an aborted one's
rows are removed (``abort``, ``cleanup``), and the leftovers of calls that
died are finished or removed by the next commit in the dataset (``recover``).
The commit itself is in ``commit.py``; the commit record's fields are packed
here (:func:`pack`, :func:`unpack`).
"""

from __future__ import annotations

import json
import logging
import time
import zlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pynamodb.exceptions import PynamoDBException
from pynamodb.models import Model

from ...crash import crash_point
from ...dynamodb.batch import batch_write, is_condition_failure
from ...dynamodb.tables import ArtifactRow, EdgeRow, EntityRow, LinkRow, NameRow, TermRow
from ...models import DatasetKey, EdgeChange
from ..rules import unique
from .history import change_rows
from .leases import ABORTED, COMMITTED, PENDING, Leases
from .rows import INTENT_PREFIX, MAX_KEY_BYTES, entity_from_row, intent_sk, term_rows
from .vector_rows import count_words

log = logging.getLogger(__name__)

R = TypeVar("R")
# Delivers a commit's events (their bodies); False: not all delivered, keep them.
Outbox = Callable[[list[dict[str, Any]]], bool]


def pack(data: Any) -> bytes:
    return zlib.compress(json.dumps(data, separators=(",", ":")).encode())


def unpack(blob: bytes | None) -> dict[str, Any]:
    return json.loads(zlib.decompress(blob)) if blob else {}


class Recovery:
    """How a txn ends: rolled forward, or its rows removed; ``map`` runs a
    function over items in parallel. ``Commits`` (``commit.py``) adds the commit."""

    def __init__(
        self,
        map_: Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]],
        leases: Leases,
        outbox: Outbox | None = None,
    ) -> None:
        self._map = map_
        self.leases = leases
        self.outbox = outbox

    def _read(
        self, model: Any, convert: Callable[[Any], R], pk: str, ids: list[int]
    ) -> dict[int, R]:
        wanted = unique(ids)
        if not wanted:
            return {}
        rows = list(model.batch_get([(pk, i) for i in wanted], consistent_read=True))
        return {int(r.id): convert(r) for r in self.leases.visible(pk, rows)}

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

        self._claims(pk, finish)
        if finish.get("passages"):
            count_words(pk, self._read(ArtifactRow, lambda r: r, pk, finish["passages"]))
        rows = [r for c in finish.get("history", []) for r in change_rows(pk, EdgeChange(**c))]
        drop = [_row_of(pk, table, rk) for table, rk in finish.get("drop", [])]
        batch_write(puts=rows, deletes=drop)
        crash_point("untagged")
        # The record is the outbox: its events are delivered before it goes
        # (at least once: a crash in between delivers them again, same IDs);
        # undelivered, it stays, and the next commit after its lease tries again.
        events = finish.get("events") or []
        if events and self.outbox is not None and not self.outbox(events):
            log.warning("events of %s not delivered; kept for the next commit", txn)
            return
        TermRow(pk, intent_sk(txn)).delete()

    def _claims(self, pk: str, finish: dict[str, Any]) -> None:
        """The fact claims of the edges that ended released, those a
        correction of the same triple moves given to its new edge."""

        def release(item: list[Any]) -> None:
            sk, edge_id = item
            if len(sk.encode()) > MAX_KEY_BYTES:
                return
            try:
                TermRow(pk, sk).delete(condition=TermRow.entity_id == int(edge_id))
            except PynamoDBException as exc:
                if not is_condition_failure(exc):
                    raise

        moved = {sk for sk, _, _ in finish.get("move", [])}
        self._map(release, [r for r in finish.get("release", []) if r[0] not in moved])

        def move(item: list[Any]) -> None:
            # A correction of the same triple: the claim goes to its new edge.
            sk, old, new = item
            try:
                TermRow(pk, sk).update(
                    actions=[TermRow.entity_id.set(int(new))],
                    condition=TermRow.entity_id.is_in(int(old), int(new)),
                )
            except PynamoDBException as exc:
                if not is_condition_failure(exc):
                    raise

        self._map(move, finish.get("move", []))

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
        claims = self.leases.forget(txn)
        pk = key.pk
        if not self.leases.mark_aborted(pk, txn, time.time(), owner=True):
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
                if self.leases.mark_aborted(pk, txn, lease_until):
                    log.warning("removing the rows of %s, left by a call that died", txn)
                    self.cleanup(pk, txn, unpack(rec.keys))
                    # a marker, kept while a late call of that txn could still try
                    TermRow(pk, intent_sk(txn)).update(actions=[TermRow.keys.remove()])
            elif lease_until + self.leases.lease_s < now:
                TermRow(pk, intent_sk(txn)).delete()


_TABLES: dict[str, Any] = {"names": NameRow, "terms": TermRow, "links": LinkRow}


def _row_of(pk: str, table: str, rk: str) -> Model:
    """A row to delete, named in a record as (short table name, range key)."""
    return _TABLES[table](pk, rk)
