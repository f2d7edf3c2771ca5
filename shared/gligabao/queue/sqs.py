"""JobQueue on Amazon SQS: the remember worker function consumes the queue
(Lambda's event source mapping); ``retry_later`` sets a failed message's
visibility, so that SQS delivers it again after a backoff rather than after
the queue's long visibility timeout."""

from __future__ import annotations

import json
from typing import Any

from ..errors import UpstreamError


class SqsJobQueue:
    def __init__(self, queue_url: str, region: str) -> None:
        import boto3

        self._url = queue_url
        self._client = boto3.client("sqs", region_name=region)

    def send(self, job: dict[str, Any]) -> None:
        try:
            self._client.send_message(QueueUrl=self._url, MessageBody=json.dumps(job))
        except Exception as exc:
            raise UpstreamError("the remember queue failed") from exc

    def retry_later(self, receipt_handle: str, delay_s: int) -> None:
        self._client.change_message_visibility(
            QueueUrl=self._url, ReceiptHandle=receipt_handle, VisibilityTimeout=delay_s
        )
