"""The record store port: where each call's trajectory and inference rows are
kept, and how operators read them back."""

from __future__ import annotations

from typing import Protocol

from .model import CallRecord, Inference


class RecordStore(Protocol):
    def save_call(self, call: CallRecord) -> None:
        """Persist the call's trajectory and its inference rows."""

    def get_call(self, user_id: str, call_id: str) -> CallRecord | None: ...

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
        """Newest first; the cursor is opaque to callers."""

    def delete_dataset(self, user_id: str, dataset: str) -> None:
        """Forget the records of a deleted dataset."""

    def delete_user(self, user_id: str) -> tuple[int, int]:
        """Forget every call record and inference row of the user (an
        erase); how many of each there were."""
