"""Fixtures for the DynamoDB adapters: moto in-process (``mock_aws``), a moto
server on 127.0.0.1 for the tests that need real concurrency, and a moto server
in a process of its own (as `sam local` and `gligabao dev-services` use it)."""

from __future__ import annotations

import itertools
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
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
def dynamo(dynamo_mock: str) -> str:
    """Every table, fresh; yields the prefix. The adapters' own suites override
    it to run twice: on the mock and on the moto server of another process."""
    return dynamo_mock


@pytest.fixture(params=["moto-mock", "moto-process"])
def dynamo_both(request: pytest.FixtureRequest) -> str:
    """Every table, fresh, once in moto's mock and once on a moto server in
    another process (where this process cannot tell that moto answers, as
    under `sam local`)."""
    return str(
        request.getfixturevalue("dynamo_mock" if request.param == "moto-mock" else "dynamo_process")
    )


def dynamodb_client() -> Any:
    """A boto3 client on the endpoint the tables are configured on."""
    import boto3

    from gligabao.dynamodb import tables

    return boto3.client(
        "dynamodb", region_name="us-east-1", endpoint_url=tables.EntityRow.Meta.host
    )


@pytest.fixture
def dynamo_mock(aws_env: None) -> Iterator[str]:
    """Every table, fresh, in moto's in-process mock; yields the prefix."""
    from moto import mock_aws
    from moto_tables import tables_as_configured

    from gligabao.dynamodb import admin

    prefix = f"t{next(_prefixes)}_"
    with mock_aws():
        admin.configure_tables(prefix, "", "us-east-1")
        tables_as_configured("mock")
        yield prefix
    admin.configure_tables("gb_", "", "us-east-1")


@pytest.fixture(scope="session")
def moto_server_url() -> Iterator[str]:
    from gligabao.local.embedded import start_moto

    server, url = start_moto()
    yield url
    server.stop()


@pytest.fixture(scope="session")
def moto_process_url() -> Iterator[str]:
    """moto's server in a child process (`python -m gligabao.local.embedded`)."""
    from gligabao.local.embedded import free_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gligabao.local.embedded", "127.0.0.1", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail("the moto server process did not start")
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def dynamo_process(aws_env: None, moto_process_url: str) -> Iterator[str]:
    """Every table, fresh, on the moto server of another process."""
    yield from _tables_on(moto_process_url)


@pytest.fixture
def dynamo_server(aws_env: None, moto_server_url: str) -> Iterator[str]:
    """Every table, fresh, on the moto server (real HTTP, real threads)."""
    yield from _tables_on(moto_server_url, in_process=True)


def _tables_on(url: str, in_process: bool = False) -> Iterator[str]:
    """``in_process``: the server is this process's (its tables are copied
    after the first, tests/moto_tables.py)."""
    from moto_tables import tables_as_configured

    from gligabao.dynamodb import admin

    prefix = f"s{next(_prefixes)}_"
    admin.configure_tables(prefix, url, "us-east-1")
    if in_process:
        tables_as_configured(url)
    else:
        admin.create_tables()
    yield prefix
    admin.delete_tables()
    admin.configure_tables("gb_", "", "us-east-1")


@pytest.fixture(scope="session")
def dynamo_vectors_fake(moto_server_url: str) -> Iterator[Any]:
    """DynamoDB with vector indexes (tests/fakes/dynamodb_vectors.py) in front
    of the session's moto server; no replication lag unless a test sets one."""
    from fakes.dynamodb_vectors import FakeDynamoVectors

    with FakeDynamoVectors(moto_server_url) as fake:
        yield fake


def vector_tables_on(fake: Any, dimension: int) -> Iterator[str]:
    """Every table, fresh, on the vector fake, with the vector indexes."""
    from gligabao.dynamodb import admin as table_admin

    fake.lag_s = 0.0
    prefix = f"v{next(_prefixes)}_"
    table_admin.configure_tables(prefix, fake.url, "us-east-1")
    table_admin.create_tables()
    table_admin.create_vector_indexes(dimension)
    yield prefix
    table_admin.delete_tables()
    table_admin.configure_tables("gb_", "", "us-east-1")


def dynamo_vector_index(dimension: int, **kw: Any) -> Any:
    """The DynamoDB vector index on the tables as configured."""
    from gligabao.dynamodb import tables
    from gligabao.vectors.dynamodb.index import DynamoVectorIndex

    names = {m.short_name: m.Meta.table_name for m in tables.ALL_MODELS}  # type: ignore[attr-defined]
    client = tables.EntityRow._get_connection().connection.client
    return DynamoVectorIndex(client, names, dimension, **kw)
