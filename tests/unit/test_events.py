"""The events' shapes (docs/events/*.schema.json), the Standard Webhooks
signature as the reference library checks it, and the EventBridge sink's
retry of the entries PutEvents failed (a client that fails some)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from gligabao.events import model
from gligabao.events.eventbridge.sink import EventBridgeSink
from gligabao.events.port import Undelivered
from gligabao.events.webhooks.sink import WebhookSink, sign, urls_of

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "events"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def _validator(type_: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / f"{type_}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


EXAMPLES = [
    model.remembered("u1", "main", "c1", [3], [4, 5], [1], [7], [2]),
    model.forgotten(
        "u1",
        "main",
        {
            "artifact_id": 3,
            "removed": {"artifacts": [3, 4], "edges": [7], "entities": [5]},
            "restored": {"edges": [2]},
        },
    ),
    model.fact_forgotten("u1", "main", 7, [2]),
    model.fact_corrected("u1", "main", 9, 7),
    model.dataset_deleted("u1", "main"),
    model.user_erased("u1", "c2"),
    model.batch_ended("u1", "main", "c3", None),
    model.batch_ended("u1", "main", "c3", "502"),
]


def test_every_type_has_a_schema_and_an_example() -> None:
    assert sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.json")) == sorted(
        model.TYPES
    )
    assert sorted(e.type for e in EXAMPLES) == sorted(model.TYPES)


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: e.type)
def test_each_event_matches_its_schema(event: model.Event) -> None:
    body = json.loads(json.dumps(event.public()))
    errors = list(_validator(event.type).iter_errors(body))
    assert not errors, [e.message for e in errors]
    # and a schema is strict: a text smuggled into data is refused
    body["data"]["text"] = "Alice works at Acme."
    assert list(_validator(event.type).iter_errors(body))


def test_a_batch_end_has_the_id_of_its_call_and_outcome() -> None:
    """A rerun of the job that ends the same way makes the same event (the
    outbox keeps it once, a subscriber drops the repeat)."""
    done = model.batch_ended("u1", "main", "c3", None)
    assert done.id == model.batch_ended("u1", "main", "c3", None).id
    assert done.id != model.batch_ended("u1", "main", "c4", None).id
    failed = model.batch_ended("u1", "main", "c3", "502")
    assert failed.id == model.batch_ended("u1", "main", "c3", "502").id
    assert len({done.id, failed.id, model.batch_ended("u1", "main", "c3", "400").id}) == 3


def test_the_signature_verifies_with_the_reference_library() -> None:
    from standardwebhooks.webhooks import Webhook

    from gligabao.events.webhooks.sink import secret_key

    body = json.dumps(EXAMPLES[0].public())
    ts = int(time.time())  # the library refuses a timestamp off by 5 minutes
    sig = sign(secret_key(SECRET), "evt_1", ts, body)
    headers = {"webhook-id": "evt_1", "webhook-timestamp": str(ts), "webhook-signature": sig}
    hook = Webhook(SECRET)
    assert hook.verify(body, headers) == json.loads(body)
    with pytest.raises(Exception, match=r"(?i)signature"):
        hook.verify(body.replace("main", "mine"), headers)


def test_the_webhook_settings_are_checked() -> None:
    assert urls_of(" http://a/x , https://b/y,") == ["http://a/x", "https://b/y"]
    with pytest.raises(ValueError, match="http"):
        WebhookSink(["file:///etc/passwd"], SECRET)
    with pytest.raises(ValueError, match="base64"):
        WebhookSink(["http://127.0.0.1:1/"], "whsec_not base64!")


def test_an_unreachable_url_is_retried_then_undelivered() -> None:
    sink = WebhookSink(["http://127.0.0.1:9/"], SECRET, attempts=2, base_wait_s=0.01)
    with pytest.raises(Undelivered) as err:
        sink.publish([EXAMPLES[0]])
    (d,) = err.value.deliveries
    assert (d.target, d.attempts, d.ok, d.status) == ("webhook:1", 2, False, 0)


class FlakyEvents:
    """PutEvents that fails the first entry of its first request."""

    def __init__(self) -> None:
        self.requests: list[list[dict[str, Any]]] = []

    def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        self.requests.append(Entries)
        failed = len(self.requests) == 1
        return {
            "FailedEntryCount": int(failed),
            "Entries": [
                {"ErrorCode": "InternalFailure"} if failed and i == 0 else {"EventId": f"e{i}"}
                for i, _ in enumerate(Entries)
            ],
        }


def test_eventbridge_puts_the_failed_entries_again_in_tens() -> None:
    client = FlakyEvents()
    events = [model.dataset_deleted("u1", f"d{i}") for i in range(12)]
    deliveries = EventBridgeSink(client, "bus").publish(events)
    assert [d.attempts for d in deliveries] == [2, 1]
    assert [len(r) for r in client.requests] == [10, 1, 2]
    again = json.loads(client.requests[1][0]["Detail"])
    assert again["id"] == events[0].id  # the same event, the same ID
    entry = client.requests[0][0]
    assert (entry["Source"], entry["DetailType"], entry["EventBusName"]) == (
        "gligabao",
        "dataset.deleted",
        "bus",
    )
