"""gligabao: a bi-temporal knowledge-graph memory for LLM agents.

``gligabao.Memory`` is the memory as a library (gligabao/library): loaded
when first named, so that a Lambda handler's import (which imports this
package) does not pay for it."""

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Memory"]

if TYPE_CHECKING:
    from .library import Memory


def __getattr__(name: str) -> Any:
    if name == "Memory":
        from .library import Memory

        return Memory
    raise AttributeError(f"module 'gligabao' has no attribute {name!r}")
