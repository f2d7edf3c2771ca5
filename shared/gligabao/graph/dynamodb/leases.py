"""Leases of the DynamoDB graph store (docs/commit-protocol.md): the states
of the commit records, what a reader may see, and the claims.

A remember's rows stay invisible until its commit record (a row ``C#<txn>``
of the terms table) is committed: :meth:`Leases.visible` filters what every
read returns. Claims (names, facts, and the update locks of ``commit.py``) are
leases: owner ``txn`` and ``lease_until``; an expired lease of a call that did
not commit is taken over after its commit record is marked aborted (so that
the slow owner can no longer commit).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from pynamodb.exceptions import PynamoDBException
from pynamodb.expressions.condition import Condition
from pynamodb.models import Model

from ...dynamodb.batch import is_condition_failure
from ...dynamodb.tables import NameRow, TermRow
from ...errors import Busy
from ..rules import unique
from .rows import INTENT_PREFIX, MAX_KEY_BYTES, intent_sk

PENDING, COMMITTED, ABORTED = "pending", "committed", "aborted"
POLL_S = 0.1  # between two looks at a live lease
CLAIM_ROUNDS = 50  # looks at one claim that keeps changing hands before Busy


def _key_of(row: Model) -> tuple[Any, Any]:
    return getattr(row, str(row._hash_keyname)), getattr(row, str(row._range_keyname))


class Leases:
    """The leases of this process's calls, and the claims they took."""

    def __init__(self, lease_s: float, wait_s: float) -> None:
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

    def note_claims(self, txn: str, kind: str, sks: list[str]) -> None:
        with self._lock:
            self._claims.setdefault(txn, {}).setdefault(kind, []).extend(sks)

    def claimed(self, txn: str) -> dict[str, list[str]]:
        """What ``txn`` claimed so far, by kind (names, facts, locks)."""
        return self._claims.get(txn, {})

    def forget(self, txn: str) -> dict[str, list[str]]:
        """The call is over: drop its lease; returns what it claimed."""
        with self._lock:
            self._leases.pop(txn, None)
            return self._claims.pop(txn, {})

    def check_lease(self, txn: str) -> None:
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
        self.note_claims(txn, kind, [sk for sk, _ in items])
        out = dict(claims)  # a key too long to claim has nothing to collide with
        # One at a time, in key order, names before facts before locks: every
        # call takes its leases in one global order, so that no two calls
        # ever wait for each other (no deadlock).
        for sk, proposed in sorted(items):
            out[sk] = self.claim(model, pk, sk, txn, proposed, holds)
        return out
