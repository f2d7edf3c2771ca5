"""The record store in the embedded SQLite file: call trajectories and
inference rows, keyed like the DynamoDB tables (user, then call ID or
f"{created_at}#{id}"), so that the cursor means the same on both.

Retention: rows carry an expiry, like DynamoDB's TTL attribute; reads skip
expired rows and each save deletes a batch of them.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any, ParamSpec, TypeVar

from ...sqlite.db import Database, sqlite_errors
from ..codec import (
    MAX_KEY_BYTES,
    decode_cursor,
    encode_cursor,
    inference_sk,
    result_json,
    steps_from_json,
    steps_json,
)
from ..model import CallRecord, Inference

P = ParamSpec("P")
R = TypeVar("R")
PURGE_BATCH = 500  # expired rows deleted per save

# Every field of an Inference, in order: a row reads back as Inference(*row).
INFERENCE_FIELDS = [f.name for f in dataclasses.fields(Inference)]
INFERENCE_COLS = ", ".join(INFERENCE_FIELDS)
LIVE = "(expires_at IS NULL OR expires_at > ?)"


def _inference(row: tuple[Any, ...]) -> Inference:
    return Inference(*row)


class SqliteRecordStore:
    def __init__(self, db: Database, retention_days: int | None = None) -> None:
        self.db = db
        self._ttl_s = retention_days * 86400 if retention_days else None

    def _expires(self) -> float | None:
        return time.time() + self._ttl_s if self._ttl_s else None

    @sqlite_errors("record store save_call")
    def save_call(self, call: CallRecord) -> None:
        expires = self._expires()
        # not durable: a power cut may lose the last records, never the graph
        with self.db.write(durable=False) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO calls (user_id, call_id, type, status, dataset, "
                "session_id, started_at, duration_ms, steps, result, expires_at, inference_sks) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    call.user_id,
                    call.call_id,
                    call.type,
                    call.status,
                    call.dataset,
                    call.session_id,
                    call.started_at,
                    call.duration_ms,
                    steps_json(call.steps),
                    result_json(call.result),
                    expires,
                    json.dumps(sorted(inference_sk(i) for i in call.inferences)),
                ),
            )
            conn.executemany(
                f"INSERT OR REPLACE INTO inferences (sk, {INFERENCE_COLS}, expires_at) "
                f"VALUES (?{', ?' * (len(INFERENCE_FIELDS) + 1)})",
                [
                    (inference_sk(i), *(getattr(i, f) for f in INFERENCE_FIELDS), expires)
                    for i in call.inferences
                ],
            )
            now = time.time()
            for table in ("calls", "inferences"):
                conn.execute(
                    f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table} "
                    "WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?)",
                    (now, PURGE_BATCH),
                )

    @sqlite_errors("record store get_call")
    def get_call(self, user_id: str, call_id: str) -> CallRecord | None:
        if not call_id or len(call_id.encode()) > MAX_KEY_BYTES:
            return None  # as on DynamoDB: cannot be a key, no such call
        now = time.time()
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT type, status, dataset, session_id, started_at, duration_ms, steps, "
                f"result, inference_sks FROM calls WHERE user_id = ? AND call_id = ? AND {LIVE}",
                (user_id, call_id, now),
            ).fetchone()
            if row is None:
                return None
            # the call's own rows, by key (as on DynamoDB: not by their call_id)
            sks = json.loads(row[8])
            infs = conn.execute(
                f"SELECT {INFERENCE_COLS} FROM inferences WHERE user_id = ? "
                f"AND sk IN (SELECT value FROM json_each(?)) AND {LIVE} ORDER BY sk",
                (user_id, json.dumps(sks), now),
            ).fetchall()
        return CallRecord(
            call_id=call_id,
            type=row[0],
            user_id=user_id,
            dataset=row[2],
            session_id=row[3],
            started_at=row[4],
            status=row[1],
            duration_ms=float(row[5]),
            steps=steps_from_json(row[6]),
            inferences=[_inference(r) for r in infs],
            result=json.loads(row[7]) if row[7] else None,
        )

    @sqlite_errors("record store list_inferences")
    def list_inferences(
        self,
        user_id: str,
        *,
        dataset: str | None,
        session_id: str | None,
        call_id: str | None,
        limit: int,
        cursor: str | None,
    ) -> tuple[list[Inference], str | None]:
        limit = max(1, int(limit))
        where = ["user_id = ?", LIVE]
        args: list[Any] = [user_id, time.time()]
        for column, value in (("dataset", dataset), ("session_id", session_id)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if call_id is not None:
            where.append("call_id = ?")
            args.append(call_id)
        if cursor:
            where.append("sk < ?")
            args.append(decode_cursor(cursor))
        with self.db.connect() as conn:
            rows = conn.execute(
                f"SELECT sk, {INFERENCE_COLS} FROM inferences WHERE {' AND '.join(where)} "
                "ORDER BY sk DESC LIMIT ?",
                (*args, limit + 1),
            ).fetchall()
        page = rows[:limit]
        nxt = encode_cursor(page[-1][0]) if len(rows) > limit else None
        return [_inference(r[1:]) for r in page], nxt

    @sqlite_errors("record store delete_dataset")
    def delete_dataset(self, user_id: str, dataset: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM inferences WHERE user_id = ? AND dataset = ?", (user_id, dataset)
            )
            conn.execute("DELETE FROM calls WHERE user_id = ? AND dataset = ?", (user_id, dataset))

    @sqlite_errors("record store delete_user")
    def delete_user(self, user_id: str) -> tuple[int, int]:
        with self.db.write() as conn:
            calls = conn.execute("DELETE FROM calls WHERE user_id = ?", (user_id,)).rowcount
            infs = conn.execute("DELETE FROM inferences WHERE user_id = ?", (user_id,)).rowcount
        return int(calls), int(infs)
