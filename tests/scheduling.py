"""How the suite is spread over pytest-xdist's workers (a plugin of conftest).

- **Workers**: ``-n auto``, one per core and one more (the hook below). With
  one a core the second half of a run waited a quarter of its time (leases,
  timeouts, child processes): fresh-clone CI on this 2-core machine, pytest
  604 s at two workers (CPU busy 81%), 498 s at three (93%). Four, when most
  tests still went through moto's server on loopback, took longer than two.
- **Files** (``--dist loadfile``, this module's scheduler): a file's tests run
  on one worker, in order, and its module fixtures start once. A few long
  files whose fixtures are all per test (or per worker) are cut into
  ``SPLIT`` parts, so that one of them is not the run's last minutes on one
  worker.
- **Order** (with ``--no-loadscope-reorder``: xdist otherwise orders files by
  their number of tests): the longest files first (``LONG_FILES``), then the
  rest as collected. Only the order of files changes, never a file's own.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

# The longest files, longest first (their seconds summed over the tests of a
# fresh-clone CI run's junit report, four workers: isolation 346, graph store
# 226, record store 160, schemathesis 121, crash points 117, ...).
LONG_FILES = (
    "integration/test_isolation.py",
    "contract/test_graph_store.py",
    "contract/test_record_store.py",
    "contract/test_schemathesis.py",
    "integration/test_crash_points.py",
    "integration/test_correct_fact.py",
    "bench/test_rulers.py",
    "integration/test_query_context.py",
    "integration/test_idempotency_size.py",
    "contract/test_vector_index.py",
    "integration/test_faults.py",
    "integration/test_correct_crash.py",
    "integration/test_erase_fence.py",
    "e2e/test_openapi.py",
    "integration/test_geo.py",
    "integration/test_events_crash_outbox.py",
    "integration/test_forget_crash_points.py",
    "integration/test_events_crash.py",
    "integration/test_events_crash_batch.py",
    "integration/test_split_crash.py",
)
# Files cut into this many groups (runs of consecutive tests): each of their
# fixtures is per test or per worker, so a group runs alone as well as whole.
SPLIT = {
    "integration/test_isolation.py": 4,
    "contract/test_graph_store.py": 3,
    "contract/test_record_store.py": 2,
    "contract/test_schemathesis.py": 2,
    "integration/test_crash_points.py": 2,
}


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker a core and one more (the environment's
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still wins). The second half of a run
    waits a quarter of its time at two workers on two cores (leases, timeouts,
    child processes: /proc/stat every 5 s, fresh-clone CI)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return len(os.sched_getaffinity(0)) + 1


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0].removeprefix("tests/")


def _rank(item: pytest.Item) -> int:
    path = _file(item)
    return LONG_FILES.index(path) if path in LONG_FILES else len(LONG_FILES)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: within a file, and among the rest, the order stays


def groups(nodeids: list[str]) -> dict[str, str]:
    """The group of each test of a ``SPLIT`` file: the file's tests in
    collection order, cut into runs of equal length."""
    by_file: dict[str, list[str]] = {}
    for nodeid in nodeids:
        path = nodeid.split("::", 1)[0]
        if path.removeprefix("tests/") in SPLIT:
            by_file.setdefault(path, []).append(nodeid)
    out: dict[str, str] = {}
    for path, ids in by_file.items():
        parts = SPLIT[path.removeprefix("tests/")]
        for i, nodeid in enumerate(ids):
            out[nodeid] = f"{path}#{i * parts // len(ids)}"
    return out


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``, with the ``SPLIT`` files in parts. (xdist's own
    ``loadgroup`` marks a test's group on its node ID, which pytest 9's
    items no longer take.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SplitFiles(LoadFileScheduling):  # type: ignore[misc]
        _groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._groups is None:  # called once every worker has collected
                self._groups = groups(next(iter(self.registered_collections.values())))
            return self._groups.get(nodeid) or str(super()._split_scope(nodeid))

    return SplitFiles(config, log)
