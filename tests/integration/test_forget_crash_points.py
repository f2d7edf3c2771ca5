"""Fault injection for forget: `gligabao serve` killed (a real ``os._exit``
in a child process, ``GB_TEST_CRASH_AT``) before the forget's transaction
(``forget_planned``), just after it (``forget_committed``) and before its
record is deleted (``untagged``), with its rows in a standalone moto server.
A reader sees the memory before the forget or after it; after a restart the
leftovers are finished and nothing of the forgotten text is found."""

from __future__ import annotations

import contextlib
import os
import time
import uuid

import pytest
from remember_helpers import ent, extraction, fact
from test_crash_points import LEASE_S, Serve, _assert_whole, _state, moto_url

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI

__all__ = ["moto_url"]  # the standalone moto server fixture, shared
POINTS = ["forget_planned", "forget_committed", "untagged"]


@pytest.mark.parametrize("point", POINTS)
def test_a_forget_killed_at_a_write_point_leaves_before_or_after(
    point: str, moto_url: str, fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    prefix = f"fcrash{uuid.uuid4().hex[:8]}_"
    env = {
        **fake_anthropic.env(),
        **fake_openai.env(),
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
    first = Serve(env)
    fake_anthropic.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Acme", "organization")],
            [fact("Alice", "Acme", "works_at")],
        ),
    )
    r = first.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."})
    assert r.status == 200, r.body
    acme = r.body["edges"][0]["id"]
    fake_anthropic.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Globex", "organization")],
            [fact("Alice", "Globex", "works_at")],
        ),
    )
    fake_anthropic.script("invalidate", {"invalidated": [{"edge_id": acme, "by": 0}]})
    r = first.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice moved to Globex."})
    first.stop()
    assert r.status == 200 and r.body["invalidated"], r.body
    moved = r.body["artifact_id"]
    before = _state(prefix, moto_url)
    _assert_whole(before)

    dying = Serve(env, crash_at=point)
    with contextlib.suppress(OSError):
        dying.client.delete(f"/v1/gb/artifacts/{moved}?user_id=u1")
    dying.proc.wait(timeout=30)
    assert dying.proc.returncode == 137, f"did not die at {point}"
    dying.stop()

    after_edges = [("Alice", "works_at", "Acme", True)]
    crashed = _state(prefix, moto_url)
    _assert_whole(crashed)
    if point == "forget_planned":
        assert crashed == before
    else:
        assert [n for n, _ in crashed["entities"]] == ["Acme", "Alice"], crashed
        assert crashed["edges"] == after_edges and crashed["artifacts"] == 1

    # after a restart: a forget not done is done now; one done is 404; the
    # leftovers of a dead one are finished by the next write once its lease ends
    time.sleep(LEASE_S + 0.5)
    again = Serve(env)
    r = again.client.delete(f"/v1/gb/artifacts/{moved}?user_id=u1")
    assert r.status == (200 if point == "forget_planned" else 404), r.body
    fake_anthropic.script("extract", extraction([ent("Bob", "person")], []))
    r = again.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Bob."})
    log = again.stop()
    assert r.status == 200, (r.body, log[-2000:])
    final = _state(prefix, moto_url)
    _assert_whole(final)
    assert [n for n, _ in final["entities"]] == ["Acme", "Alice", "Bob"]
    assert final["edges"] == after_edges
    # nothing of the forgotten text is left in any table
    import boto3

    client = boto3.client("dynamodb", endpoint_url=moto_url, region_name="us-east-1")
    for table in client.list_tables()["TableNames"]:
        if not table.startswith(prefix):
            continue
        raw = str(client.scan(TableName=table)["Items"])
        assert "Globex" not in raw and "globex" not in raw, table
        assert "moved to" not in raw, table
