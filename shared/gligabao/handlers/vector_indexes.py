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

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tenacity import RetryCallState, Retrying, retry_if_exception_type, wait_fixed

from ..errors import GbError
from ..records.monitor import logger

if TYPE_CHECKING:
    from crhelper import CfnResource

    from ..vectors.opensearch.store import OpenSearchVectorIndex

# Leave this much of the Lambda's time to send the answer.
RESERVE_MS = 20_000
BACKOFF_S = 5.0


def _index(props: dict[str, Any]) -> OpenSearchVectorIndex:
    # Imported at the first event, as crhelper is: with them the handler's
    # cold import was 179 ms, without 34 (bench/package_size.py); one event
    # a deploy needs them.
    from ..vectors.opensearch.store import OpenSearchVectorIndex

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


@lru_cache(maxsize=1)
def _helper() -> CfnResource:
    """crhelper answers CloudFormation's pre-signed URL (SUCCESS, or FAILED
    with the error as the reason; FAILED too just before the function's time
    runs out). Made at the first event, not at import: it builds its boto3
    clients from the environment then."""
    from crhelper import CfnResource

    helper = CfnResource(log_level="INFO", boto_level="ERROR", sleep_on_delete=0)

    @helper.create
    @helper.update
    def create(event: dict[str, Any], context: Any) -> str | None:
        def remaining_ms() -> int:
            return int(context.get_remaining_time_in_millis()) if context is not None else 60_000

        try:
            created = _bootstrap(event.get("ResourceProperties", {}), remaining_ms)
        except GbError as exc:
            logger.exception("vector indexes failed")
            raise RuntimeError(exc.message) from exc  # the reason CloudFormation shows
        logger.info(
            "vector indexes",
            extra={"request_type": event.get("RequestType"), "indexes_created": created},
        )
        helper.Data["Created"] = ",".join(created)
        # Update keeps the resource's ID; Create names it once.
        return event.get("PhysicalResourceId") or (
            f"{event['LogicalResourceId']}-{event['RequestId']}"
        )

    @helper.delete
    def delete(event: dict[str, Any], context: Any) -> None:
        logger.info("vector indexes", extra={"request_type": "Delete", "indexes_created": []})

    return helper


def lambda_handler(event: dict[str, Any], context: Any) -> None:
    _helper()(event, context)
