"""The datasets of the graph store on DynamoDB: their rows, ID blocks, and
deleting one (every row of every partitioned table)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from pynamodb.exceptions import PynamoDBException, TransactWriteError
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from ... import clock
from ...crash import crash_point
from ...dynamodb.batch import batch_write, is_condition_failure, upstream
from ...dynamodb.tables import DATASET_PARTITIONED, DatasetRow, TermRow
from ...errors import Busy, NotFound
from ...models import Dataset, DatasetKey
from .commit import Commits
from .erase import erased_counters
from .outbox import deliver, outbox_rows
from .recovery import pack, unpack
from .rows import dataset_from_row

# The schema's row in the terms table (terms are casefolded words: never "S#").
SCHEMA_SK = "S#schema"


class DynamoDatasets:
    """Mixed into DynamoGraphStore (which gives ``_map``, its parallel map,
    and ``_commits``: its outbox)."""

    _map: Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]]
    _commits: Commits

    @upstream("graph store get_dataset")
    def get_dataset(self, key: DatasetKey) -> Dataset | None:
        try:
            row = DatasetRow.get(key.user_id, key.dataset, consistent_read=True)
        except DatasetRow.DoesNotExist:
            return None
        return None if row.deleted_at else dataset_from_row(row)

    @upstream("graph store get_schema")
    def get_schema(self, key: DatasetKey) -> dict[str, Any] | None:
        try:
            row = TermRow.get(key.pk, SCHEMA_SK, consistent_read=True)
        except TermRow.DoesNotExist:
            return None
        return unpack(row.keys) or None

    @upstream("graph store put_schema")
    def put_schema(self, key: DatasetKey, schema: dict[str, Any]) -> None:
        # a row of the dataset's partition of the terms table: deleted with it
        TermRow(
            key.pk, SCHEMA_SK, entity_id=0, updated_at=clock.now_str(), keys=pack(schema)
        ).save()

    @upstream("graph store ensure_dataset")
    def ensure_dataset(self, key: DatasetKey) -> Dataset:
        existing = self.get_dataset(key)
        if existing is not None:
            return existing
        # A new one: its counters from those an erase of the user kept.
        ent, edge, art = erased_counters(key.user_id, key.dataset)
        row = DatasetRow(
            key.user_id,
            key.dataset,
            created_at=clock.now_str(),
            generation=uuid.uuid4().hex,
            next_entity=ent,
            next_edge=edge,
            next_artifact=art,
        )
        try:
            row.save(condition=DatasetRow.user_id.does_not_exist())
        except PynamoDBException as exc:
            if not is_condition_failure(exc):
                raise
            found = self.get_dataset(key)  # created concurrently, or deleted before
            if found is not None:
                return found
            return self._revive(key)
        return dataset_from_row(row)

    def _revive(self, key: DatasetKey) -> Dataset:
        """A deleted dataset's name in use again: its ID counters go on (an
        ID is never reused, so a vector or a reply naming an old row can never
        reach a new one); rows a crashed delete left are removed first."""
        self._purge(key)
        row = DatasetRow(key.user_id, key.dataset)
        try:
            row.update(
                actions=[
                    DatasetRow.deleted_at.remove(),
                    DatasetRow.created_at.set(clock.now_str()),
                    DatasetRow.generation.set(uuid.uuid4().hex),
                    DatasetRow.entities.set(0),
                    DatasetRow.edges.set(0),
                    DatasetRow.artifacts.set(0),
                ],
                condition=DatasetRow.deleted_at.exists(),
            )
        except PynamoDBException as exc:
            if not is_condition_failure(exc):
                raise
            found = self.get_dataset(key)  # revived concurrently
            if found is None:  # and deleted again (an erase): a retry starts over
                raise Busy(
                    "the dataset was deleted while this call created it; try again", 1
                ) from exc
            return found
        return dataset_from_row(row)

    @upstream("graph store list_datasets")
    def list_datasets(self, user_id: str) -> list[Dataset]:
        rows = DatasetRow.query(user_id, consistent_read=True)
        return sorted((dataset_from_row(r) for r in rows if not r.deleted_at), key=lambda d: d.name)

    def _purge(self, key: DatasetKey) -> None:
        def rows_of(model: type[Model]) -> list[Model]:
            keys = [h for h in (model._hash_keyname, model._range_keyname) if h]
            return list(model.query(key.pk, attributes_to_get=keys, consistent_read=True))

        batch_write(deletes=[r for rows in self._map(rows_of, DATASET_PARTITIONED) for r in rows])

    @upstream("graph store delete_dataset")
    def delete_dataset(self, key: DatasetKey, events: list[dict[str, Any]] | None = None) -> bool:
        # The row is marked deleted first (no commit can land after it: the
        # commit transaction checks it), keeping its ID counters; then every
        # row of every partitioned table (a retry after a crash finishes the
        # job, and so does the next ensure_dataset of the name). The events
        # are written with the mark, outside the dataset (``outbox.py``).
        waiting = outbox_rows(events or [])
        try:
            self._mark_deleted(key, waiting)
            was_live = True
        except (PynamoDBException, TransactWriteError) as exc:
            if not is_condition_failure(exc) and not _cancelled(exc):
                raise
            was_live, waiting = False, []
            if self._row_missing(key):
                return False
        self._purge(key)
        crash_point("dataset_deleted")  # tests: the event waits in the outbox
        deliver(waiting, self._commits.outbox)
        return was_live

    @staticmethod
    def _mark_deleted(key: DatasetKey, waiting: list[DatasetRow]) -> None:
        row, now = DatasetRow(key.user_id, key.dataset), clock.now_str()
        live = DatasetRow.user_id.exists() & DatasetRow.deleted_at.does_not_exist()
        if not waiting:
            row.update(actions=[DatasetRow.deleted_at.set(now)], condition=live)
            return
        conn = DatasetRow._get_connection().connection
        with TransactWrite(connection=conn) as tx:
            tx.update(row, actions=[DatasetRow.deleted_at.set(now)], condition=live)
            for r in waiting:
                tx.save(r)

    @staticmethod
    def _row_missing(key: DatasetKey) -> bool:
        try:
            DatasetRow.get(key.user_id, key.dataset, consistent_read=True)
        except DatasetRow.DoesNotExist:
            return True
        return False

    @upstream("graph store allocate_ids")
    def allocate_ids(
        self, key: DatasetKey, entities: int, edges: int, artifacts: int
    ) -> tuple[int, int, int]:
        if min(entities, edges, artifacts) < 0:
            raise ValueError("allocate_ids: negative block size")
        row = DatasetRow(key.user_id, key.dataset)
        try:
            row.update(
                actions=[
                    DatasetRow.next_entity.add(entities),
                    DatasetRow.next_edge.add(edges),
                    DatasetRow.next_artifact.add(artifacts),
                ],
                condition=DatasetRow.user_id.exists() & DatasetRow.deleted_at.does_not_exist(),
            )
        except PynamoDBException as exc:
            if is_condition_failure(exc):
                raise NotFound(f"dataset {key.dataset!r} does not exist") from exc
            raise
        return (
            int(row.next_entity) - entities + 1,
            int(row.next_edge) - edges + 1,
            int(row.next_artifact) - artifacts + 1,
        )


def _cancelled(exc: Exception) -> bool:
    """A transaction cancelled by its condition (the dataset row not live)."""
    reasons = getattr(exc, "cancellation_reasons", None) or []
    return any(getattr(r, "code", None) == "ConditionalCheckFailed" for r in reasons)
