"""Fault injection for the erase of a user: `gligabao serve` killed (a real
``os._exit`` in a child process, ``GB_TEST_CRASH_AT``) just after the erase
is marked (``erase_begun``), after its first dataset (``erase_dataset``) and
after the records went (``erase_records``), on DynamoDB (a standalone moto
server) and on the SQLite file. The next start finishes it under the same
call ID: its record says ok with the counts, and no table holds the user."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import tempfile
import uuid
from pathlib import Path

import boto3
import pytest
from erase_helpers import traces
from remember_helpers import ent, extraction, fact
from test_crash_points import Serve, moto_url, serve_env

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from gligabao.oneway import ERASING

__all__ = ["moto_url"]  # the standalone moto server fixture, shared
USER = "erin-crash"
CASES = [
    ("dynamodb", "erase_begun"),
    ("dynamodb", "erase_dataset"),
    ("dynamodb", "erase_records"),
    ("sqlite", "erase_dataset"),
]


def _dump(store: str, prefix: str, url: str, data: str) -> str:
    """Every row of every table, as text."""
    if store == "sqlite":
        with sqlite3.connect(data) as conn:
            names = [
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
            # (the full-text segments: merged on a clean stop, checked by the bytes test)
            return repr(
                [
                    conn.execute(f'SELECT * FROM "{n}"').fetchall()
                    for n in names
                    if n not in ("passage_words_data", "passage_words_idx")
                ]
            )
    client = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1")
    return json.dumps(
        [
            client.scan(TableName=t)["Items"]
            for t in client.list_tables()["TableNames"]
            if t.startswith(prefix)
        ]
    )


def _mark(store: str, prefix: str, url: str, data: str) -> str | None:
    """The call ID of the erase left marked, if any."""
    if store == "sqlite":
        with sqlite3.connect(data) as conn:
            row = conn.execute("SELECT call_id FROM erasures WHERE user_id = ?", (USER,)).fetchone()
            return row[0] if row else None
    client = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1")
    item = client.get_item(
        TableName=f"{prefix}datasets", Key={"user_id": {"S": ERASING}, "name": {"S": USER}}
    ).get("Item")
    return item["call_id"]["S"] if item else None


@pytest.mark.parametrize(("store", "point"), CASES)
def test_an_erase_killed_midway_is_finished_by_the_next_start(
    store: str, point: str, moto_url: str, fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    prefix = f"ecrash{uuid.uuid4().hex[:8]}_"
    env = serve_env(prefix, moto_url, fake_anthropic, fake_openai)
    data = str(Path(tempfile.mkdtemp(prefix="gb-erase-")) / "gligabao.db")
    if store == "sqlite":
        env = {k: v for k, v in env.items() if k != "GB_DYNAMODB_ENDPOINT"} | {"GB_DATA": data}
    first = Serve(env)
    try:
        for dataset, (name, place) in {
            "main": ("Quillon", "Brackenfold"),
            "trips": ("Quillon", "Marrowdeep"),
        }.items():
            fake_anthropic.script(
                "extract",
                extraction(
                    [ent(name, "person"), ent(place, "city")], [fact(name, place, "lives_in")]
                ),
            )
            r = first.client.post(
                "/v1/gb/remember",
                {"user_id": USER, "dataset": dataset, "text": f"{name} lives in {place}."},
            )
            assert r.status == 200, r.body
    finally:
        first.stop()
    needles = ("quillon", "brackenfold", "marrowdeep", USER)
    assert traces(_dump(store, prefix, moto_url, data), needles)

    dying = Serve(env, crash_at=point)
    with contextlib.suppress(OSError):
        dying.client.delete(f"/v1/gb/users/{USER}")
    dying.proc.wait(timeout=30)
    assert dying.proc.returncode == 137, f"did not die at {point}"
    dying.stop()
    call_id = _mark(store, prefix, moto_url, data)
    assert call_id, "the erase left no mark"
    if point != "erase_records":  # some of the user is still there, marked
        assert traces(_dump(store, prefix, moto_url, data), needles)

    again = Serve(env)  # its start finishes the erase
    try:
        r = again.client.get(f"/v1/gb/calls/{call_id}?user_id={USER}")
        assert r.status == 200, r.body
        assert r.body["status"] == "ok" and r.body["type"] == "erase", r.body
        # the counts of the dead run go on in the finished record
        removed = r.body["result"]["removed"]
        assert (removed["datasets"], removed["artifacts"], removed["edges"]) == (2, 2, 2), removed
        assert traces(json.dumps(r.body), needles) == []
        assert again.client.get(f"/v1/gb/datasets?user_id={USER}").body == {"datasets": []}
    finally:
        log = again.stop()
    assert _mark(store, prefix, moto_url, data) is None, log[-2000:]
    assert traces(_dump(store, prefix, moto_url, data), needles) == [], log[-2000:]
