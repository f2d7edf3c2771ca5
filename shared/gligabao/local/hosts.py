"""Which ``Host`` the local server answers (DNS rebinding).

A web page whose domain an attacker rebinds to 127.0.0.1 talks to the local
server from its own origin: its requests are same-origin, carry no ``Origin``
header, and pass the Origin check. Their ``Host`` still names the attacker's
domain, which is what this check refuses. Loopback names and addresses cannot
be rebound; other names are answered only when ``GB_ALLOWED_HOSTS`` lists them
(a server behind a proxy, or bound to a LAN address with ``GB_DEV_API_KEY``).
"""

from __future__ import annotations

import ipaddress


def split_host(header: str) -> tuple[str, str | None]:
    """(name, port) of a Host header: ``[::1]:7878`` -> (``::1``, ``7878``)."""
    value = header.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, None
        rest = value[end + 1 :]
        return value[1:end], rest[1:] if rest.startswith(":") else None
    if value.count(":") == 1:
        name, port = value.split(":")
        return name, port
    return value, None  # a bare name, or an unbracketed IPv6 literal


def is_loopback(name: str) -> bool:
    name = name.rstrip(".")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def allowed_hosts() -> list[str]:
    from ..config import settings

    raw = settings().allowed_hosts
    return [h.strip().lower() for h in raw.split(",") if h.strip()]


def host_allowed(header: str | None, allowed: list[str] | None = None) -> bool:
    """Whether a request with this Host header may be answered. An entry of
    ``GB_ALLOWED_HOSTS`` with a port matches that port only; without one, any
    port."""
    if not header:
        return False
    name, port = split_host(header)
    if not name or is_loopback(name):
        return bool(name)
    for entry in allowed_hosts() if allowed is None else allowed:
        e_name, e_port = split_host(entry)
        if e_name == name and (e_port is None or e_port == port):
            return True
    return False
