"""The import contracts of pyproject.toml ([tool.importlinter]) hold for the
tree, and they bite: a copy of the package with one back arrow added fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(shared: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(shared)}
    return subprocess.run(
        [str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def test_the_tree_keeps_every_contract() -> None:
    out = lint(ROOT / "shared")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


@pytest.mark.parametrize(
    ("module", "arrow", "contract"),
    [
        ("memory/query.py", "from .. import wiring", "use cases import no adapter"),
        ("memory/query.py", "import sqlite3", "use cases import no adapter"),
        ("api/app.py", "from .. import wiring", "imports no wiring"),
        ("graph/sqlite/store.py", "from ...memory import query", "adapters import no use case"),
        ("errors.py", "from . import wiring", "No import cycles"),
        ("handlers/query.py", "from .. import ui", "nothing deployed imports gligabao.ui"),
    ],
)
def test_a_back_arrow_breaks_a_contract(
    tmp_path: Path, module: str, arrow: str, contract: str
) -> None:
    shutil.copytree(
        ROOT / "shared" / "gligabao",
        tmp_path / "gligabao",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    target = tmp_path / "gligabao" / module
    target.write_text(target.read_text() + f"\n\ndef _back() -> None:\n    {arrow}\n")
    out = lint(tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    broken = out.stdout.split("Broken contracts", 1)[1]
    assert contract in broken, out.stdout
