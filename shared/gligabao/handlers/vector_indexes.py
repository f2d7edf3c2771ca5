"""The CloudFormation custom resource that creates the vector indexes on
deploy (Create and Update), so that no one runs `gligabao bootstrap` by hand
and no remember ever meets a missing index.

Idempotent: an index that exists is left as it is (changing the embedding
dimension needs new indexes and `gligabao reindex`). Delete leaves the
indexes alone: they go with the collection, and a replaced resource must not
drop the live ones. A new Serverless collection may refuse requests for a
while after its data access policy is created: failures are retried until
the function's time is nearly spent, then reported FAILED (CloudFormation
must always get an answer, or the stack waits an hour)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

from tenacity import RetryCallState, Retrying, retry_if_exception_type, wait_fixed

from ..errors import GbError
from ..records.monitor import logger
from ..vectors.opensearch.store import OpenSearchVectorIndex

# Leave this much of the Lambda's time to send the answer.
RESERVE_MS = 20_000
BACKOFF_S = 5.0


def _index(props: dict[str, Any]) -> OpenSearchVectorIndex:
    return OpenSearchVectorIndex(
        str(props["Endpoint"]),
        dimension=int(props["Dimension"]),
        service=str(props.get("Service", "aoss")),
        region=str(props.get("Region") or "us-east-1"),
        index_prefix=str(props.get("IndexPrefix", "gb")),
    )


def _bootstrap(props: dict[str, Any], remaining_ms: Callable[[], int]) -> list[str]:
    def log(state: RetryCallState) -> None:
        assert state.outcome is not None
        exc = state.outcome.exception()
        logger.warning("bootstrap failed, retrying", extra={"error": getattr(exc, "message", "")})

    return Retrying(
        retry=retry_if_exception_type(GbError),
        # until one more wait would eat into the time kept to answer
        stop=lambda state: remaining_ms() < RESERVE_MS + BACKOFF_S * 1000,
        wait=wait_fixed(BACKOFF_S),
        before_sleep=log,
        reraise=True,
    )(lambda: _index(props).bootstrap())


def _respond(event: dict[str, Any], status: str, reason: str, data: dict[str, Any]) -> None:
    body = json.dumps(
        {
            "Status": status,
            "Reason": reason[:3000],
            "PhysicalResourceId": event.get("PhysicalResourceId")
            or f"{event['LogicalResourceId']}-{event['RequestId']}",
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
            "Data": data,
        }
    ).encode()
    # The pre-signed S3 URL wants no Content-Type.
    req = urllib.request.Request(event["ResponseURL"], data=body, method="PUT")
    req.add_header("Content-Type", "")
    with urllib.request.urlopen(req, timeout=30) as resp:
        resp.read()


def lambda_handler(event: dict[str, Any], context: Any) -> None:
    props = event.get("ResourceProperties", {})
    kind = event.get("RequestType")

    def remaining_ms() -> int:
        return int(context.get_remaining_time_in_millis()) if context is not None else 60_000

    try:
        created: list[str] = []
        if kind in ("Create", "Update"):
            created = _bootstrap(props, remaining_ms)
        logger.info("vector indexes", extra={"request_type": kind, "indexes_created": created})
        _respond(event, "SUCCESS", "ok", {"Created": ",".join(created)})
    except Exception as exc:
        logger.exception("vector indexes failed")
        reason = exc.message if isinstance(exc, GbError) else f"{type(exc).__name__}: {exc}"
        _respond(event, "FAILED", reason, {})
