"""Serves the OpenAPI document of the API, as this server is configured:
the committed copy, less the nearby search's fields when geo is off."""

from __future__ import annotations

import functools
from pathlib import Path

from ..config import settings

DOC = Path(__file__).resolve().parent.parent / "openapi.json"


@functools.cache
def _without_geo() -> bytes:
    from ..api.openapi import render

    return render(geo=False).encode()


def openapi_route() -> tuple[int, str, bytes]:
    if not DOC.exists():
        return 404, "application/json", b'{"error": "no OpenAPI document"}'
    if not settings().geo:
        return 200, "application/json", _without_geo()
    return 200, "application/json", DOC.read_bytes()
