"""A handler's cold start loads no SDK, no tracer SDK, no MCP models and no
local-only package: what a request needs loads when it first needs it
(bench/package_size.py prints the import times)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gligabao.handlers import COLD_START_DENIED as DENIED
from gligabao.handlers import COLD_START_DENIED_IN as DENIED_IN
from gligabao.handlers import FUNCTIONS as HANDLERS


def loaded_by(code: str) -> set[str]:
    """The modules loaded after running ``code`` in a fresh interpreter."""
    probe = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def denied_in(loaded: set[str], handler: str = "") -> list[str]:
    denied = {*DENIED, *DENIED_IN.get(handler, ())}
    return sorted(d for d in denied if any(m == d or m.startswith(d + ".") for m in loaded))


@pytest.mark.parametrize("handler", HANDLERS)
def test_handler_import_loads_nothing_denied(handler: str) -> None:
    loaded = loaded_by(
        f"import gligabao.handlers.{handler} as h\nassert callable(h.lambda_handler)"
    )
    assert "gligabao.handlers" in loaded
    assert denied_in(loaded, handler) == []


def test_the_check_sees_a_heavy_import() -> None:
    """The check itself, on a real interpreter: a handler imported beside a
    denied package (as a stray top-level import in it would) is caught."""
    loaded = loaded_by("import sqlite3\nimport gligabao.handlers.datasets")
    assert denied_in(loaded) == ["sqlite3"]


def test_the_powertools_packages_are_not_run_whole() -> None:
    """Importing the event handler's package the ordinary way (before the
    handlers could skip its __init__) loads every resolver, asyncio with
    them: the deny list sees it."""
    loaded = loaded_by(
        "import aws_lambda_powertools.event_handler\nimport gligabao.handlers.datasets"
    )
    assert {"asyncio", "aws_lambda_powertools.event_handler.appsync"} <= set(denied_in(loaded))


def test_every_function_is_checked() -> None:
    """FUNCTIONS names every functions/<name>/app.py, so a new function's
    handler is in the check (and in bench/package_size.py) from the start."""
    root = Path(__file__).resolve().parents[2] / "functions"
    assert sorted(HANDLERS) == sorted(p.parent.name for p in root.glob("*/app.py"))
