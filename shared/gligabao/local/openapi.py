"""Serves the committed OpenAPI document of the API."""

from __future__ import annotations

from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "openapi.json"


def openapi_route() -> tuple[int, str, bytes]:
    if not DOC.exists():
        return 404, "application/json", b'{"error": "no OpenAPI document"}'
    return 200, "application/json", DOC.read_bytes()
