"""The DynamoDB graph store's part of erasing a user: the mark an unfinished
erase leaves (a row of the datasets table in the ``oneway.ERASING``
partition, one Query lists them), and its last step, which removes the
user's dataset rows and keeps their ID counters under a one-way hash (rows
of the ``oneway.ERASED`` partition)."""

from __future__ import annotations

import logging
from typing import Any, cast

from pynamodb.exceptions import PynamoDBException

from ... import clock
from ...crash import crash_point
from ...dynamodb.batch import batch_write, is_condition_failure, upstream
from ...dynamodb.tables import DatasetRow
from ...oneway import ERASED, ERASING, erased_dataset
from .commit import Commits
from .outbox import deliver, outbox_rows, waiting
from .recovery import pack, unpack

log = logging.getLogger(__name__)

COUNTERS = ("next_entity", "next_edge", "next_artifact")


def erased_counters(user_id: str, dataset: str) -> tuple[int, int, int]:
    """The ID counters an erase kept for this user's dataset name (zeros
    when none): where a new dataset of that name starts."""
    try:
        row = DatasetRow.get(ERASED, erased_dataset(user_id, dataset), consistent_read=True)
    except DatasetRow.DoesNotExist:
        return 0, 0, 0
    return int(row.next_entity or 0), int(row.next_edge or 0), int(row.next_artifact or 0)


class DynamoErase:
    """Mixed into DynamoGraphStore (which gives ``_commits``: its outbox)."""

    _commits: Commits

    @upstream("graph store dataset_names")
    def dataset_names(self, user_id: str) -> list[str]:
        rows = DatasetRow.query(user_id, consistent_read=True, attributes_to_get=["name"])
        return sorted(r.name for r in rows)

    @upstream("graph store begin_erase")
    def begin_erase(self, user_id: str, call_id: str) -> str:
        mark = DatasetRow(ERASING, user_id, created_at=clock.now_str(), call_id=call_id)
        try:
            mark.save(condition=DatasetRow.user_id.does_not_exist())
        except PynamoDBException as exc:
            if not is_condition_failure(exc):
                raise
            found = DatasetRow.get(ERASING, user_id, consistent_read=True)
            return str(found.call_id or call_id)
        return call_id

    @upstream("graph store pending_erasures")
    def pending_erasures(self) -> list[tuple[str, str]]:
        rows = DatasetRow.query(ERASING, consistent_read=True)
        return [(r.name, str(r.call_id)) for r in rows]

    @upstream("graph store end_erase")
    def end_erase(self, user_id: str, events: list[dict[str, Any]] | None = None) -> int:
        # The erase's outbox is its mark: a row outside the user's partitions,
        # which the erase removes last. The events are put on it first (a
        # rerun keeps the ones there: the same IDs), delivered once the user's
        # rows are gone, and the mark goes only when they were delivered.
        mark = DatasetRow(ERASING, user_id)
        if events:
            try:
                mark.update(
                    actions=[DatasetRow.events.set(pack(events))],
                    condition=DatasetRow.user_id.exists() & DatasetRow.events.does_not_exist(),
                )
            except PynamoDBException as exc:
                if not is_condition_failure(exc):
                    raise
        rows = list(DatasetRow.query(user_id, consistent_read=True))
        self._keep_counters(user_id, rows)
        batch_write(deletes=rows)
        crash_point("erase_ended")  # tests: the event waits on the mark
        try:
            found = DatasetRow.get(ERASING, user_id, consistent_read=True)
            waiting = cast(list[dict[str, Any]], unpack(found.events) or [])
        except DatasetRow.DoesNotExist:
            return len(rows)  # a concurrent rerun finished it
        outbox = self._commits.outbox
        if waiting and outbox is not None and not outbox(waiting):
            log.warning("the erase's event was not delivered; its mark stays for a rerun")
            return len(rows)
        batch_write(deletes=[mark])  # (the role's one write verb on the table)
        return len(rows)

    @staticmethod
    def _keep_counters(user_id: str, rows: list[DatasetRow]) -> None:
        now = clock.now_str()
        for row in rows:
            # The counters under a hash of (user, dataset), never the names;
            # the highest of what was kept and what the row says (a rerun
            # after a crash writes the same).
            kept = DatasetRow(ERASED, erased_dataset(user_id, row.name), created_at=now)
            try:
                old = DatasetRow.get(kept.user_id, kept.name, consistent_read=True)
            except DatasetRow.DoesNotExist:
                old = None
            for name in COUNTERS:
                mine, theirs = getattr(row, name) or 0, getattr(old, name, 0) or 0
                setattr(kept, name, max(mine, theirs))
            kept.deleted_at = now
            kept.save()

    @upstream("graph store deliver_waiting")
    def deliver_waiting(self) -> None:
        """The events a dead process left in ``outbox.py``'s partition (a
        commit record's go with the next commit in its dataset, an erase's
        with the rerun of the erase)."""
        deliver(waiting(self._commits.leases.lease_s), self._commits.outbox)

    @upstream("graph store keep_events")
    def keep_events(self, events: list[dict[str, Any]]) -> None:
        # Put, not a conditional write: the same ID is the same event.
        if self._commits.outbox is not None:  # no sink configured: nothing to keep
            batch_write(puts=outbox_rows(events))

    def send_events(self, events: list[dict[str, Any]]) -> None:
        deliver(outbox_rows(events), self._commits.outbox)
