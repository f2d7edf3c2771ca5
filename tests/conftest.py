"""Shared fixtures: moto's DynamoDB on loopback, the fake Anthropic and OpenAI
servers, `gb`, the handlers called in this process with API Gateway events
over a fresh set of tables, and `gb_http`, the same over the local server's
real HTTP stack on a loopback port."""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI

pytest_plugins = [
    "fakes.fixtures",
    "dynamo_fixtures",
    "opensearch_node",
    "served_fixtures",
    "two_store_fixtures",
    "scheduling",
]

EMBED_DIM = 64
# Entity summaries are a background job with LLM calls of their own: off in
# every test (and every server a test starts) unless the test turns them on
# (tests/integration/test_summaries.py), so that the suites that count a
# call's LLM requests and inference rows count only the call's.
os.environ.setdefault("GB_SUMMARIES", "off")


# moto's credentials and region for the whole run, as start_moto sets them: a session
# fixture first built inside one test would otherwise lose them when that test's
# environment is restored (below), and the next test's SDK finds no credentials.
for _name, _value in (
    ("AWS_ACCESS_KEY_ID", "local"),
    ("AWS_SECRET_ACCESS_KEY", "local"),
    ("AWS_DEFAULT_REGION", "us-east-1"),
):
    os.environ.setdefault(_name, _value)


@pytest.fixture(autouse=True)
def _environ_restored() -> Iterator[None]:
    """Whatever a test, or the code it runs, leaves in os.environ is undone
    (the CLI's main sets GB_LOCAL and GB_DATA, the secrets loader the API
    keys): under pytest-xdist a worker runs tests in an order of its own."""
    saved = dict(os.environ)
    yield
    if os.environ != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    from gligabao.local.embedded import start_moto

    server, url = start_moto()
    yield url
    server.stop()


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str]

    @property
    def call_id(self) -> str:
        return self.headers.get("X-Gb-Call-Id") or self.headers.get("x-gb-call-id", "")


class Client:
    """HTTP against the server under test, JSON in and out."""

    def __init__(self, base: str) -> None:
        self.base = base

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                status, payload, hdrs = resp.status, resp.read(), dict(resp.headers.items())
        except urllib.error.HTTPError as err:
            status, payload, hdrs = err.code, err.read(), dict(err.headers.items())
        parsed = json.loads(payload) if payload else None
        return Reply(status, parsed, hdrs)

    def post(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return self.request("POST", path, body, **kw)

    def get(self, path: str, **kw: Any) -> Reply:
        return self.request("GET", path, **kw)

    def delete(self, path: str, **kw: Any) -> Reply:
        return self.request("DELETE", path, **kw)


@dataclass
class Harness:
    client: Client
    llm: FakeAnthropic
    emb: FakeOpenAI
    prefix: str

    def remember(self, text: str, *, user: str = "u1", status: int = 200, **extra: Any) -> Any:
        r = self.client.post("/v1/gb/remember", {"user_id": user, "text": text, **extra})
        assert r.status == status, r.body
        return r.body

    def query(self, question: str, *, user: str = "u1", status: int = 200, **extra: Any) -> Any:
        r = self.client.post("/v1/gb/query", {"user_id": user, "query": question, **extra})
        assert r.status == status, r.body
        return r.body

    @property
    def graph(self) -> Any:
        from gligabao import wiring

        return wiring.graph_store()

    @property
    def vectors(self) -> Any:
        from gligabao import wiring

        return wiring.vector_index()

    def scan(self, short: str) -> list[dict[str, Any]]:
        """Every item of one table (to prove what is, or is not, stored)."""
        from gligabao.config import settings

        cfg = settings()
        client = _scan_client(cfg.dynamodb_endpoint, cfg.region)
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"TableName": cfg.table(short)}
        while True:
            page = client.scan(**kwargs)
            items.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return items
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def row_counts(self) -> dict[str, int]:
        from gligabao.dynamodb.tables import ALL_MODELS, short_name

        return {short_name(m): len(self.scan(short_name(m))) for m in ALL_MODELS}


_scan_clients: dict[tuple[str | None, str], Any] = {}


def _scan_client(endpoint: str | None, region: str) -> Any:
    """One boto3 client per endpoint for `Harness.scan`: a new one per call
    was ~0.1 s of CPU, 20 of them a test that counts rows before and after."""
    client = _scan_clients.get((endpoint, region))
    if client is None:
        import boto3

        client = boto3.client("dynamodb", endpoint_url=endpoint or None, region_name=region)
        _scan_clients[(endpoint, region)] = client
    return client


