"""SnapStart: environments resumed from one snapshot (forks of a process that
imported a handler and ran the before-snapshot hooks, tests/snapstart/probe.py)
must each get their own IDs, random values and clients."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
COPIES = 3


def restore(module: str, *, hooks: bool = True) -> list[dict[str, Any]]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT / "tests")]),
        "GB_REMEMBER_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/q",
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "POWERTOOLS_METRICS_NAMESPACE": "gligabao-test",
    }
    args = [sys.executable, str(ROOT / "tests" / "snapstart" / "probe.py"), module, str(COPIES)]
    done = subprocess.run(
        args + ([] if hooks else ["--no-hooks"]),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def problems(copies: list[dict[str, Any]]) -> list[str]:
    """What the environments share that they must not."""
    found = []
    if len({c["call_id"] for c in copies}) < len(copies):
        found.append("the same call id in two environments")
    if len({c["random"] for c in copies}) < len(copies):
        found.append("the same random values in two environments")
    if any(c["client_from_snapshot"] for c in copies):
        found.append("a client opened before the snapshot")
    return found


@pytest.mark.parametrize(
    "module", ["gligabao.handlers.query", "gligabao.handlers.remember", "gligabao.handlers.records"]
)
def test_restored_environments_share_no_id_random_state_or_client(module: str) -> None:
    assert problems(restore(module)) == []


def test_without_the_hooks_the_environments_share_random_state_and_clients() -> None:
    """The hooks are what makes them differ (the check has teeth)."""
    found = problems(restore("gligabao.handlers.query", hooks=False))
    assert found == [
        "the same random values in two environments",
        "a client opened before the snapshot",
    ]


def test_an_id_made_at_import_is_caught() -> None:
    assert problems(restore("snapstart.bad_handler")) == ["the same call id in two environments"]


def test_the_hooks_are_registered_with_lambdas_library_when_it_is_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import types

    from gligabao import snapstart

    seen: list[tuple[str, object]] = []
    fake = types.ModuleType("snapshot_restore_py")
    fake.register_before_snapshot = lambda fn: seen.append(("before", fn))  # type: ignore[attr-defined]
    fake.register_after_restore = lambda fn: seen.append(("after", fn))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", fake)
    snapstart._runtime.cache_clear()
    monkeypatch.setattr(snapstart, "_before", [])
    monkeypatch.setattr(snapstart, "_after", [])
    monkeypatch.setattr(snapstart, "_installed", [])
    try:
        snapstart.install()
    finally:
        snapstart._runtime.cache_clear()
    assert seen == [
        ("before", snapstart.drop_adapters),
        ("after", snapstart.reseed),
        ("after", snapstart.drop_adapters),
    ]
