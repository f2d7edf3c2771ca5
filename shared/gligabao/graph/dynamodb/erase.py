"""The DynamoDB graph store's part of erasing a user: the mark an unfinished
erase leaves (a row of the datasets table in the ``oneway.ERASING``
partition, one Query lists them), and its last step, which removes the
user's dataset rows and keeps their ID counters under a one-way hash (rows
of the ``oneway.ERASED`` partition)."""

from __future__ import annotations

from pynamodb.exceptions import PynamoDBException

from ... import clock
from ...dynamodb.batch import batch_write, is_condition_failure, upstream
from ...dynamodb.tables import DatasetRow
from ...oneway import ERASED, ERASING, erased_dataset

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
    """Mixed into DynamoGraphStore."""

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
    def end_erase(self, user_id: str) -> int:
        rows = list(DatasetRow.query(user_id, consistent_read=True))
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
        batch_write(deletes=[*rows, DatasetRow(ERASING, user_id)])
        return len(rows)
