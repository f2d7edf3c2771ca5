"""Events on the deployed path (issue 47): the functions put them on an
EventBridge bus (moto's, on loopback), and a rule of the subscriber routes
them to an SQS queue, which the test reads: an event per kind of change,
each matching its JSON Schema, with IDs and no text."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from jsonschema import Draft202012Validator

from conftest import Harness
from gligabao.events.model import (
    DATASET_DELETED,
    FORGOTTEN,
    REMEMBERED,
    SOURCE,
    USER_ERASED,
)

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "events"
BUS = "gb-test-events"
TEXT = "Alice works at Acme."
ALICE_ACME = {
    "entities": [{"name": "Alice", "type": "person"}, {"name": "Acme", "type": "organization"}],
    "edges": [{"source": "Alice", "target": "Acme", "relation": "works_at", "description": TEXT}],
}


@pytest.fixture
def gb_env(moto_url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for k, v in {
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(k, v)
    # the events client of the functions, at moto (boto3's per-service endpoint variable)
    return {"GB_EVENT_BUS_NAME": BUS, "AWS_ENDPOINT_URL_EVENTBRIDGE": moto_url}


@pytest.fixture
def subscriber(moto_url: str, gb_env: dict[str, str]) -> Any:
    """The bus (as the stack makes it), and a rule of a subscriber's: every
    gligabao event to its SQS queue. Returns the queue's URL."""
    events = boto3.client("events", endpoint_url=moto_url, region_name="us-east-1")
    sqs = boto3.client("sqs", endpoint_url=moto_url, region_name="us-east-1")
    with contextlib.suppress(events.exceptions.ResourceAlreadyExistsException):
        events.create_event_bus(Name=BUS)
    queue = sqs.create_queue(QueueName=f"sub-{id(events)}")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    events.put_rule(
        Name="to-queue", EventBusName=BUS, EventPattern=json.dumps({"source": [SOURCE]})
    )
    events.put_targets(Rule="to-queue", EventBusName=BUS, Targets=[{"Id": "q", "Arn": arn}])
    yield sqs, queue
    events.remove_targets(Rule="to-queue", EventBusName=BUS, Ids=["q"])
    events.delete_rule(Name="to-queue", EventBusName=BUS)
    sqs.delete_queue(QueueUrl=queue)


def _received(subscriber: Any) -> list[dict[str, Any]]:
    sqs, queue = subscriber
    out: list[dict[str, Any]] = []
    while True:
        msgs = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
        if not msgs:
            return out
        for m in msgs:
            out.append(json.loads(m["Body"]))
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])


def _valid(envelope: dict[str, Any]) -> dict[str, Any]:
    """The EventBridge envelope's detail, checked against its type's schema."""
    assert envelope["source"] == SOURCE
    detail = envelope["detail"]
    assert envelope["detail-type"] == detail["type"]
    schema = json.loads((SCHEMAS / f"{detail['type']}.schema.json").read_text())
    v = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    assert not [e.message for e in v.iter_errors(detail)]
    return dict(detail)


def test_each_change_is_an_event_on_the_bus(gb: Harness, subscriber: Any) -> None:
    gb.llm.script("extract", ALICE_ACME)
    body = gb.remember(TEXT)
    (remembered,) = [_valid(e) for e in _received(subscriber)]
    assert remembered["type"] == REMEMBERED
    assert remembered["data"]["artifact_ids"] == [body["artifact_id"]]
    assert remembered["data"]["edge_ids"] == [e["id"] for e in body["edges"]]
    assert TEXT not in json.dumps(remembered) and "Alice" not in json.dumps(remembered)
    call_id = remembered["data"]["call_id"]
    call = gb.client.get(f"/v1/gb/calls/{call_id}?user_id=u1").body
    (step,) = [s for s in call["steps"] if s["name"] == "deliver eventbridge"]
    assert (step["events"], step["delivered"], step["attempts"]) == (1, 1, 1)

    r = gb.client.delete(f"/v1/gb/artifacts/{body['artifact_id']}?user_id=u1&dataset=main")
    assert r.status == 200, r.body
    gb.llm.script("extract", ALICE_ACME)
    gb.remember(TEXT)
    assert gb.client.delete("/v1/gb/datasets/main?user_id=u1").status == 204
    erase = gb.client.delete("/v1/gb/users/u1")
    assert erase.status == 202
    got = [_valid(e) for e in _received(subscriber)]
    assert [e["type"] for e in got] == [FORGOTTEN, REMEMBERED, DATASET_DELETED, USER_ERASED]
    assert got[0]["data"]["artifact_id"] == body["artifact_id"]
    assert got[3]["data"]["call_id"] == erase.body["call_id"] and got[3]["dataset"] is None
    assert len({e["id"] for e in got}) == 4


def test_a_failed_write_puts_nothing(gb: Harness, subscriber: Any) -> None:
    gb.llm.fail_next(400, stage="extract")
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": TEXT})
    assert r.status >= 400
    assert gb.client.delete("/v1/gb/datasets/nope?user_id=u1").status == 404
    assert _received(subscriber) == []
