"""Fixtures for the DynamoDB adapters: moto in-process (``mock_aws``), and a
moto server on 127.0.0.1 for the tests that need real concurrency."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

_prefixes = itertools.count()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture
def dynamo(aws_env: None) -> Iterator[str]:
    """Every table, fresh, in moto's in-process mock; yields the prefix."""
    from moto import mock_aws

    from gligabao.graph import tables

    prefix = f"t{next(_prefixes)}_"
    with mock_aws():
        tables.configure_tables(prefix, "", "us-east-1")
        tables.create_tables()
        yield prefix
    tables.configure_tables("gb_", "", "us-east-1")


class _Serialized:
    """Runs one request at a time, like DynamoDB's per-item atomicity: moto
    checks a condition and writes in two Python steps, so a threaded moto
    could let two conditional puts both pass. Connections stay concurrent."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        with self.lock:
            return list(self.app(environ, start_response))


@pytest.fixture(scope="session")
def moto_server_url() -> Iterator[str]:
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    app = _Serialized(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host!s}:{port}"
    server.shutdown()
    thread.join(timeout=10)


@pytest.fixture
def dynamo_server(aws_env: None, moto_server_url: str) -> Iterator[str]:
    """Every table, fresh, on the moto server (real HTTP, real threads)."""
    from gligabao.graph import tables

    prefix = f"s{next(_prefixes)}_"
    tables.configure_tables(prefix, moto_server_url, "us-east-1")
    tables.create_tables()
    yield prefix
    tables.delete_tables()
    tables.configure_tables("gb_", "", "us-east-1")
