"""Events of a forget and of an erase through the stores' outboxes (issue 47):
`gligabao serve` killed at a write point (a real ``os._exit`` in a child
process, ``GB_TEST_CRASH_AT``), with a Standard Webhooks receiver on loopback
and, on DynamoDB, the deployed path too: moto's EventBridge bus with a
subscriber's rule to an SQS queue. Killed before the change's commit: no
event from it. Killed after: the event arrives on recovery, once, with the
same ID on both sinks, and a signature that verifies."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from pathlib import Path
from typing import Any

import boto3
import pytest
from test_crash_points import LEASE_S, Serve, _remember, _remember_until_done
from test_events_crash import SECRET, _env, moto_url

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from fakes.webhook_receiver import WebhookReceiver, verify_by_hand
from gligabao.events.model import DATASET_DELETED, FORGOTTEN, SOURCE, USER_ERASED

__all__ = ["moto_url"]  # the standalone moto server's fixture, shared

TEXT = "Alice works at Acme."
LATER = "Bob works at Globex."


class Bus:
    """The stack's bus on the standalone moto server, and a subscriber's rule
    sending every gligabao event to its SQS queue."""

    def __init__(self, url: str) -> None:
        self.name = f"gb-{uuid.uuid4().hex[:8]}"
        events = boto3.client("events", endpoint_url=url, region_name="us-east-1")
        self.sqs = boto3.client("sqs", endpoint_url=url, region_name="us-east-1")
        events.create_event_bus(Name=self.name)
        self.queue = self.sqs.create_queue(QueueName=self.name)["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=self.queue, AttributeNames=["QueueArn"])
        events.put_rule(
            Name="all", EventBusName=self.name, EventPattern=json.dumps({"source": [SOURCE]})
        )
        events.put_targets(
            Rule="all",
            EventBusName=self.name,
            Targets=[{"Id": "q", "Arn": arn["Attributes"]["QueueArn"]}],
        )
        self.got: list[dict[str, Any]] = []

    def events(self, type_: str) -> list[dict[str, Any]]:
        while True:
            msgs = self.sqs.receive_message(QueueUrl=self.queue, MaxNumberOfMessages=10)
            if not msgs.get("Messages"):
                break
            for m in msgs["Messages"]:
                self.got.append(json.loads(m["Body"])["detail"])
                self.sqs.delete_message(QueueUrl=self.queue, ReceiptHandle=m["ReceiptHandle"])
        return [e for e in self.got if e["type"] == type_]


def _setup(
    store: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    llm: FakeAnthropic,
    emb: FakeOpenAI,
    receiver: WebhookReceiver,
) -> tuple[dict[str, str], Bus | None]:
    env = _env(store, tmp_path, request, llm, emb)
    env |= {"GB_WEBHOOK_URL": receiver.url, "GB_WEBHOOK_SECRET": SECRET}
    bus = None
    if store == "dynamodb":
        url = request.getfixturevalue("moto_url")
        bus = Bus(url)
        env |= {"GB_EVENT_BUS_NAME": bus.name, "AWS_ENDPOINT_URL_EVENTBRIDGE": url}
    llm.default("extract", {"entities": [], "edges": []})
    return env, bus


def _of(receiver: WebhookReceiver, bus: Bus | None, type_: str) -> list[dict[str, Any]]:
    """The events of a type, the same on both sinks, each once; every
    delivery's signature verified."""
    for r in receiver.received:
        assert verify_by_hand(SECRET, r)
    got = receiver.events(type_)
    assert len({e["id"] for e in got}) == len(got), got  # none twice
    if bus is not None:
        assert bus.events(type_) == got
    return got


def _die(env: dict[str, str], point: str, method: str, path: str) -> None:
    dying = Serve(env, crash_at=point)
    with contextlib.suppress(OSError):  # the connection dies with the server
        dying.client.request(method, path)
    dying.proc.wait(timeout=30)
    assert dying.proc.returncode == 137, f"did not die at {point}"
    dying.stop()


