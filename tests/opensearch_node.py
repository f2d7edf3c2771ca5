"""The OpenSearch node for the contract tests.

`opensearch_url` is the node in env GB_TEST_OPENSEARCH_URL if set, else the one
`infra/opensearch.sh` runs (reused when already up, started otherwise and then
stopped at the end of the session unless GB_TEST_OPENSEARCH_KEEP=1). Without
Java or Maven the OpenSearch tests are skipped, except in CI (CI=true), where
they fail: there they must run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "infra" / "opensearch.sh"


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
    try:
        yield started.stdout.strip().splitlines()[-1]
    finally:
        if os.environ.get("GB_TEST_OPENSEARCH_KEEP") != "1":
            _script("stop", timeout=120)


@pytest.fixture(scope="session")
def opensearch_prefix() -> str:
    """Index prefix unique to this test session (index names are lowercase)."""
    return f"gbt-{uuid.uuid4().hex[:10]}"
