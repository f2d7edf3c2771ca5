"""The embedded default: moto's DynamoDB on a loopback port, in-process."""

from __future__ import annotations

import os
import socket
from typing import Any


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def start_moto() -> tuple[Any, str]:
    """Start moto's server on a free loopback port; returns (server, url)."""
    from moto.server import ThreadedMotoServer

    # moto wants credentials and a region; none of them leave this process.
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    return server, f"http://127.0.0.1:{port}"


def create_tables() -> None:
    from .. import wiring
    from ..graph.tables import create_tables as create

    wiring.tables_configured()
    create()
