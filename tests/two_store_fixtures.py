"""`server`: the local server's HTTP stack in this process, on a loopback port,
once on DynamoDB (moto) and once on a SQLite file: for the suites that check
one behaviour on both stores. A module sets its extra environment by
overriding `server_env` (which may ask for `server_store`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Client, Harness, configure_env
from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI


@pytest.fixture(params=["dynamodb", "sqlite"])
def server_store(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server_env() -> dict[str, str]:
    """Override in a test module: the server's extra environment."""
    return {}


@pytest.fixture
def server(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server_store: str,
    server_env: dict[str, str],
    fake_anthropic_shared: FakeAnthropic,
    fake_openai_shared: FakeOpenAI,
) -> Iterator[Harness]:
    from gligabao import wiring
    from gligabao.local.embedded import create_tables
    from gligabao.local.server import make_server

    if server_store == "dynamodb":
        prefix = configure_env(monkeypatch, request.getfixturevalue("moto_url"), **server_env)
    else:
        data = str(tmp_path / "gligabao.db")
        prefix = configure_env(monkeypatch, "", GB_LOCAL="1", GB_DATA=data, **server_env)
    wiring.reset()
    if server_store == "dynamodb":
        create_tables()
    else:
        assert wiring.settings().store == "sqlite"
        wiring.database()
    srv = make_server("127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield Harness(
            Client(f"http://127.0.0.1:{srv.server_address[1]}"),
            fake_anthropic_shared,
            fake_openai_shared,
            prefix,
        )
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join()
        wiring.reset()
