"""Every module of the package imported when `gligabao serve` starts.

The handlers and the use cases import most of their modules lazily (a Lambda
cold start pays only for its own route). A long-running local server then
loads a module at the first request that needs it, from whatever is on disk
at that moment: a server started from a work tree (or an editable install)
that changes while it runs mixes two versions of the code. That is how a
server that had spent half an hour remembering a conversation answered its
first searches 500 (``AttributeError: 'RetrievalProfile' object has no
attribute 'w_prompt'``: the profile's class loaded at start, the retrieval
module that reads the new field at the first search), while a fresh server
on the same file answered them all. Loaded up front, the process runs the one
version it started with until it is restarted."""

from __future__ import annotations

import importlib
import logging
import pkgutil
import sys

log = logging.getLogger(__name__)


def import_package(package: str = "gligabao") -> int:
    """Import every module of ``package`` not imported yet; the number
    imported. A module whose optional dependency is missing is skipped (it
    could not be loaded later either: its route answers as it would have)."""
    root = importlib.import_module(package)
    main = getattr(sys.modules.get("__main__"), "__spec__", None)
    done = 0
    for info in pkgutil.walk_packages(root.__path__, f"{package}."):
        # The command's own module runs as __main__: not a second copy.
        if info.name in sys.modules or (main is not None and main.name == info.name):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError as exc:
            log.debug("not preloaded: %s (%s)", info.name, exc)
            continue
        done += 1
    return done
