"""The record store on DynamoDB: call trajectories (``calls``) and inference
rows (``inferences``), both partitioned by user.

``inferences`` sorts by f"{created_at}#{id}", so a descending Query lists a
user's inferences newest first; dataset / session / call filters are filter
expressions on that Query. The cursor is the key of the last item returned
(base64url JSON), so every item comes exactly once across pages, and it only
ever addresses the calling user's partition.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from pynamodb.expressions.condition import Condition
from pynamodb.models import Model

from ...dynamodb.batch import batch_write, upstream
from ...dynamodb.client import REQUESTS
from ...dynamodb.tables import CallRow, InferenceRow
from ..codec import (  # noqa: F401  (re-exported: the tests and callers use them from here)
    MAX_KEY_BYTES,
    MAX_RESULT_BYTES,
    decode_cursor,
    encode_cursor,
    inference_sk,
    result_json,
    steps_from_json,
    steps_json,
)
from ..model import CallRecord, Inference

FILTERED_PAGE_SIZE = 200  # rows read per request when filters may drop most


def inference_row(inf: Inference, expires: timedelta | None = None) -> InferenceRow:
    return InferenceRow(
        inf.user_id,
        inference_sk(inf),
        id=inf.id,
        dataset=inf.dataset,
        session_id=inf.session_id,
        call_id=inf.call_id,
        type=inf.type,
        stage=inf.stage,
        provider=inf.provider,
        model=inf.model,
        reasoning=inf.reasoning,
        input_tokens=inf.input_tokens,
        output_tokens=inf.output_tokens,
        thinking_tokens=inf.thinking_tokens,
        cost_usd=inf.cost_usd,
        latency_ms=inf.latency_ms,
        status=inf.status,
        created_at=inf.created_at,
        expires_at=expires,
    )


def inference_from_row(row: InferenceRow) -> Inference:
    return Inference(
        id=row.id,
        user_id=row.user_id,
        dataset=row.dataset or "",
        session_id=row.session_id,
        call_id=row.call_id or "",
        type=row.type or "",
        stage=row.stage or "",
        model=row.model or "",
        reasoning=row.reasoning or "",
        input_tokens=int(row.input_tokens or 0),
        output_tokens=int(row.output_tokens or 0),
        thinking_tokens=None if row.thinking_tokens is None else int(row.thinking_tokens),
        cost_usd=float(row.cost_usd or 0),
        latency_ms=int(row.latency_ms or 0),
        status=row.status or "",
        created_at=row.created_at or "",
        provider=row.provider or "",
    )


class DynamoRecordStore:
    """RecordStore on DynamoDB (tables configured with
    ``gligabao.dynamodb.admin.configure_tables``). ``retention_days`` sets the
    TTL attribute of the rows it writes (None: kept until the dataset goes)."""

    def __init__(self, retention_days: int | None = None) -> None:
        self._expires = timedelta(days=retention_days) if retention_days else None

    @property
    def requests(self) -> int:
        """DynamoDB requests sent so far by this process (all stores)."""
        return REQUESTS.total

    @upstream("record store save_call")
    def save_call(self, call: CallRecord) -> None:
        infs = [inference_row(i, self._expires) for i in call.inferences]
        row = CallRow(
            call.user_id,
            call.call_id,
            type=call.type,
            status=call.status,
            dataset=call.dataset,
            session_id=call.session_id,
            started_at=call.started_at,
            duration_ms=call.duration_ms,
            steps=steps_json(call.steps),
            inference_sks={r.sk for r in infs} or None,
            result=result_json(call.result),
            expires_at=self._expires,
        )
        rows: list[Model] = [row, *infs]
        batch_write(puts=rows)

    @upstream("record store get_call")
    def get_call(self, user_id: str, call_id: str) -> CallRecord | None:
        if not call_id or len(call_id.encode()) > MAX_KEY_BYTES:
            return None  # cannot be a key: no such call (DynamoDB would refuse the read)
        try:
            row = CallRow.get(user_id, call_id)
        except CallRow.DoesNotExist:
            return None
        sks = sorted(row.inference_sks or ())
        infs = sorted(
            (inference_from_row(r) for r in InferenceRow.batch_get([(user_id, s) for s in sks])),
            key=inference_sk,
        )
        return CallRecord(
            call_id=row.call_id,
            type=row.type or "",
            user_id=row.user_id,
            dataset=row.dataset or "",
            session_id=row.session_id,
            started_at=row.started_at or "",
            status=row.status or "",
            duration_ms=float(row.duration_ms or 0),
            steps=steps_from_json(row.steps),
            inferences=infs,
            result=json.loads(row.result) if row.result else None,
        )

    @upstream("record store list_inferences")
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
        start: dict[str, Any] | None = None
        if cursor:
            start = {"user_id": {"S": user_id}, "sk": {"S": decode_cursor(cursor)}}
        cond: Condition | None = None
        if dataset is not None:
            cond &= InferenceRow.dataset == dataset
        if session_id is not None:
            cond &= InferenceRow.session_id == session_id
        if call_id is not None:
            cond &= InferenceRow.call_id == call_id
        # One row more than asked tells whether there is a next page; the
        # cursor is the last *returned* row's key, never DynamoDB's
        # LastEvaluatedKey, so no row is skipped or repeated.
        rows = list(
            InferenceRow.query(
                user_id,
                filter_condition=cond,
                scan_index_forward=False,
                limit=limit + 1,
                last_evaluated_key=start,
                page_size=limit + 1 if cond is None else max(limit + 1, FILTERED_PAGE_SIZE),
            )
        )
        page = rows[:limit]
        nxt = encode_cursor(page[-1].sk) if len(rows) > limit else None
        return [inference_from_row(r) for r in page], nxt

    @upstream("record store delete_dataset")
    def delete_dataset(self, user_id: str, dataset: str) -> None:
        infs = InferenceRow.query(
            user_id,
            filter_condition=InferenceRow.dataset == dataset,
            attributes_to_get=["user_id", "sk"],
        )
        calls = CallRow.query(
            user_id,
            filter_condition=CallRow.dataset == dataset,
            attributes_to_get=["user_id", "call_id"],
        )
        rows: list[Model] = [*infs, *calls]
        batch_write(deletes=rows)

    @upstream("record store delete_user")
    def delete_user(self, user_id: str) -> tuple[int, int]:
        calls = list(CallRow.query(user_id, attributes_to_get=["user_id", "call_id"]))
        infs = list(InferenceRow.query(user_id, attributes_to_get=["user_id", "sk"]))
        batch_write(deletes=[*infs, *calls])
        return len(calls), len(infs)
