"""A correction (``PATCH /v1/gb/edges/{id}``) killed at each write point of
the commit protocol (``os._exit`` in a `gligabao serve` child process, its
rows in a standalone moto server): a reader sees the fact before the
correction or after it, never between, and the correction goes through once
the server is back. Forgetting the correction, killed at the forget's two
points, leaves the correction or the old fact, never neither."""

from __future__ import annotations

import contextlib
import time
import uuid
from typing import Any

import pytest
from remember_helpers import ent, extraction, fact
from test_crash_points import POINTS, Serve, moto_url, serve_env  # noqa: F401  (the fixture)

from conftest import Reply
from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from gligabao.dynamodb import admin
from gligabao.graph.dynamodb.store import DynamoGraphStore
from gligabao.models import DatasetKey

KEY = DatasetKey("u1", "main")
FIX = {"user_id": "u1", "target": "Lyon", "reason": "she moved"}


def _state(prefix: str, url: str) -> dict[str, Any]:
    admin.configure_tables(prefix, url, "us-east-1")
    store = DynamoGraphStore()
    try:
        edges = sorted(
            (e.id, e.source_id, e.target_id, e.expired_at is None) for e in store.iter_edges(KEY)
        )
        ds = store.get_dataset(KEY)
        fixes = store.corrections(KEY, [e[0] for e in edges])
        return {
            "edges": edges,
            "corrections": sorted((c.edge_id, c.replaces, c.reason) for c in fixes.values()),
            "history": {e[0]: store.edge_changes(KEY, e[0])[1] != [] for e in edges},
            "counts": (ds.entities, ds.edges, ds.artifacts) if ds else None,
        }
    finally:
        store.close()


def _until_done(serve: Serve, method: str, path: str, body: Any = None) -> Reply:
    """Not 409, waiting out a dead call's leases."""
    for _ in range(10):
        r = serve.client.request(method, path, body)
        if r.status != 409:
            return r
        time.sleep(int(r.headers["Retry-After"]))
    raise AssertionError("still 409 after the leases ended")


def _memory(env: dict[str, str], llm: FakeAnthropic) -> None:
    first = Serve(env)
    llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Paris", "place")],
            [fact("Alice", "Paris", "lives_in")],
        ),
    )
    llm.script("extract", extraction([ent("Lyon", "place")]))
    for text in ("Alice lives in Paris.", "Lyon is a city."):
        r = first.client.post("/v1/gb/remember", {"user_id": "u1", "text": text})
        assert r.status == 200, r.body
    first.stop()


def _kill(env: dict[str, str], point: str, method: str, path: str, body: Any = None) -> None:
    dying = Serve(env, crash_at=point)
    with contextlib.suppress(OSError):  # the connection dies with the server
        dying.client.request(method, path, body)
    dying.proc.wait(timeout=30)
    assert dying.proc.returncode == 137, f"did not die at {point}"
    dying.stop()


BEFORE = {
    "edges": [(1, 1, 2, True)],
    "corrections": [],
    "history": {1: False},
    "counts": (3, 1, 2),
}
AFTER = {
    "edges": [(1, 1, 2, False), (2, 1, 3, True)],
    "corrections": [(2, 1, "she moved")],
    "history": {1: True, 2: False},
    "counts": (3, 2, 2),
}


@pytest.mark.parametrize("point", POINTS)
def test_a_correction_killed_at_a_write_point(
    point: str,
    moto_url: str,  # noqa: F811  (the fixture imported above)
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeOpenAI,
) -> None:
    prefix = f"fix{uuid.uuid4().hex[:8]}_"
    env = serve_env(prefix, moto_url, fake_anthropic, fake_openai)
    _memory(env, fake_anthropic)
    assert _state(prefix, moto_url) == BEFORE

    _kill(env, point, "PATCH", "/v1/gb/edges/1", FIX)
    committed = point in ("committed", "untagged")
    crashed = _state(prefix, moto_url)
    # (the history rows are written after the commit point: the roll-forward,
    # by the dataset's next commit, writes them if the call died before)
    want = AFTER if committed else BEFORE
    assert {**crashed, "history": None} == {**want, "history": None}

    again = Serve(env)
    r = _until_done(again, "PATCH", "/v1/gb/edges/1", FIX)
    log = again.stop()
    if committed:  # done already: edge 1 is superseded now
        assert r.status == 400 and "superseded" in r.body["error"], (r.body, log[-2000:])
        assert {**_state(prefix, moto_url), "history": None} == {**AFTER, "history": None}
    else:  # the ID the dead call took is not reused
        assert r.status == 200, (r.body, log[-2000:])
        new = r.body["edge"]["id"]
        assert new != 2
        final = _state(prefix, moto_url)
        assert final["edges"] == [(1, 1, 2, False), (new, 1, 3, True)]
        assert final["corrections"] == [(new, 1, "she moved")]
        assert final["counts"] == (3, 2, 2)
        assert final["history"] == {1: True, new: False}


@pytest.mark.parametrize("point", ["forget_planned", "forget_committed"])
def test_forgetting_a_correction_killed_at_a_write_point(
    point: str,
    moto_url: str,  # noqa: F811
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeOpenAI,
) -> None:
    prefix = f"unfix{uuid.uuid4().hex[:8]}_"
    env = serve_env(prefix, moto_url, fake_anthropic, fake_openai)
    _memory(env, fake_anthropic)
    fixer = Serve(env)
    assert fixer.client.request("PATCH", "/v1/gb/edges/1", FIX).status == 200
    fixer.stop()
    assert _state(prefix, moto_url) == AFTER

    _kill(env, point, "DELETE", "/v1/gb/edges/2?user_id=u1")
    crashed = _state(prefix, moto_url)
    restored = {**BEFORE}
    if point == "forget_committed":
        # visible at once; the history rows go with the next commit's recovery
        assert (crashed["edges"], crashed["counts"]) == (BEFORE["edges"], BEFORE["counts"])
    else:
        assert crashed == AFTER
    again = Serve(env)
    r = _until_done(again, "DELETE", "/v1/gb/edges/2?user_id=u1")
    log = again.stop()
    assert r.status == (404 if point == "forget_committed" else 200), (r.body, log[-2000:])
    final = _state(prefix, moto_url)
    assert (final["edges"], final["counts"]) == (restored["edges"], restored["counts"])
