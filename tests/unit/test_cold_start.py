"""A handler's cold start loads no SDK, no tracer SDK, no MCP models and no
local-only package: what a request needs loads when it first needs it
(bench/package_size.py prints the import times)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gligabao.handlers import COLD_START_DENIED as DENIED

HANDLERS = ["remember", "query", "datasets", "records", "mcp", "remember_worker"]


def loaded_by(module: str) -> set[str]:
    code = (
        f"import sys, {module} as h; assert callable(h.lambda_handler); "
        "print('\\n'.join(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def denied_in(loaded: set[str]) -> list[str]:
    return sorted(
        d for d in DENIED if any(m == d or m.startswith(d + ".") for m in loaded)
    )


@pytest.mark.parametrize("handler", HANDLERS)
def test_handler_import_loads_nothing_denied(handler: str) -> None:
    loaded = loaded_by(f"gligabao.handlers.{handler}")
    assert "gligabao" in loaded
    assert denied_in(loaded) == []


def test_the_check_sees_a_heavy_import() -> None:
    """The check itself: a module that imports a denied package is caught."""
    loaded = loaded_by("gligabao.handlers.datasets") | {"sqlite3", "aws_xray_sdk.core"}
    assert denied_in(loaded) == ["aws_xray_sdk", "sqlite3"]
