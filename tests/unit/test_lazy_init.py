"""lazy_init.skip_init: a package whose __init__ is not run at import; a name
it re-exports loads only its own submodule, anything else runs the real
__init__ once. On the Powertools packages the handlers use, and on a made-up
package."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def run(code: str, path: Path | None = None) -> str:
    env_path = [str(path)] if path else []
    probe = f"import sys\nsys.path[:0] = {env_path!r}\n" + textwrap.dedent(code)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_reexported_name_loads_only_its_submodule(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from .a import A\nfrom .b import B as Bee\nfrom pkg import c\nX = 1\nLOADED = True\n"
    )
    (pkg / "a.py").write_text("class A: pass\n")
    (pkg / "b.py").write_text("B = 'b'\n")
    (pkg / "c.py").write_text("C = 'c'\n")
    out = run(
        """
        from gligabao.lazy_init import skip_init
        assert skip_init("pkg") and not skip_init("pkg")  # once
        from pkg import A
        import pkg.a
        print(A is pkg.a.A, sorted(m for m in sys.modules if m.startswith("pkg")))
        from pkg import Bee
        print(Bee, "pkg.c" in sys.modules, "LOADED" in vars(sys.modules["pkg"]))
        import pkg
        print(pkg.X, pkg.LOADED, "pkg.c" in sys.modules)  # the real __init__ ran
        """,
        tmp_path,
    )
    assert out.splitlines() == [
        "True ['pkg', 'pkg.a']",
        "b False False",
        "1 True True",
    ]


def test_the_handlers_load_no_other_powertools_resolver_and_all_still_import() -> None:
    out = run(
        """
        import gligabao.handlers.query
        from aws_lambda_powertools.event_handler import Response, content_types
        from aws_lambda_powertools.event_handler.api_gateway import Response as Real
        print(Response is Real, content_types.APPLICATION_JSON)
        print("asyncio" in sys.modules, "aws_lambda_powertools.event_handler.appsync" in sys.modules)
        from aws_lambda_powertools.event_handler import AppSyncResolver
        from aws_lambda_powertools.utilities.data_classes import SQSEvent, event_source
        print(AppSyncResolver.__module__, SQSEvent.__name__, callable(event_source))
        """
    )
    assert out.splitlines() == [
        "True application/json",
        "False False",
        "aws_lambda_powertools.event_handler.appsync SQSEvent True",
    ]
