"""The ledger of a batch remember (memory/batch.py) in the record store: one
call record per batch key, whose result lists the committed texts as ranges
of their indices in time order. It expires with the other call records."""

from __future__ import annotations

from .model import new_call
from .port import RecordStore

LEDGER = "batch_ledger"


def to_ranges(done: set[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for i in sorted(done):
        if out and out[-1][1] == i:
            out[-1][1] = i + 1
        else:
            out.append([i, i + 1])
    return out


def from_ranges(ranges: object) -> set[int]:
    out: set[int] = set()
    for r in ranges if isinstance(ranges, list) else []:
        if isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r):
            out.update(range(r[0], r[1]))
    return out


class RecordLedger:
    def __init__(self, records: RecordStore) -> None:
        self.records = records

    def load(self, user_id: str, ledger_id: str) -> set[int]:
        call = self.records.get_call(user_id, ledger_id)
        if call is None or call.type != LEDGER or call.result is None:
            return set()
        return from_ranges(call.result.get("done"))

    def save(self, user_id: str, ledger_id: str, done: set[int]) -> None:
        call = new_call(ledger_id, LEDGER, user_id, "", None)
        call.result = {"done": to_ranges(done)}
        self.records.save_call(call)
