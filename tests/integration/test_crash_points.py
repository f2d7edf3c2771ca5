"""Fault injection: `gligabao serve` killed at every numbered write point of
the commit protocol (a real ``os._exit`` in a child process, via
``GB_TEST_CRASH_AT``), with its rows in a standalone moto server (a process
of its own, started and stopped by PID here) that outlives it.

For every point: what a reader sees is the memory before the remember or
after it, never between; after a restart, a remember naming the same
entities answers 200 (or 409 with Retry-After until a lease ends, then 200);
no entity is duplicated, no edge points at a missing entity, no fact is
stored twice, and the dataset's counts agree with the visible rows."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import forkserver
import pytest
from remember_helpers import ent, extraction, fact

from conftest import Client, Reply
from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from gligabao.dynamodb import admin
from gligabao.graph.dynamodb.store import DynamoGraphStore
from gligabao.local.embedded import free_port
from gligabao.models import DatasetKey
from gligabao.text import normalize_name

ROOT = Path(__file__).resolve().parents[2]
POINTS = ["claimed", "intent", "rows", "written", "committed", "untagged"]
COMMITTED_AT = {"committed", "untagged"}  # the points after the commit point
LEASE_S = 3
KEY = DatasetKey("u1", "main")


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    """A standalone moto server: its own process, so rows outlive `serve`."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/moto-api/", timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    yield url
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(timeout=10)


