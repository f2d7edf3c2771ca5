"""JSON from a client, within bounds: an integer of more than ``MAX_DIGITS``
digits or a nesting deeper than ``MAX_DEPTH`` is refused as malformed input
(a 400 on the API, -32700 on /mcp), never a 500. Python's own limits are
4,300 digits (a ValueError, not a JSONDecodeError) and the interpreter's
recursion limit (a RecursionError): both far past anything the API takes,
and neither answered as bad input."""

from __future__ import annotations

import json
from typing import Any

MAX_DIGITS = 100  # no number of the API has more than a few (docs/limits.md)
MAX_DEPTH = 32  # the deepest request the API takes is 4 levels


class UnsafeJson(ValueError):
    """JSON that parses but is past the bounds (or past Python's)."""


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise UnsafeJson(f"an integer of more than {MAX_DIGITS} digits")
    return int(text)


def loads(raw: str | bytes) -> Any:
    """``json.loads`` within the bounds: JSONDecodeError for what is not JSON,
    UnsafeJson for what is past them."""
    try:
        value = json.loads(raw, parse_int=_int)
    except RecursionError:
        raise UnsafeJson(f"nested deeper than {MAX_DEPTH} levels") from None
    except UnsafeJson:
        raise
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # Python's own number limit, in the unlikely case
        raise UnsafeJson(str(exc)) from None
    if _depth(value) > MAX_DEPTH:
        raise UnsafeJson(f"nested deeper than {MAX_DEPTH} levels")
    return value


def _depth(value: Any) -> int:
    """The nesting depth (a scalar 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            return level
        stack.extend((child, level + 1) for child in children)
    return deepest
