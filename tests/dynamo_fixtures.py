"""Fixtures for the DynamoDB adapters: moto in-process (``mock_aws``), and a
moto server on 127.0.0.1 for the tests that need real concurrency."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

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


@pytest.fixture(scope="session")
def moto_server_url() -> Iterator[str]:
    from gligabao.local.embedded import start_moto

    server, url = start_moto()
    yield url
    server.stop()


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
