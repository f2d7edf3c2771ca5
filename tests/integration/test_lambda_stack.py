"""The handler stack AWS users expect: Powertools' Logger puts the Lambda
context in every log line, Metrics publishes the ColdStart metric, and the
Tracer wraps the invocation (disabled outside Lambda, as Powertools does)."""

from __future__ import annotations

import json

import pytest
from test_deadline import LambdaContext

from conftest import Harness
from gligabao.local.server import make_event


def test_logs_carry_the_lambda_context_and_the_cold_start_is_a_metric(
    gb: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    from aws_lambda_powertools.metrics.provider.cold_start import reset_cold_start_flag

    from gligabao.handlers import datasets

    reset_cold_start_flag()  # a new container
    event = make_event("GET", "/v1/gb/datasets?user_id=u1", {}, b"", "127.0.0.1")
    capsys.readouterr()
    out = datasets.lambda_handler(event, LambdaContext(20_000))
    assert out["statusCode"] == 200
    lines = [
        json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")
    ]
    cold = [line for line in lines if "ColdStart" in line]
    assert cold and cold[0]["function_name"] == "gb-QueryFunction"
    assert cold[0]["_aws"]["CloudWatchMetrics"][0]["Metrics"][0]["Name"] == "ColdStart"


def test_the_worker_logs_with_the_context(gb: Harness) -> None:
    from gligabao.handlers.remember_worker import lambda_handler

    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."})
    assert r.status == 200
    # a redelivered job of a call that is done: the worker logs and skips it
    job = {
        "call_id": r.call_id,
        "reference_time": "2026-01-01T00:00:00Z",
        "request": {"user_id": "u1", "text": "Alice works at Acme."},
    }
    out = lambda_handler(
        {
            "Records": [
                {
                    "messageId": "m-0",
                    "receiptHandle": "rh",
                    "body": json.dumps(job),
                    "attributes": {},
                    "messageAttributes": {},
                    "md5OfBody": "",
                    "eventSource": "aws:sqs",
                    "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q",
                    "awsRegion": "us-east-1",
                }
            ]
        },
        LambdaContext(60_000),
    )
    assert out == {"batchItemFailures": []}
    from gligabao.records.monitor import logger

    # the keys Logger.inject_lambda_context appended to every line of the invocation
    keys = logger.get_current_keys()
    assert keys["function_request_id"] == LambdaContext.aws_request_id
    assert keys["function_name"] == LambdaContext.function_name
