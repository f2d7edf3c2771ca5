"""The DynamoDB graph store's outbox for the events whose change removes the
dataset's own rows (a dataset's delete), so that they cannot wait in a
commit record of the dataset: rows of the datasets table in the ``OUTBOX``
partition (no user's: ``oneway.SEP`` starts it), one per event, written in
the change's transaction, delivered after it and deleted once delivered.
What a dead process left there is delivered by ``waiting`` (at the start of
`gligabao serve`, and by every retention sweep), once it is older than a
lease (a live call may still be delivering it)."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any, cast

from ... import clock
from ...dynamodb.batch import batch_write
from ...dynamodb.tables import DatasetRow
from ...oneway import SEP
from .recovery import Outbox, pack, unpack

log = logging.getLogger(__name__)

OUTBOX = f"{SEP}outbox"


def outbox_rows(events: list[dict[str, Any]]) -> list[DatasetRow]:
    """The rows to write in the change's transaction."""
    now = clock.now_str()
    return [DatasetRow(OUTBOX, e["id"], created_at=now, events=pack([e])) for e in events]


def deliver(rows: list[DatasetRow], outbox: Outbox | None) -> None:
    """Deliver the rows' events, then delete the rows (kept when not
    delivered: they go again later, the same IDs)."""
    if not rows:
        return
    bodies = [b for r in rows for b in cast(list[dict[str, Any]], unpack(r.events) or [])]
    if outbox is not None and bodies and not outbox(bodies):
        log.warning("%d events not delivered; kept in the outbox", len(bodies))
        return
    batch_write(deletes=[DatasetRow(OUTBOX, r.name) for r in rows])


def waiting(older_than_s: float) -> list[DatasetRow]:
    """The rows written more than ``older_than_s`` ago (one Query)."""
    cutoff = clock.fmt(clock.now() - timedelta(seconds=older_than_s)) or ""
    rows = DatasetRow.query(OUTBOX, consistent_read=True)
    return [r for r in rows if r.created_at <= cutoff]
