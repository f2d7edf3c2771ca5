"""memory/parallel.start: a store's read runs on a worker when its reads gain
from overlapping (DynamoDB: round trips), in the caller's thread when they do
not (SQLite in this process); either way the future holds its value or error."""

from __future__ import annotations

import threading

import pytest

from gligabao.memory.parallel import start


class Store:
    def __init__(self, overlap_reads: bool) -> None:
        self.overlap_reads = overlap_reads

    def read(self, n: int) -> tuple[int, str]:
        return n, threading.current_thread().name

    def fail(self) -> None:
        raise LookupError("no such row")


@pytest.mark.parametrize("overlap", [True, False])
def test_where_a_read_runs(overlap: bool) -> None:
    value, thread = start(Store(overlap).read, 7).result(timeout=10)
    assert value == 7
    assert (thread == threading.current_thread().name) is not overlap
    with pytest.raises(LookupError, match="no such row"):
        start(Store(overlap).fail).result(timeout=10)


def test_a_plain_function_runs_on_a_worker() -> None:
    name = start(lambda: threading.current_thread().name).result(timeout=10)
    assert name.startswith("gb-reads")
