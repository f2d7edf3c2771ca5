"""The OpenSearch node for the contract tests.

`opensearch_url` is the node in env GB_TEST_OPENSEARCH_URL if set (.ci/run
starts one before pytest), else the one `infra/opensearch.sh` runs (reused when
already up, started otherwise and then stopped at the end of the run unless
GB_TEST_OPENSEARCH_KEEP=1). One node for the whole run, whatever the number of
pytest-xdist workers (the script starts one node at a time under a file lock
and hands the others its URL); the controller process, which outlives the
workers, stops it when a worker of this run started it. Without
Java or Maven the OpenSearch tests are skipped, except in CI (CI=true), where
they fail: there they must run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "infra" / "opensearch.sh"
# A folder of this run shared by the controller and its xdist workers (they
# inherit the environment); a worker that started the node leaves a mark in it.
RUN_DIR = "GB_TEST_RUN_DIR"
STARTED = "opensearch-started"
_OWN_RUN_DIR = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or os.environ.get(RUN_DIR):
        return  # an xdist worker, or a pytest inside a test run
    folder = tempfile.mkdtemp(prefix="gb-test-run-")
    os.environ[RUN_DIR] = folder
    config.stash[_OWN_RUN_DIR] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_OWN_RUN_DIR, None)
    if folder is None:
        return
    if (Path(folder) / STARTED).exists() and os.environ.get("GB_TEST_OPENSEARCH_KEEP") != "1":
        _script("stop", timeout=120)
    shutil.rmtree(folder, ignore_errors=True)
    os.environ.pop(RUN_DIR, None)


def _script(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="session")
def opensearch_url() -> Iterator[str]:
    url = os.environ.get("GB_TEST_OPENSEARCH_URL", "").strip()
    if url:
        yield url.rstrip("/")
        return
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        reason = f"the OpenSearch test node needs {' and '.join(missing)} (infra/opensearch.sh)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    status = _script("status", timeout=30)
    if status.returncode == 0:
        yield status.stdout.strip().splitlines()[-1]
        return
    started = _script("start", timeout=900)
    if started.returncode != 0:
        pytest.fail(f"infra/opensearch.sh start failed:\n{started.stderr[-4000:]}")
    folder = os.environ.get(RUN_DIR)
    if folder and Path(folder).is_dir():
        (Path(folder) / STARTED).touch()  # stopped by the controller at the end
        yield started.stdout.strip().splitlines()[-1]
        return
    try:
        yield started.stdout.strip().splitlines()[-1]
    finally:
        if os.environ.get("GB_TEST_OPENSEARCH_KEEP") != "1":
            _script("stop", timeout=120)


@pytest.fixture(scope="session")
def opensearch_prefix() -> str:
    """Index prefix unique to this test session (index names are lowercase)."""
    return f"gbt-{uuid.uuid4().hex[:10]}"
