"""Store reads that overlap. On AWS every read is a network round trip, so
the query sends the reads that do not depend on each other at once, and the
ones that do not depend on the question's vector while it is being embedded.

Only leaf reads are submitted here (a store method; it may fan out on the
store's own pool, whose tasks never wait on anything): a task on this pool
never waits for another task of it, so it cannot deadlock however many
queries share the process."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

# Reads in flight at once, across the queries of a process: a query sends at
# most about five at a time, and a Lambda runs one query.
WORKERS = 32

_POOL = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="gb-reads")


def start(fn: Callable[..., T], *args: Any) -> Future[T]:
    """Run ``fn(*args)`` on a worker, in the caller's context (its deadline);
    a read of a store whose reads do not gain from overlapping
    (``overlap_reads`` False: SQLite in this process) runs here instead, its
    value or error in the future (measured: the handoffs cost more than the
    reads, docs/performance.md)."""
    if not getattr(getattr(fn, "__self__", None), "overlap_reads", True):
        return now(fn, *args)
    ctx = contextvars.copy_context()
    return _POOL.submit(ctx.run, fn, *args)


def now(fn: Callable[..., T], *args: Any) -> Future[T]:
    """Run ``fn(*args)`` here, as a future that holds its value or its error."""
    f: Future[T] = Future()
    try:
        f.set_result(fn(*args))
    except Exception as exc:
        f.set_exception(exc)
    return f


def done(value: T) -> Future[T]:
    """A read that was not needed, as a future that already has its value."""
    f: Future[T] = Future()
    f.set_result(value)
    return f