@pytest.mark.parametrize("store", ["dynamodb", "sqlite"])
@pytest.mark.parametrize("point", ["forget_planned", "forget_committed"])
def test_a_killed_forget_has_its_event_only_if_it_committed(
    store: str,
    point: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeOpenAI,
) -> None:
    with WebhookReceiver() as receiver:
        env, bus = _setup(store, tmp_path, request, fake_anthropic, fake_openai, receiver)
        first = Serve(env)
        r: Any = _remember(first, TEXT)
        first.stop()
        assert r.status == 200, r.body
        art = r.body["artifact_id"]
        _die(env, point, "DELETE", f"/v1/gb/artifacts/{art}?user_id=u1&dataset=main")
        assert _of(receiver, bus, FORGOTTEN) == []  # killed before any delivery
        if store == "dynamodb":
            time.sleep(LEASE_S)  # the recovery finishes a record whose lease ended

        # The recovery: on the file, the start of the server; on DynamoDB, the
        # next commit in the dataset (a remember).
        again = Serve(env)
        later: Any = _remember_until_done(again, LATER)
        assert later.status == 200, later.body
        found = again.client.get(f"/v1/gb/artifacts/{art}?user_id=u1&dataset=main")
        again.stop()
        Serve(env).stop()  # another start delivers nothing again
        got = _of(receiver, bus, FORGOTTEN)
        if point == "forget_planned":  # before the commit: the text stays, no event
            assert found.status == 200 and got == []
        else:
            assert found.status == 404
            assert [e["data"]["artifact_id"] for e in got] == [art]
            assert got[0]["user_id"] == "u1" and got[0]["dataset"] == "main"


@pytest.mark.parametrize("store", ["dynamodb", "sqlite"])
@pytest.mark.parametrize("point", ["erase_records", "erase_ended"])
def test_a_killed_erase_has_one_event_once_it_ended(
    store: str,
    point: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeOpenAI,
) -> None:
    with WebhookReceiver() as receiver:
        env, bus = _setup(store, tmp_path, request, fake_anthropic, fake_openai, receiver)
        first = Serve(env)
        r: Any = _remember(first, TEXT)
        first.stop()
        assert r.status == 200, r.body
        _die(env, point, "DELETE", "/v1/gb/users/u1")
        assert _of(receiver, bus, USER_ERASED) == []  # killed before any delivery

        # The recovery: the server's start finishes the erase the kill left
        # (erase_records: before its last step, so its event is made now;
        # erase_ended: after it, so the event waiting in the outbox goes).
        again = Serve(env)
        left = again.client.get("/v1/gb/datasets?user_id=u1")
        again.stop()
        Serve(env).stop()  # another start delivers nothing again
        assert left.status == 200 and left.body["datasets"] == [], left.body
        (erased,) = _of(receiver, bus, USER_ERASED)
        assert erased["user_id"] == "u1" and erased["dataset"] is None


@pytest.mark.parametrize("store", ["dynamodb", "sqlite"])
def test_a_dataset_delete_killed_after_its_commit_has_its_event_on_recovery(
    store: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeOpenAI,
) -> None:
    with WebhookReceiver() as receiver:
        env, bus = _setup(store, tmp_path, request, fake_anthropic, fake_openai, receiver)
        first = Serve(env)
        r: Any = _remember(first, TEXT)
        first.stop()
        assert r.status == 200, r.body
        _die(env, "dataset_deleted", "DELETE", "/v1/gb/datasets/main?user_id=u1")
        assert _of(receiver, bus, DATASET_DELETED) == []  # killed before any delivery
        if store == "dynamodb":
            time.sleep(LEASE_S)  # a waiting event is taken once a lease old

        # The recovery: the server's start delivers what waits in the outbox
        # (on AWS, the retention sweep's schedule does).
        again = Serve(env)
        left = again.client.get("/v1/gb/datasets?user_id=u1")
        again.stop()
        Serve(env).stop()  # another start delivers nothing again
        assert left.status == 200 and left.body["datasets"] == [], left.body
        (deleted,) = _of(receiver, bus, DATASET_DELETED)
        assert (deleted["user_id"], deleted["dataset"], deleted["data"]) == ("u1", "main", {})
