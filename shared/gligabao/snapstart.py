"""Lambda SnapStart's runtime hooks (the template's ``SnapStart=on``).

With SnapStart, Lambda imports a function's handler once, when a version is
published, snapshots the initialised environment, and resumes every new
environment of that version from the one snapshot. What the import left in
memory is then shared by all of them: the ``random`` module's state (seeded
once, at import), and any client, connection or credential opened before
the snapshot. So:

- before the snapshot, every adapter the wiring built is dropped (none is
  built by an import, but a warm-up would build some): no socket or
  credential goes into the snapshot;
- after each restore, ``random`` is seeded again from the kernel, and the
  adapters are dropped again, so that each environment opens its own.

IDs (call ids, idempotency keys, request ids) come from ``uuid.uuid4`` or
``secrets``, which read the kernel's generator at each call: unique per
environment after a restore. Nothing that identifies a request or a caller
is made at import (tests/unit/test_snapstart.py checks both, and that the
check fails for a module that makes an ID at import).

``snapshot_restore_py`` is provided by Lambda's Python runtimes (3.12 and
later); elsewhere (tests, ``gligabao serve``) it is usually absent and the
registration is a no-op: the hooks are kept here, and ``run_before_snapshot``
/ ``run_after_restore`` call them as Lambda would (before: in the reverse
order of registration; after: in the order of registration)."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any

Hook = Callable[[], Any]

_before: list[Hook] = []
_after: list[Hook] = []


@functools.cache
def _runtime() -> Any:
    """Lambda's hook library, or None where it is not installed."""
    try:
        import snapshot_restore_py
    except ModuleNotFoundError:
        return None
    return snapshot_restore_py


def before_snapshot(fn: Hook) -> Hook:
    """Register ``fn`` to run before Lambda takes the snapshot."""
    _before.append(fn)
    runtime = _runtime()
    if runtime is not None:
        runtime.register_before_snapshot(fn)
    return fn


def after_restore(fn: Hook) -> Hook:
    """Register ``fn`` to run in each environment resumed from the snapshot."""
    _after.append(fn)
    runtime = _runtime()
    if runtime is not None:
        runtime.register_after_restore(fn)
    return fn


def run_before_snapshot() -> None:
    for fn in reversed(_before):
        fn()


def run_after_restore() -> None:
    for fn in list(_after):
        fn()


def drop_adapters() -> None:
    """Every client, connection and cached setting is built again on first use."""
    from . import wiring

    wiring.reset()


def reseed() -> None:
    """``random`` seeded from the kernel (os.urandom), per environment."""
    random.seed()


_installed: list[bool] = []


def install() -> None:
    """Register the package's hooks, once (handlers/__init__.py, at import:
    Lambda runs only the hooks that the handler's import registered)."""
    if _installed:
        return
    _installed.append(True)
    before_snapshot(drop_adapters)
    after_restore(reseed)
    after_restore(drop_adapters)
