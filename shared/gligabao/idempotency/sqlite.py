"""Idempotency on the embedded SQLite file (its shared pool), for `gligabao
serve` without DynamoDB: a Powertools persistence layer with the same
conditions as Powertools' DynamoDB layer: a key can be taken when it is
absent, expired, or in progress past its in-progress expiry; the check and the
write are one transaction."""

from __future__ import annotations

import time
from typing import Any

from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import (
    STATUS_CONSTANTS,
    BasePersistenceLayer,
    DataRecord,
)

from ..sqlite.db import Database, sqlite_errors
from .runner import OwnedKeys, PowertoolsIdempotency

COLS = "id, status, expiration, in_progress_expiration, data, validation"


def _record(row: tuple[Any, ...]) -> DataRecord:
    return DataRecord(
        idempotency_key=row[0],
        status=row[1],
        expiry_timestamp=row[2],
        in_progress_expiry_timestamp=row[3],
        response_data=row[4] or "",
        payload_hash=row[5] or "",
    )


class SqlitePersistenceLayer(OwnedKeys, BasePersistenceLayer):
    def __init__(self, db: Database) -> None:
        super().__init__()
        self.db = db

    @sqlite_errors("idempotency forget_user")
    def forget_owner(self, owner: str) -> int:
        with self.db.write() as conn:
            # (the owner is hex: nothing in it is a LIKE wildcard)
            cur = conn.execute("DELETE FROM idempotency WHERE id LIKE ?", (f"%#{owner}#%",))
        return int(cur.rowcount)

    def _get_record(self, idempotency_key: str) -> DataRecord:
        with self.db.connect() as conn:
            row = conn.execute(
                f"SELECT {COLS} FROM idempotency WHERE id = ?", (idempotency_key,)
            ).fetchone()
        if row is None:
            raise IdempotencyItemNotFoundError
        return _record(row)

    def _put_record(self, data_record: DataRecord) -> None:
        now = time.time()
        with self.db.write() as conn:
            row = conn.execute(
                f"SELECT {COLS} FROM idempotency WHERE id = ?", (data_record.idempotency_key,)
            ).fetchone()
            if row is not None:
                old = _record(row)
                expired = (old.expiry_timestamp or 0) < int(now)
                stuck = (
                    old.status == STATUS_CONSTANTS["INPROGRESS"]
                    and old.in_progress_expiry_timestamp is not None
                    and old.in_progress_expiry_timestamp < int(now * 1000)
                )
                if not (expired or stuck):
                    # another request under the same key: refused (as Powertools'
                    # DynamoDB layer does with the record its condition returns)
                    self._validate_payload(data_payload=data_record, stored_data_record=old)
                    raise IdempotencyItemAlreadyExistsError(old_data_record=old)
            conn.execute(
                f"INSERT OR REPLACE INTO idempotency ({COLS}) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    data_record.idempotency_key,
                    data_record.status,
                    data_record.expiry_timestamp,
                    data_record.in_progress_expiry_timestamp,
                    None,
                    data_record.payload_hash if self.payload_validation_enabled else None,
                ),
            )

    def _update_record(self, data_record: DataRecord) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE idempotency SET data = ?, expiration = ?, status = ? WHERE id = ?",
                (
                    data_record.response_data,
                    data_record.expiry_timestamp,
                    data_record.status,
                    data_record.idempotency_key,
                ),
            )

    def _delete_record(self, data_record: DataRecord) -> None:
        with self.db.write() as conn:
            conn.execute("DELETE FROM idempotency WHERE id = ?", (data_record.idempotency_key,))


def sqlite_idempotency(db: Database, ttl_s: int) -> PowertoolsIdempotency:
    """Idempotency records in the ``idempotency`` table of ``db``."""
    return PowertoolsIdempotency(SqlitePersistenceLayer(db), ttl_s)