def configure_env(monkeypatch: pytest.MonkeyPatch, moto_url: str, **extra: str) -> str:
    prefix = f"t{uuid.uuid4().hex[:10]}_"
    env = {
        "GB_DYNAMODB_ENDPOINT": moto_url,
        "GB_TABLE_PREFIX": prefix,
        "ANTHROPIC_API_KEY": "test-anthropic-key",
        "OPENAI_API_KEY": "test-openai-key",
        "GB_EMBEDDING_DIMENSION": str(EMBED_DIM),
        "GB_LLM_MAX_RETRIES": "0",
        "POWERTOOLS_METRICS_NAMESPACE": "gligabao-test",
        **extra,
    }
    for k, v in env.items():
        if v == "":
            monkeypatch.delenv(k, raising=False)
        else:
            monkeypatch.setenv(k, v)
    return prefix


@pytest.fixture
def gb_env() -> dict[str, str]:
    """Override in a test module to change the server's environment."""
    return {}


@pytest.fixture
def gb_store() -> str:
    """Override in a test module (parametrized) to run it on another vector
    store: "memory" (in-process, the default beside moto) or "dynamodb" (the
    vectors on the rows, DynamoDB's vector indexes: the vector fake)."""
    return "memory"


def _harness(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    moto_url: str,
    gb_env: dict[str, str],
    gb_store: str,
) -> tuple[str, str]:
    """The environment and fresh tables of one `gb`; returns (prefix, endpoint)."""
    from moto_tables import drop_tables, fresh_tables

    from gligabao import wiring

    endpoint, extra, fake = "", dict(gb_env), None
    if gb_store == "dynamodb":
        fake = request.getfixturevalue("dynamo_vectors_fake")
        fake.lag_s = 0.0
        endpoint, extra["GB_VECTOR_STORE"] = fake.url, "dynamodb"
    else:
        _moto_in_process(request, monkeypatch)
    prefix = configure_env(monkeypatch, endpoint, **extra)
    wiring.reset()
    # moto answers in this process: directly, or behind the vector fake
    fresh_tables(endpoint, in_process=True, fake=fake)
    request.addfinalizer(lambda: drop_tables(prefix))
    return prefix, endpoint


def _moto_in_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """DynamoDB's default endpoint answered by moto in this process, no HTTP
    (moto's ``mock_aws``), for one test: half the CPU of a call through moto's
    server on loopback (bench/moto_calls.py). The backends are the ones the
    session's moto server serves (``moto_url``), neither reset on start nor
    emptied on stop: a child process given ``moto_url`` sees the same tables.
    One request at a time, under the lock the server takes (moto checks a
    condition and writes in two steps; DynamoDB is atomic per item)."""
    from moto import mock_aws
    from moto.core.models import botocore_stubber

    from gligabao.local.embedded import BACKENDS_LOCK

    unlocked = type(botocore_stubber).process_request

    def serialized(req: Any) -> Any:
        with BACKENDS_LOCK:
            return unlocked(botocore_stubber, req)

    monkeypatch.setattr(botocore_stubber, "process_request", serialized)
    mock = mock_aws()
    mock.start(reset=False)
    request.addfinalizer(lambda: mock.stop(remove_data=False))


@pytest.fixture
def gb(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    moto_url: str,
    fake_anthropic_shared: FakeAnthropic,
    fake_openai_shared: FakeOpenAI,
    gb_env: dict[str, str],
    gb_store: str,
) -> Iterator[Harness]:
    """The handlers in this process, called with API Gateway events (no
    socket): for the suites whose subject is what the API answers."""
    from inprocess import InProcessClient

    from gligabao import wiring

    prefix, _ = _harness(request, monkeypatch, moto_url, gb_env, gb_store)
    try:
        yield Harness(InProcessClient(), fake_anthropic_shared, fake_openai_shared, prefix)
    finally:
        wiring.reset()


@pytest.fixture
def gb_http(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    moto_url: str,
    fake_anthropic_shared: FakeAnthropic,
    fake_openai_shared: FakeOpenAI,
    gb_env: dict[str, str],
    gb_store: str,
) -> Iterator[Harness]:
    """`gb` over the local server's real HTTP stack on a loopback port, in
    this process: for the suites whose subject is the server (Host and
    Origin checks, its own pages, real HTTP clients)."""
    from gligabao import wiring
    from gligabao.local.server import make_server

    prefix, _ = _harness(request, monkeypatch, moto_url, gb_env, gb_store)
    server = make_server("127.0.0.1", 0, quiet=True)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield Harness(
            Client(f"http://127.0.0.1:{server.server_address[1]}"),
            fake_anthropic_shared,
            fake_openai_shared,
            prefix,
        )
    finally:
        server.shutdown()
        server.server_close()
        wiring.reset()
