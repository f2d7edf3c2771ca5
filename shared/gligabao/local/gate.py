"""The local server's refusals before anything runs: the Host (DNS
rebinding), what h11 lets through of the framing, the announced size, the
media type of a write, and the origin of a browser's request.

A web page can send a ``POST`` with ``Content-Type: text/plain`` (or a form's
types) to any origin without a CORS preflight; the API takes JSON only, so a
write that does not say JSON is refused (415) before it runs, and a write
whose ``Origin`` is neither this server's nor one of ``GB_ALLOWED_ORIGINS`` is
refused (403) even when its type would pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from ..config import settings
from .hosts import host_allowed, is_loopback

# MCP's streamable HTTP posts JSON too; its clients may name their charset.
JSON_TYPES = ("application/json",)
WRITES = ("POST", "DELETE", "PUT", "PATCH")
MAX_HEADER_BYTES = 16 * 1024  # h11's own bound on a head still arriving


class Refused(Exception):
    """An answer given before any handler runs (status, message, headers;
    ``close``: the body was not read, so the connection ends with it)."""

    def __init__(
        self,
        status: int,
        message: str,
        headers: Mapping[str, str] | None = None,
        *,
        close: bool = False,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.headers, self.close = (
            status,
            message,
            dict(headers or {}),
            close,
        )


def check_request(headers: Mapping[str, str], max_body: int) -> None:
    """The Host, then the framing h11 accepts but we do not: a
    ``Transfer-Encoding`` and a ``Content-Length`` together (h11 frames by
    the chunks and ignores the length, a proxy in front might not: refused),
    and a length announced past the limit (before any byte is read)."""
    if not host_allowed(headers.get("host")):
        raise Refused(
            421,
            "this server answers only requests for a loopback host or one "
            "listed in GB_ALLOWED_HOSTS",
            close=True,
        )
    if sum(len(k) + len(v) for k, v in headers.items()) > MAX_HEADER_BYTES:
        # h11 holds an incomplete head to this size; one that came whole is checked here
        raise Refused(431, f"the request headers are larger than {MAX_HEADER_BYTES // 1024} KiB")
    length = headers.get("content-length")
    if length is not None and "transfer-encoding" in headers:
        raise Refused(
            400, "a request may not carry both Transfer-Encoding and Content-Length", close=True
        )
    # h11 has checked it is digits, and that repeated ones agree (joined: "5,5").
    if length is not None and int(length.split(",")[0]) > max_body:
        raise Refused(413, f"the request body is larger than {max_body // 1024} KiB", close=True)


def has_body(headers: Mapping[str, str]) -> bool:
    return "transfer-encoding" in headers or headers.get("content-length", "0") not in ("", "0")


def write_type_ok(method: str, path: str, headers: Mapping[str, str]) -> None:
    """A POST (and a DELETE with a body) says it is JSON, 415 otherwise: the
    types a web page may send without a preflight never reach a handler. (A
    DELETE without a body needs no type: no web page can send one to another
    origin without a preflight, which this server does not answer.)"""
    if method == "DELETE" and not has_body(headers):
        return
    media = (headers.get("content-type") or "").split(";")[0].strip().lower()
    if media not in JSON_TYPES:
        raise Refused(
            415,
            f"a {'POST to /mcp' if path == '/mcp' else 'write'} must be sent as "
            f"Content-Type: application/json (got {media or 'none'})",
            {"Accept-Post": "application/json"},
            close=True,
        )


def allowed_origins() -> list[str]:
    raw = settings().allowed_origins
    return [o.strip().rstrip("/").lower() for o in raw.split(",") if o.strip()]


def check_origin(method: str, headers: Mapping[str, str], scheme: str) -> None:
    """A browser's request (it has an ``Origin``) to the open server (no
    ``GB_DEV_API_KEY``; with one, the key decides): only a page served from
    this machine may call at all (a page elsewhere, or a DNS rebinding,
    cannot), and only this server's own page or an origin of
    ``GB_ALLOWED_ORIGINS`` may write (a dev server on another loopback port
    cannot)."""
    origin = headers.get("origin")
    if not origin:
        return  # not a browser: the key (if any) decides
    if settings().dev_api_key:
        return  # the key decides: a page cannot send it to another origin without CORS
    origin = origin.strip().rstrip("/").lower()
    listed = origin in allowed_origins()
    if not listed and not is_loopback(urlsplit(origin).hostname or ""):
        raise Refused(403, "requests from a web page of another origin are refused")
    own = f"{scheme}://{headers.get('host', '').strip().lower()}"
    if method in WRITES and origin != own and not listed:
        raise Refused(
            403,
            f"writes from a web page of another origin ({origin}) are refused: only this "
            "server's own page, or an origin in GB_ALLOWED_ORIGINS, may write",
            close=True,
        )
