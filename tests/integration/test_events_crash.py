"""Events and crashes (issue 47): `gligabao serve` killed at a write point
of a remember (a real ``os._exit`` in a child process), with a webhook
receiver on loopback. Killed before its commit: no event, ever. Killed
after: its event is delivered by the recovery (the next commit in the
dataset; on DynamoDB, once the dead call's lease ended), once, with an ID of
its own, and a signature that verifies."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import pytest
from remember_helpers import ent, extraction, fact
from test_crash_points import LEASE_S, Serve, _remember, _remember_until_done, moto_url, serve_env

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from fakes.webhook_receiver import WebhookReceiver, new_secret, verify_by_hand
from gligabao.events.model import REMEMBERED

__all__ = ["moto_url"]  # the standalone moto server's fixture, shared

SECRET = new_secret()
FIRST = "Alice met Bob at Acme."
SECOND = "Bob works at Acme."


def _env(
    store: str, tmp_path: Path, request: pytest.FixtureRequest, llm: FakeAnthropic, emb: FakeOpenAI
) -> dict[str, str]:
    if store == "dynamodb":
        import uuid

        env = serve_env(f"ev{uuid.uuid4().hex[:8]}_", request.getfixturevalue("moto_url"), llm, emb)
    else:
        env = {**llm.env(), **emb.env(), "GB_EMBEDDING_DIMENSION": "64"}
        env["GB_DATA"] = str(tmp_path / "gligabao.db")
    return env


def _artifacts(receiver: WebhookReceiver) -> list[int]:
    for r in receiver.received:
        assert verify_by_hand(SECRET, r)
    events = receiver.events(REMEMBERED)
    assert len({e["id"] for e in events}) == len(events)  # no event twice
    return sorted(a for e in events for a in e["data"]["artifact_ids"])


@pytest.mark.parametrize(
    ("store", "point"),
    [
        ("dynamodb", "written"),
        ("dynamodb", "committed"),
        ("dynamodb", "untagged"),
        ("sqlite", "committed"),
    ],
)
def test_a_killed_remember_has_its_event_only_if_it_committed(
    store: str,
    point: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeOpenAI,
) -> None:
    with WebhookReceiver() as receiver:
        env = _env(store, tmp_path, request, fake_anthropic, fake_openai)
        env |= {"GB_WEBHOOK_URL": receiver.url, "GB_WEBHOOK_SECRET": SECRET}
        fake_anthropic.default(
            "extract",
            extraction(
                [ent("Alice", "person"), ent("Bob", "person"), ent("Acme", "organization")],
                [fact("Alice", "Bob", "met"), fact("Bob", "Acme", "works_at")],
            ),
        )
        dying = Serve(env, crash_at=point)
        with contextlib.suppress(OSError):  # the connection dies with the server
            _remember(dying, FIRST)
        dying.proc.wait(timeout=30)
        assert dying.proc.returncode == 137, f"did not die at {point}"
        dying.stop()
        assert receiver.received == []  # killed before any delivery
        if store == "dynamodb":
            # The recovery finishes a dead call's commit record once its lease
            # ended (a live one may still be finishing it): the next commit must
            # come after that. The lease began before the kill, so LEASE_S from
            # now is past it, however fast the next call is.
            time.sleep(LEASE_S)

        again = Serve(env)
        r: Any = _remember_until_done(again, SECOND)
        log = again.stop()
        assert r.status == 200, (r.body, log[-3000:])
        got = _artifacts(receiver)
        if point == "written":  # before the commit point: its text never was
            assert got == [r.body["artifact_id"]]
        else:  # after: the dead call's text (the first ID) came by the recovery
            assert len(got) == 2 and got[-1] == r.body["artifact_id"], got
