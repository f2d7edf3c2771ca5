"""Two Powertools packages whose ``__init__`` imports every submodule they
have, imported without running it: the handlers use the API Gateway resolver
and its event classes, not the AppSync, Bedrock agent, VPC Lattice ... ones.

``aws_lambda_powertools.event_handler``'s ``__init__`` imports every resolver
(AppSync's pulls in asyncio) and ``utilities.data_classes``' every event
class of every AWS service: some 25 ms of CPU of each handler's cold start
on this machine (docs/performance.md). ``skip_init(name)`` puts the package
in ``sys.modules`` as a module whose ``__path__`` is the real one (so its
submodules import as usual) and whose names load on first use
(PEP 562 ``__getattr__``): a name its ``__init__`` re-exports (``from
.api_gateway import Response``) imports only the submodule that defines it;
any other name runs the real ``__init__`` once, so nothing that worked stops
working. ``gligabao.handlers`` calls it before any handler imports
Powertools' event handler (tests/unit/test_lazy_init.py)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

POWERTOOLS_PACKAGES = (
    "aws_lambda_powertools.event_handler",
    "aws_lambda_powertools.utilities.data_classes",
)


def reexports(init_source: str, package: str) -> dict[str, tuple[str, str]]:
    """{name: (module, name there)} of the ``from X import name`` lines at
    the top level of a package's ``__init__``."""
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(init_source).body:
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = importlib.util.resolve_name("." * node.level + module, package)
            for alias in node.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = (module, alias.name)
    return found


def skip_init(name: str) -> bool:
    """Install ``name`` without running its ``__init__`` (see above). False,
    and nothing done, when it is imported already or its source is not there."""
    if name in sys.modules:
        return False
    spec = importlib.util.find_spec(name)
    if (
        spec is None
        or spec.loader is None
        or not spec.origin
        or not spec.submodule_search_locations
    ):
        return False
    try:
        names = reexports(Path(spec.origin).read_text(encoding="utf-8"), name)
    except (OSError, SyntaxError):
        return False
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader
    state = {"ran": False}

    def __getattr__(attr: str) -> Any:
        if attr in names:
            source, original = names[attr]
            value = (  # `from <this package> import submodule`: the submodule
                importlib.import_module(f"{name}.{original}")
                if source == name
                else getattr(importlib.import_module(source), original)
            )
            setattr(module, attr, value)
            return value
        if not attr.startswith("__") and importlib.util.find_spec(f"{name}.{attr}") is not None:
            return importlib.import_module(f"{name}.{attr}")
        if not state["ran"]:
            state["ran"] = True
            loader.exec_module(module)  # the real __init__, once
            return getattr(module, attr)
        raise AttributeError(f"module {name!r} has no attribute {attr!r}")

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:  # as the import system does: the parent package's attribute
        setattr(sys.modules[parent], child, module)
    return True


def skip_powertools_inits() -> None:
    for name in POWERTOOLS_PACKAGES:
        skip_init(name)
