"""The Host header rule of the local server (local/hosts.py)."""

from __future__ import annotations

import pytest

from gligabao.local.hosts import host_allowed, split_host


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("localhost:7878", ("localhost", "7878")),
        ("[::1]:7878", ("::1", "7878")),
        ("[::1]", ("::1", None)),
        ("::1", ("::1", None)),
        ("Example.COM", ("example.com", None)),
        ("[::1", ("[::1", None)),
    ],
)
def test_split_host(header: str, expected: tuple[str, str | None]) -> None:
    assert split_host(header) == expected


@pytest.mark.parametrize(
    "header", ["localhost", "localhost.:80", "127.0.0.1", "127.255.0.3:9", "[::1]:1", "::1"]
)
def test_loopback_is_allowed_without_a_list(header: str) -> None:
    assert host_allowed(header, [])


@pytest.mark.parametrize(
    "header",
    [
        "",
        None,
        "evil.example",
        "127.0.0.1.nip.io",
        "[::2]:80",
        "10.0.0.1",
        "0.0.0.0:7878",
        "[::1",
        ":7878",
    ],
)
def test_other_hosts_are_refused_without_a_list(header: str | None) -> None:
    assert not host_allowed(header, [])


def test_a_listed_host_with_a_port_matches_that_port_only() -> None:
    allowed = ["gb.example:8443", "lan-box"]
    assert host_allowed("gb.example:8443", allowed)
    assert not host_allowed("gb.example:443", allowed)
    assert not host_allowed("gb.example", allowed)
    assert host_allowed("LAN-BOX:7878", allowed) and host_allowed("lan-box", allowed)
