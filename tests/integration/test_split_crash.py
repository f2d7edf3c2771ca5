"""A split killed at a write point of the commit protocol (``os._exit`` in
a `gligabao serve` child process, its rows in a standalone moto server): a
reader sees the entity before the split or after it, never between, and the
split goes through once the server is back."""

from __future__ import annotations

import contextlib
import time
import uuid
from typing import Any

import pytest
from remember_helpers import ent, extraction, fact
from test_crash_points import Serve, moto_url, serve_env  # noqa: F401  (the fixture)

from conftest import Reply
from fakes.anthropic_server import FakeAnthropic
from fakes.extraction import links
from fakes.openai_server import FakeOpenAI
from gligabao.dynamodb import admin
from gligabao.graph.dynamodb.store import DynamoGraphStore
from gligabao.models import DatasetKey

KEY = DatasetKey("u1", "main")
SPLIT = {"user_id": "u1", "name": "Hal Haas", "edges": [2], "mentions": [2]}


def _state(prefix: str, url: str) -> dict[str, Any]:
    admin.configure_tables(prefix, url, "us-east-1")
    store = DynamoGraphStore()
    try:
        ents = sorted((e.id, e.name) for e in store.iter_entities(KEY))
        edges = sorted(
            (e.id, e.source_id, e.target_id, e.expired_at is None) for e in store.iter_edges(KEY)
        )
        ds = store.get_dataset(KEY)
        return {
            "entities": ents,
            "edges": edges,
            "links": {i: store.entity_artifacts(KEY, i) for i, _ in ents},
            "counts": (ds.entities, ds.edges, ds.artifacts) if ds else None,
        }
    finally:
        store.close()


def _split_until_done(serve: Serve) -> Reply:
    """200, or 409 with Retry-After while the dead call's leases run out."""
    for _ in range(10):
        r = serve.client.post("/v1/gb/entities/1/split", SPLIT)
        if r.status != 409:
            return r
        time.sleep(int(r.headers["Retry-After"]))
    raise AssertionError("still 409 after the leases ended")


@pytest.mark.parametrize("point", ["intent", "committed"])
def test_a_split_killed_at_a_write_point(
    point: str,
    moto_url: str,  # noqa: F811  (the fixture imported above)
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeOpenAI,
) -> None:
    prefix = f"split{uuid.uuid4().hex[:8]}_"
    env = serve_env(prefix, moto_url, fake_anthropic, fake_openai)
    # The wrong merge: Hal's fact and text filed under Dan (1).
    first = Serve(env)
    fake_anthropic.script(
        "extract",
        extraction(
            [ent("Dan Haas", "person"), ent("Acme Roofing", "organization")],
            [fact("Dan Haas", "Acme Roofing", "works_at")],
        ),
    )
    wrong = extraction(
        [ent("Hal Haas", "person"), ent("Riverside School", "organization")],
        [fact("Hal Haas", "Riverside School", "teaches_at")],
    )
    fake_anthropic.script("extract", links(wrong, {"Hal Haas": "Dan Haas"}))
    for text in ("Dan Haas works at Acme Roofing.", "Hal Haas teaches at Riverside School."):
        r = first.client.post("/v1/gb/remember", {"user_id": "u1", "text": text})
        assert r.status == 200, r.body
    first.stop()
    before = _state(prefix, moto_url)
    assert before["links"] == {1: [1, 2], 2: [1], 3: [2]}

    dying = Serve(env, crash_at=point)
    with contextlib.suppress(OSError):  # the connection dies with the server
        dying.client.post("/v1/gb/entities/1/split", SPLIT)
    dying.proc.wait(timeout=30)
    assert dying.proc.returncode == 137, f"did not die at {point}"
    dying.stop()

    after = {
        "entities": [
            (1, "Dan Haas"),
            (2, "Acme Roofing"),
            (3, "Riverside School"),
            (4, "Hal Haas"),
        ],
        "edges": [(1, 1, 2, True), (2, 1, 3, False), (3, 4, 3, True)],
        "links": {1: [1], 2: [1], 3: [2], 4: [2]},
        "counts": (4, 3, 2),
    }
    crashed = _state(prefix, moto_url)
    assert crashed == (after if point == "committed" else before)

    again = Serve(env)
    r = _split_until_done(again)
    log = again.stop()
    if point == "committed":  # done already: edge 2 is no live fact of Dan's now
        assert r.status == 400 and "superseded" in r.body["error"], (r.body, log[-2000:])
        assert _state(prefix, moto_url) == after
    else:  # the IDs the dead call took are not reused
        assert r.status == 200, (r.body, log[-2000:])
        final = _state(prefix, moto_url)
        new = r.body["entity"]["id"]
        assert r.body["moved"]["edges"] != [3]
        assert (new, "Hal Haas") in final["entities"] and len(final["entities"]) == 4
        assert final["links"][1] == [1] and final["links"][new] == [2]
        assert final["counts"] == (4, 3, 2)
