"""bench/ stays a package on its harness: every module imports as
``bench.NAME`` from the repository root with nothing on the path but the
checkout's code (no `sys.path` edits), and no bench module grows past the
project's ~400 lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 400


def modules() -> list[str]:
    return sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for p in (ROOT / "bench").rglob("*.py")
        if p.name != "__init__.py"
    )


def test_every_bench_module_imports_from_the_root() -> None:
    names = modules()
    assert "bench.harness.servers" in names and "bench.eval.run" in names
    probe = "import importlib, sys\nfor m in sys.argv[1:]:\n    importlib.import_module(m)\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "shared")}
    done = subprocess.run(
        [sys.executable, "-c", probe, *names],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


def test_no_bench_module_edits_sys_path_or_grows_too_long() -> None:
    for path in (ROOT / "bench").rglob("*.py"):
        text = path.read_text()
        assert "sys.path" not in text, path
        assert len(text.splitlines()) <= MAX_LINES, f"{path}: {len(text.splitlines())} lines"
