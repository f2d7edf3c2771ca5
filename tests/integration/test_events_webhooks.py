"""Events as Standard Webhooks (issue 47), on both stores, with a real
receiver on loopback that verifies each signature: an event per kind of
change (a remember, a forget of a text or of a fact, a correction, a deleted
dataset, an erased user, a batch), IDs and never text; a receiver that
answers 500 then 200 gets the event twice, with the same ID; every delivery
is in the call record."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from batch_helpers import conversation, use_world, wait

from conftest import Harness
from fakes.webhook_receiver import Received, WebhookReceiver, new_secret, verify_by_hand
from gligabao.events.model import (
    BATCH_FINISHED,
    DATASET_DELETED,
    FACT_CORRECTED,
    FACT_FORGOTTEN,
    FORGOTTEN,
    REMEMBERED,
    USER_ERASED,
)

SECRET = new_secret()
LEASE_S = 2  # DynamoDB: a commit record left behind is retried after its lease
TEXT = "Alice works at Acme."
ALICE_ACME = {
    "entities": [{"name": "Alice", "type": "person"}, {"name": "Acme", "type": "organization"}],
    "edges": [{"source": "Alice", "target": "Acme", "relation": "works_at", "description": TEXT}],
}


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as r:
        yield r


@pytest.fixture
def server_env(server_store: str, receiver: WebhookReceiver) -> dict[str, str]:
    """The `server` of both stores (tests/two_store_fixtures.py) sends to the receiver."""
    env = {"GB_WEBHOOK_URL": receiver.url, "GB_WEBHOOK_SECRET": SECRET}
    if server_store == "dynamodb":
        env["GB_LEASE_SECONDS"] = str(LEASE_S)
    return env


def _signed(receiver: WebhookReceiver) -> list[Received]:
    """Every request, each verified by hand and by the reference library."""
    from standardwebhooks.webhooks import Webhook

    hook = Webhook(SECRET)
    for r in receiver.received:
        assert verify_by_hand(SECRET, r), r.headers
        hook.verify(r.body, r.headers)  # raises on a bad signature or an old timestamp
    return receiver.received


def _remember(gb: Harness, text: str = TEXT) -> dict[str, Any]:
    gb.llm.script("extract", ALICE_ACME)
    return gb.remember(text)


def test_a_remember_is_one_signed_event_with_its_ids_and_no_text(
    server: Harness, receiver: WebhookReceiver
) -> None:
    body = _remember(server)
    (got,) = _signed(receiver)
    event = got.event
    assert got.headers["webhook-id"] == event["id"] and event["id"].startswith("evt_")
    assert event["type"] == REMEMBERED
    assert (event["user_id"], event["dataset"]) == ("u1", "main")
    data = event["data"]
    assert data["artifact_ids"] == [body["artifact_id"]]
    assert data["entity_ids"] == sorted(e["id"] for e in body["entities"])
    assert data["edge_ids"] == sorted(e["id"] for e in body["edges"])
    assert data["superseded_edge_ids"] == [] and data["call_id"]
    for word in ("Alice", "Acme", "works"):  # IDs only: a subscriber reads the rest
        assert word not in got.body.decode()
    # the delivery is in the call record
    call = server.client.get(f"/v1/gb/calls/{data['call_id']}?user_id=u1").body
    (step,) = [s for s in call["steps"] if s["name"] == "deliver webhook:1"]
    assert (step["delivered"], step["attempts"], step["status"]) == (1, 1, 200)


def test_500_then_200_is_delivered_twice_with_the_same_id(
    server: Harness, receiver: WebhookReceiver
) -> None:
    receiver.script = [500]
    _remember(server)
    got = _signed(receiver)
    assert [r.status for r in got] == [500, 200]
    assert got[0].headers["webhook-id"] == got[1].headers["webhook-id"]
    assert got[0].body == got[1].body
    call_id = got[1].event["data"]["call_id"]
    call = server.client.get(f"/v1/gb/calls/{call_id}?user_id=u1").body
    (step,) = [s for s in call["steps"] if s["name"] == "deliver webhook:1"]
    assert (step["delivered"], step["attempts"]) == (1, 2)


def test_an_undelivered_event_waits_and_goes_with_the_next_commit(
    server: Harness, receiver: WebhookReceiver
) -> None:
    """A receiver down for every retry: the write stands (200), the event
    stays in the outbox, and it is delivered (same ID) after the next one."""
    from gligabao.config import settings

    receiver.script = [503] * 4
    first = _remember(server)
    assert [r.status for r in receiver.received] == [503] * 4
    assert receiver.events() == []
    if settings().store != "sqlite":
        # DynamoDB: the commit record is the outbox, retried by the next
        # commit once its lease ended
        time.sleep(LEASE_S + 0.5)
    second = _remember(server, "Alice still works at Acme.")
    events = receiver.events(REMEMBERED)
    assert sorted(e["data"]["artifact_ids"][0] for e in events) == sorted(
        [first["artifact_id"], second["artifact_id"]]
    )
    stale = receiver.received[0].headers["webhook-id"]
    assert stale in {r.headers["webhook-id"] for r in receiver.received if r.status == 200}


def test_forget_delete_and_erase_are_events(server: Harness, receiver: WebhookReceiver) -> None:
    body = _remember(server)
    r = server.client.delete(f"/v1/gb/artifacts/{body['artifact_id']}?user_id=u1&dataset=main")
    assert r.status == 200, r.body
    (forgot,) = receiver.events(FORGOTTEN)
    assert forgot["data"]["artifact_id"] == body["artifact_id"]
    assert forgot["data"]["edge_ids"] == r.body["removed"]["edges"]
    _remember(server)
    assert server.client.delete("/v1/gb/datasets/main?user_id=u1").status == 204
    (deleted,) = receiver.events(DATASET_DELETED)
    assert (deleted["user_id"], deleted["dataset"], deleted["data"]) == ("u1", "main", {})
    r = server.client.delete("/v1/gb/users/u1")
    assert r.status == 202, r.body
    (erased,) = receiver.events(USER_ERASED)
    assert erased["user_id"] == "u1" and erased["data"]["call_id"] == r.body["call_id"]
    _signed(receiver)
    assert len({e["id"] for e in receiver.events()}) == len(receiver.events())


def test_a_correction_and_a_fact_forgotten_are_events(
    server: Harness, receiver: WebhookReceiver
) -> None:
    body = _remember(server)
    old = body["edges"][0]["id"]
    wrong = {"user_id": "u1", "description": "Alice works at Acme as an engineer."}
    r = server.client.request("PATCH", f"/v1/gb/edges/{old}", wrong)
    assert r.status == 200, r.body
    new = r.body["edge"]["id"]
    (corrected,) = receiver.events(FACT_CORRECTED)
    assert corrected["data"] == {"edge_id": new, "replaced_edge_id": old}
    assert corrected["dataset"] == "main" and TEXT not in str(corrected)
    # forgetting the correction puts the old fact back
    r = server.client.delete(f"/v1/gb/edges/{new}?user_id=u1&dataset=main")
    assert r.status == 200, r.body
    (forgot,) = receiver.events(FACT_FORGOTTEN)
    assert forgot["data"] == {"edge_id": new, "restored_edge_ids": [old]}
    _signed(receiver)
    # a correction refused (nothing to correct) and a fact that is gone: no event
    same = {"user_id": "u1", "description": TEXT}
    assert server.client.request("PATCH", f"/v1/gb/edges/{old}", same).status == 400
    assert server.client.delete(f"/v1/gb/edges/{new}?user_id=u1&dataset=main").status == 404
    assert len(receiver.events(FACT_FORGOTTEN)) == 1
    assert len(receiver.events(FACT_CORRECTED)) == 1


def test_a_failed_remember_is_no_event(server: Harness, receiver: WebhookReceiver) -> None:
    server.llm.fail_next(400, stage="extract")  # a failure no retry changes
    r = server.client.post("/v1/gb/remember", {"user_id": "u1", "text": TEXT})
    assert r.status >= 400
    assert receiver.received == []


def test_a_batch_is_its_remembers_and_one_finished_event(
    server: Harness, receiver: WebhookReceiver
) -> None:
    use_world(server)
    r = server.client.post("/v1/gb/remember/batch", {"user_id": "u1", "items": conversation(6)})
    assert r.status == 202, r.body
    assert wait(server, r.call_id)["status"] == "ok"
    (done,) = receiver.wait_for(BATCH_FINISHED)
    assert done["data"]["call_id"] == r.call_id
    assert receiver.events(REMEMBERED)  # its commits, each an event
    _signed(receiver)