class Serve:
    """`gligabao serve` in a child process, on the standalone moto server."""

    def __init__(self, env: dict[str, str], crash_at: str | None = None) -> None:
        self.port = free_port()
        full = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GB_", "ANTHROPIC_", "OPENAI_"))
        }
        full.update(env)
        full["PYTHONPATH"] = str(ROOT / "shared")
        if crash_at:
            full["GB_TEST_CRASH_AT"] = crash_at
        # a real process, forked from one that imported gligabao and the SDKs
        # once (tests/forkserver.py): `python -m gligabao.local.cli serve`
        self.proc = forkserver.spawn(
            "gligabao.local.cli", ["serve", "--port", str(self.port)], full, ROOT
        )
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line or "listening on" in line:
                break
        self.client = Client(f"http://127.0.0.1:{self.port}")

    def stop(self) -> str:
        """Stop it (by PID); its log, for a failure's message."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=30)
        return out or ""


def serve_env(prefix: str, moto_url: str, llm: FakeAnthropic, emb: FakeOpenAI) -> dict[str, str]:
    """The environment of a `serve` child on the standalone moto server,
    with short leases (this process's AWS settings too, for the reads)."""
    env = {
        **llm.env(),
        **emb.env(),
        "GB_EMBEDDING_DIMENSION": "64",
        "GB_DYNAMODB_ENDPOINT": moto_url,
        "GB_TABLE_PREFIX": prefix,
        "GB_LEASE_SECONDS": str(LEASE_S),
        "GB_LEASE_WAIT_SECONDS": "1",
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"):
        os.environ.setdefault(k, env[k])
    return env


def _remember(serve: Serve, text: str) -> Reply:
    return serve.client.post("/v1/gb/remember", {"user_id": "u1", "text": text})


def _remember_until_done(serve: Serve, text: str) -> Reply:
    """200, or 409 with Retry-After while a dead call's lease runs out."""
    for _ in range(10):
        r = _remember(serve, text)
        if r.status != 409:
            return r
        wait = int(r.headers["Retry-After"])
        assert 1 <= wait <= LEASE_S + 1, r.headers
        time.sleep(wait)
    raise AssertionError("still 409 after the leases ended")


def _state(prefix: str, url: str, vectors: bool = False) -> dict[str, Any]:
    """What a reader sees, through the adapter's own reads. ``vectors``
    (VectorStore=dynamodb): also that every visible row has its vector."""
    admin.configure_tables(prefix, url, "us-east-1")
    store = DynamoGraphStore()
    try:
        ents = {e.id: e for e in store.iter_entities(KEY)}
        edges = list(store.iter_edges(KEY))
        arts = list(store.iter_artifacts(KEY))
        ds = store.get_dataset(KEY)
        names = store.entity_ids_by_names(KEY, [normalize_name(e.name) for e in ents.values()])
    finally:
        store.close()
    if vectors:
        from gligabao.dynamodb.tables import EdgeRow, EntityRow

        for model, ids in ((EntityRow, list(ents)), (EdgeRow, [e.id for e in edges])):
            rows = list(model.batch_get([(KEY.pk, i) for i in ids])) if ids else []
            assert all(r.vec is not None and len(r.vec) == 64 for r in rows), model
    return {
        "entities": sorted((e.name, e.description) for e in ents.values()),
        "edges": sorted(
            (
                ents[e.source_id].name if e.source_id in ents else f"?{e.source_id}",
                e.relation,
                ents[e.target_id].name if e.target_id in ents else f"?{e.target_id}",
                e.expired_at is None,
            )
            for e in edges
        ),
        "artifacts": len(arts),
        "counts": (ds.entities, ds.edges, ds.artifacts) if ds else None,
        "ids": sorted(ents),
        "names": names,
    }


def _assert_whole(state: dict[str, Any]) -> None:
    names = [n for n, _ in state["entities"]]
    assert len(names) == len({normalize_name(n) for n in names}), state  # no duplicate
    assert not [e for e in state["edges"] if e[0].startswith("?") or e[2].startswith("?")], state
    open_facts = [e[:3] for e in state["edges"] if e[3]]
    assert len(open_facts) == len(set(open_facts)), state  # no fact twice
    assert state["counts"] == (len(state["entities"]), len(state["edges"]), state["artifacts"])
    # every visible entity is the owner of its name
    assert sorted(state["names"].values()) == state["ids"], state


@pytest.fixture(scope="module")
def vectors_url(moto_url: str) -> Iterator[str]:
    """DynamoDB with vector indexes (the fake, in this process) in front of
    the standalone moto: VectorStore=dynamodb."""
    from fakes.dynamodb_vectors import FakeDynamoVectors

    with FakeDynamoVectors(moto_url) as fake:
        yield fake.url


@pytest.mark.parametrize("store", ["memory", "dynamodb"])
@pytest.mark.parametrize("point", POINTS)
def test_a_remember_killed_at_a_write_point_leaves_the_memory_whole(
    point: str,
    store: str,
    request: pytest.FixtureRequest,
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeOpenAI,
) -> None:
    prefix = f"crash{uuid.uuid4().hex[:8]}_"
    vectors = store == "dynamodb"
    moto_url = request.getfixturevalue("vectors_url" if vectors else "moto_url")
    env = serve_env(prefix, moto_url, fake_anthropic, fake_openai)
    env["GB_VECTOR_STORE"] = "dynamodb" if vectors else ""
    # 1. the memory before: Alice works at Acme
    first = Serve(env)
    fake_anthropic.script(
        "extract",
        extraction(
            [ent("Alice", "person", "an engineer"), ent("Acme", "organization")],
            [fact("Alice", "Acme", "works_at")],
        ),
    )
    r = _remember(first, "Alice works at Acme.")
    first.stop()
    assert r.status == 200, r.body
    before = _state(prefix, moto_url, vectors)
    _assert_whole(before)

    # 2. a remember naming Alice (enriched), Acme (restated) and a new Bob,
    # killed at the write point
    second_text = "Alice met Bob at Acme, where she still works."
    second = extraction(
        [
            ent("Alice", "person", "met Bob"),
            ent("Bob", "person", "a designer"),
            ent("Acme", "organization"),
        ],
        [fact("Alice", "Bob", "met"), fact("Alice", "Acme", "works_at")],
    )
    fake_anthropic.default("extract", second)
    dying = Serve(env, crash_at=point)
    with contextlib.suppress(OSError):  # the connection dies with the server
        _remember(dying, second_text)
    dying.proc.wait(timeout=30)
    assert dying.proc.returncode == 137, f"did not die at {point}"
    dying.stop()

    # 3. a reader sees the memory before or after, never between
    crashed = _state(prefix, moto_url, vectors)
    _assert_whole(crashed)
    if point in COMMITTED_AT:
        assert crashed["entities"] == [
            ("Acme", ""),
            ("Alice", "an engineer; met Bob"),
            ("Bob", "a designer"),
        ], crashed
        assert crashed["edges"] == [
            ("Alice", "met", "Bob", True),
            ("Alice", "works_at", "Acme", True),
        ]
        assert crashed["artifacts"] == 2
    else:
        assert crashed == before

    # 4. after a restart, the same entities again: 200 (after 409s at most)
    again = Serve(env)
    r = _remember_until_done(again, second_text)
    log = again.stop()
    assert r.status == 200, (r.body, log[-3000:])
    assert sorted(e["name"] for e in r.body["entities"]) == ["Acme", "Alice", "Bob"]
    after = _state(prefix, moto_url, vectors)
    _assert_whole(after)
    assert [n for n, _ in after["entities"]] == ["Acme", "Alice", "Bob"]
    assert after["edges"] == [
        ("Alice", "met", "Bob", True),
        ("Alice", "works_at", "Acme", True),
    ]
    assert dict(after["entities"])["Alice"] == "an engineer; met Bob"
