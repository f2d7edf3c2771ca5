"""The commit protocol of the DynamoDB graph store (docs/commit-protocol.md).

A remember's rows are written tagged with its ``txn`` and stay invisible to
every reader until one TransactWriteItems turns its commit record (a row
``C#<txn>`` of the terms table) from pending to committed; the same
transaction writes every update of a stored row, each conditional on the row
as read. Claims (names, facts) and the locks on the rows to update are leases
(``leases.py``: the records' states, what a reader sees, taking a claim).
Leftovers of dead calls are finished (committed) or removed (not committed)
by the next commit in the dataset (``recovery.py``: the moves after the
commit point, and cleanup).

The numbered write points, where ``GB_TEST_CRASH_AT=<name>`` (tests only)
makes the process exit on the spot, as a killed Lambda would:
1 ``claimed`` (leases taken), 2 ``intent`` (commit record pending),
3 ``rows`` (half of the new rows), 4 ``written`` (all new rows),
5 ``committed`` (the transaction landed), 6 ``untagged`` (tags removed,
record not yet deleted).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from typing import Any

from pynamodb.exceptions import PynamoDBException, TransactWriteError
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt

from ...backoff import half_jitter
from ...crash import crash_point
from ...dynamodb.batch import batch_write, is_condition_failure
from ...dynamodb.tables import DatasetRow, EdgeRow, EntityRow, LinkRow, TermRow
from ...errors import Busy, NotFound, UpstreamError
from ...models import Committed, DatasetKey, Edge, Entity, GraphWrite
from ..rules import claim_of, releases_claim, unique
from .history import correction_row, expiry_row, merge_row, merge_sk, reverse_links
from .leases import COMMITTED, PENDING, Leases
from .recovery import Outbox, Recovery, pack
from .rows import (
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
    term_rows,
)
from .vector_rows import inline_vectors, keep_vectors

TRANSACT_MAX = 100  # DynamoDB's limit of items in one TransactWriteItems
COMMIT_ATTEMPTS = 8  # the transaction, again after a concurrent update of a row
LOCK_PREFIX = "U#"  # update locks share the terms table too (see TermRow)

# (Busy: a remember sent again starts over on the dataset as it is now.)
RECREATED = "the dataset was erased or deleted while this call ran; try again"


def _same_dataset(generation: str) -> Any:
    """The commit's condition on the dataset row: live, and (when the write
    says which) the generation the write was planned against, not a later
    life of the name after an erase or a delete (its claims and the rows it
    read went with the earlier one)."""
    live = DatasetRow.user_id.exists() & DatasetRow.deleted_at.does_not_exist()
    return live & (DatasetRow.generation == generation) if generation else live


def _gone_or_recreated(key: DatasetKey) -> None:
    """The dataset condition failed: 404 when the dataset is gone, 409 when
    the name lives again (a new generation)."""
    try:
        row = DatasetRow.get(key.user_id, key.dataset, consistent_read=True)
    except DatasetRow.DoesNotExist:
        row = None
    if row is None or row.deleted_at:
        raise NotFound(f"dataset {key.dataset!r} was deleted")
    raise Busy(RECREATED, 1)


class _RowsChanged(Exception):
    """A stored row changed under the transaction, which was cancelled."""


class Commits(Recovery):
    """The protocol's moves: the commit here, the rest in ``Recovery``."""

    def __init__(
        self,
        map_: Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]],
        leases: Leases,
        vectors: bool = False,
        outbox: Outbox | None = None,
    ) -> None:
        super().__init__(map_, leases, outbox)
        # VectorStore=dynamodb: the rows carry their vectors (``write.vectors``),
        # and the passages their words (vectors/dynamodb/words.py).
        self.vectors = vectors

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
        passages: list[int] = []
        if self.vectors:
            postings = inline_vectors(pk, new_rows, write.vectors, time.time())
            terms += [r.sk for r in postings]
            new_rows += postings
            passages = [i.id for i in write.vectors.get("chunks", []) if i.text is not None]
        links = unique(
            [entity_link_sk(e, a) for e, a in write.entity_links]
            + [edge_link_sk(e, a) for e, a in write.edge_links]
        )
        links += reverse_links(links)
        new_rows += [LinkRow(pk, sk) for sk in links]
        # A correction's provenance: listed with the links, so that an
        # aborted call's cleanup removes it too (readers reach it through its
        # edge, which is tagged).
        for row in [correction_row(pk, c) for c in write.corrections] + [
            merge_row(pk, m) for m in write.merges
        ]:
            new_rows.append(row)
            links.append(row.sk)
        # (in the sweep's own partition: a text that never commits is gone
        # when its time comes, and the sweep drops the row then)
        new_rows += [expiry_row(key, a, at) for a, at in write.expiries]
        # Locks on the stored rows to update, one at a time in key order (no
        # deadlock): concurrent updates of one row take turns, so that the
        # transaction's conditions do not fail in the common case.
        locks = sorted(
            {f"{LOCK_PREFIX}E#{u.id}" for u in write.entity_updates}
            | {f"{LOCK_PREFIX}D#{u.id}" for u in write.edge_updates}
        )
        self.leases.note_claims(txn, "locks", locks)
        for sk in locks:
            self.leases.claim(TermRow, pk, sk, txn, 0, lambda _: False)
        claims = self.leases.claimed(txn)
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
        self.leases.check_lease(txn)
        try:
            TermRow(
                pk,
                intent_sk(txn),
                entity_id=0,
                state=PENDING,
                lease_until=self.leases.lease_of(txn),
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
        committed, finish = self._transact(key, write, passages)
        crash_point("committed")
        self.finish(pk, txn, keys, finish)
        self.leases.forget(txn)
        return committed

    def _transact(
        self, key: DatasetKey, write: GraphWrite, passages: list[int]
    ) -> tuple[Committed, dict[str, Any]]:
        """The commit point: one TransactWriteItems. Stored rows are updated
        as they read now; a concurrent update between the read and the
        transaction cancels it, and it is built again."""
        pk, txn = key.pk, write.txn
        counts = (len(write.new_entities), len(write.new_edges), len(write.artifacts))
        # A row changed between the read and the transaction: read and build
        # again, after a short random wait (0.05 s, 0.1 s ... at most 1 s).
        for attempt in Retrying(
            retry=retry_if_exception_type(_RowsChanged),
            stop=stop_after_attempt(COMMIT_ATTEMPTS),
            wait=half_jitter(0.05, 1.0),
            retry_error_callback=lambda state: None,
        ):
            with attempt:
                self.leases.check_lease(txn)
                ent_ids = [u.id for u in write.entity_updates]
                ent_rows = self._read(EntityRow, lambda r: r, pk, ent_ids)
                edge_rows = self._read(EdgeRow, lambda r: r, pk, [u.id for u in write.edge_updates])
                ents = {i: entity_from_row(r) for i, r in ent_rows.items()}
                edges = {i: edge_from_row(r) for i, r in edge_rows.items()}
                out = Committed()
                history: list[dict[str, Any]] = []
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
                        change = du.change(cur_edge, new_edge, write.now)
                        if change is not None:
                            history.append(asdict(change))
                unlinks = unique([entity_link_sk(e, a) for e, a in write.entity_unlinks])
                if 2 + len(changed_ents) + len(changed_edges) + len(unlinks) > TRANSACT_MAX:
                    raise UpstreamError("graph store write failed: too many stored rows to update")
                finish = {
                    "terms": [new.id for _, new in changed_ents],
                    "gone": sorted(
                        {sk for old, _ in changed_ents for sk in term_rows(pk, old)}
                        - {sk for _, new in changed_ents for sk in term_rows(pk, new)}
                    ),
                    "history": history,
                    "release": [
                        [fact_claim_sk(claim_of(o)), o.id]
                        for o, n in changed_edges
                        if releases_claim(o, n)
                    ],
                    "passages": passages,
                    # the outbox: delivered by ``finish``, here or by recovery
                    "events": write.events,
                    # a split's moved mentions: their merges go too
                    "drop": [["links", merge_sk(e, a)] for e, a in write.entity_unlinks],
                    "move": [
                        [fact_claim_sk(claim_of(n)), old, new]
                        for old, new in write.moved_claims
                        for n in write.new_edges
                        if n.id == new
                    ],
                }
                conn = EntityRow._get_connection().connection
                try:
                    with TransactWrite(connection=conn) as tx:
                        tx.update(
                            TermRow(pk, intent_sk(txn)),
                            actions=[
                                TermRow.state.set(COMMITTED),
                                TermRow.finish.set(pack(finish)),
                            ],
                            condition=TermRow.state == PENDING,
                        )
                        tx.update(
                            DatasetRow(key.user_id, key.dataset),
                            actions=[
                                DatasetRow.entities.add(counts[0]),
                                DatasetRow.edges.add(counts[1]),
                                DatasetRow.artifacts.add(counts[2]),
                            ],
                            condition=_same_dataset(write.generation),
                        )
                        for old, new in changed_ents:
                            row = keep_vectors(entity_row(pk, new), ent_rows[new.id])
                            tx.save(row, condition=entity_unchanged(old))
                        for old_e, new_e in changed_edges:
                            # written "now": the read path covers the index's lag
                            # with recent rows, so the fact's new state shows at once
                            row = keep_vectors(
                                edge_row(pk, new_e), edge_rows[new_e.id], time.time()
                            )
                            tx.save(row, condition=edge_unchanged(old_e))
                        # Provenance links removed (a split's moved mentions): with the flip.
                        for sk in unlinks:
                            tx.delete(LinkRow(pk, sk))
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
                        _gone_or_recreated(key)
                    raise _RowsChanged from exc
        raise Busy("the rows to update kept changing; try again", 1)
