"""The web page of the local server: static files under ``static/``, served
at ``/ui/`` by ``gligabao serve`` (never by the Lambda functions: the core
layer's build leaves this folder out). The page talks only to the public HTTP
API, so the same files work against a deployed stack."""

from __future__ import annotations

from pathlib import Path

PREFIX = "/ui/"
STATIC = Path(__file__).resolve().parent / "static"
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
    ".md": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
}
# The page fetches the API at the base URL its settings name (this server by
# default, a deployed stack otherwise): connect-src stays open, nothing else.
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; connect-src 'self' http: https:; img-src 'self' data: blob:; "
        "style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def static_file(path: str) -> tuple[int, dict[str, str], bytes] | None:
    """The response to ``GET path`` for a path under ``/ui``: a file or a
    redirect from ``/ui`` to ``/ui/``; None when there is no such file (also
    for anything that would leave the folder)."""
    if path == PREFIX.rstrip("/"):
        return 308, {"Location": PREFIX}, b""
    rel = path[len(PREFIX) :] or "index.html"
    target = (STATIC / rel).resolve()
    if (
        not target.is_relative_to(STATIC)
        or not target.is_file()
        or target.suffix not in TYPES
        or any(part.startswith(".") for part in target.relative_to(STATIC).parts)
    ):
        return None
    return 200, {"Content-Type": TYPES[target.suffix], **HEADERS}, target.read_bytes()
