"""The SQS adapter of the remember queue, against moto's SQS."""

from __future__ import annotations

import json

import pytest

moto = pytest.importorskip("moto")


def test_send_puts_the_job_on_the_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3

    from gligabao.errors import UpstreamError
    from gligabao.queue.sqs import SqsJobQueue

    for k, v in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}.items():
        monkeypatch.setenv(k, v)
    with moto.mock_aws():
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="gb-remember")["QueueUrl"]
        job = {"call_id": "c1", "reference_time": "2025-01-01T00:00:00Z", "request": {"a": 1}}
        SqsJobQueue(url, "us-east-1").send(job)
        [msg] = sqs.receive_message(QueueUrl=url)["Messages"]
        assert json.loads(msg["Body"]) == job
        with pytest.raises(UpstreamError):
            SqsJobQueue(url + "-missing", "us-east-1").send(job)
