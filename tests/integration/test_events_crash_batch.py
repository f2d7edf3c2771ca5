"""A batch's end's event through the graph store's outbox (issue 47):
`gligabao serve` killed while a queued batch runs (a real ``os._exit`` in a
child process, ``GB_TEST_CRASH_AT``). Killed after the call record says the
batch ended and before the delivery: ``batch.finished`` arrives on recovery
(the start of the server), once, with the ID that follows from the batch's
call, on both sinks (DynamoDB: the webhook and moto's EventBridge bus).
Killed before its end (at its commit): no batch event."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import pytest
from test_crash_points import LEASE_S, Serve
from test_events_crash_outbox import _of, _setup, moto_url

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from fakes.webhook_receiver import WebhookReceiver
from gligabao.events.model import BATCH_FAILED, BATCH_FINISHED, REMEMBERED, batch_ended

__all__ = ["moto_url"]  # the standalone moto server's fixture, shared

BATCH = {"user_id": "u1", "items": [{"text": "Alice works at Acme.", "extract": False}]}


@pytest.mark.parametrize(
    ("store", "point"),
    [("sqlite", "committed"), ("sqlite", "batch_ended"), ("dynamodb", "batch_ended")],
)
def test_a_killed_batch_has_its_end_event_only_if_it_ended(
    store: str,
    point: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeOpenAI,
) -> None:
    with WebhookReceiver() as receiver:
        env, bus = _setup(store, tmp_path, request, fake_anthropic, fake_openai, receiver)
        dying = Serve(env, crash_at=point)
        r: Any = None
        with contextlib.suppress(OSError):  # the server may die before its answer
            r = dying.client.post("/v1/gb/remember/batch", BATCH)
        dying.proc.wait(timeout=30)
        assert dying.proc.returncode == 137, f"did not die at {point}"
        dying.stop()
        assert r is not None and r.status == 202, r
        assert _of(receiver, bus, BATCH_FINISHED) == []  # killed before any delivery
        if store == "dynamodb":
            time.sleep(LEASE_S)  # a waiting event is taken once a lease old

        # The recovery: the server's start delivers what waits in the outbox.
        again = Serve(env)
        call = again.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1")
        again.stop()
        Serve(env).stop()  # another start delivers nothing again
        got = _of(receiver, bus, BATCH_FINISHED)
        assert _of(receiver, bus, BATCH_FAILED) == []
        if point == "committed":  # its text landed; the batch never ended
            assert call.body["status"] == "running", call.body
            assert len(_of(receiver, bus, REMEMBERED)) == 1 and got == []
        else:
            assert call.body["status"] == "ok", call.body
            (done,) = got
            assert done["id"] == batch_ended("u1", "main", r.call_id, None).id
            assert (done["user_id"], done["dataset"], done["data"]) == (
                "u1",
                "main",
                {"call_id": r.call_id},
            )
