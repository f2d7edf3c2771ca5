"""The worker's SQS partial batch response (in place of Powertools'
BatchProcessor): every record is handled, the ones that raised are reported
by message id, in order, and a batch that failed whole is still an answer."""

from __future__ import annotations

from typing import Any

import pytest
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from gligabao.handlers.remember_worker import partial_batch_response


def event(*bodies: str) -> dict[str, Any]:
    return {
        "Records": [
            {"messageId": f"m-{i}", "body": body, "attributes": {}, "receiptHandle": f"r-{i}"}
            for i, body in enumerate(bodies)
        ]
    }


def test_the_failed_records_are_reported_and_the_others_are_not() -> None:
    seen: list[str] = []

    def handle(record: SQSRecord) -> None:
        seen.append(record.body)
        if record.body.startswith("bad"):
            raise RuntimeError(record.body)

    out = partial_batch_response(event("ok", "bad-1", "ok", "bad-2"), handle)
    assert seen == ["ok", "bad-1", "ok", "bad-2"]  # a failure does not stop the batch
    assert out == {"batchItemFailures": [{"itemIdentifier": "m-1"}, {"itemIdentifier": "m-3"}]}


def test_a_batch_that_failed_whole_and_an_empty_one_are_answers() -> None:
    def fail(record: SQSRecord) -> None:
        raise ValueError("no")

    assert partial_batch_response(event("a", "b"), fail) == {
        "batchItemFailures": [{"itemIdentifier": "m-0"}, {"itemIdentifier": "m-1"}]
    }
    assert partial_batch_response({"Records": []}, fail) == {"batchItemFailures": []}


def test_what_is_not_an_exception_is_not_swallowed() -> None:
    def interrupt(record: SQSRecord) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        partial_batch_response(event("a"), interrupt)
