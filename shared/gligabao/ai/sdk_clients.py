"""The providers' SDK clients (anthropic, openai), one per configuration in a
process. A client holds its connection pool and TLS context: building one
costs 20-40 ms, and its first request a new connection. Adapters built again
with the same settings (`wiring.reset()`, which the local server's settings
and the tests use) take the warm client instead of a new one."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any

from ..errors import optional_sdk

# Configurations kept (a process uses one or two; the least recently used one
# past this is dropped, not closed: an adapter may still hold it).
KEPT = 16

_clients: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_lock = threading.Lock()


def sdk_client(module: str, needed_for: str, factory: str, **settings: Any) -> Any:
    """``module.factory(**settings)`` (``optional_sdk`` names ``needed_for`` when
    the package is missing), or the one already built with the same settings
    and the same environment variables the SDK reads (``ANTHROPIC_*`` for
    anthropic, ``OPENAI_*`` for openai: its base URL, organisation, project)."""
    prefix = module.upper() + "_"
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(prefix)))
    key = (module, factory, tuple(sorted(settings.items())), env)
    with _lock:
        client = _clients.get(key)
        if client is not None:
            _clients.move_to_end(key)
            return client
    sdk = optional_sdk(module, needed_for)
    client = getattr(sdk, factory)(**settings)
    with _lock:
        kept = _clients.setdefault(key, client)
        _clients.move_to_end(key)
        while len(_clients) > KEPT:
            _clients.popitem(last=False)
    return kept
