"""schemathesis hooks for the contract run (SCHEMATHESIS_HOOKS): a page
cursor is the server's own token, which no schema can generate; a case meant
to be valid that carries one sends a cursor the server issues, of the listing
it asks (the position is any: cursors are not bound to a user)."""

from __future__ import annotations

from typing import Any

import schemathesis

from gligabao.memory.browse import encode_cursor as browse_cursor
from gligabao.records.codec import encode_cursor as records_cursor


def _cursor(path: str, query: dict[str, Any]) -> str:
    if path == "/v1/gb/inferences":
        return records_cursor("2024-01-01T00:00:00Z#1")
    if path == "/v1/gb/entities":
        return browse_cursor("entities", "2024-01-01T00:00:00Z#000000000001")
    return browse_cursor("session" if "session_id" in query else "artifacts", 1)


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return
    if isinstance(case.query, dict) and "cursor" in case.query:
        case.query["cursor"] = _cursor(case.operation.path, case.query)
