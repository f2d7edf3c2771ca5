"""Monitoring: one structured log line per call, and CloudWatch embedded
metric format metrics, through Powertools.

The namespace is ``POWERTOOLS_METRICS_NAMESPACE`` (Powertools' own setting),
``gligabao`` by default. Powertools keeps one metric set per process, shared
by every ``Metrics`` instance: that one serves ``log_metrics`` on the Lambda
handler (the ColdStart metric). A call's own metrics go on an
``EphemeralMetrics``, which Powertools documents for metric sets that must not
be shared, so the calls of a threaded server (``gligabao serve``) never flush
each other's metrics.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from .model import CallRecord

DEFAULT_NAMESPACE = "gligabao"
NAMESPACE_ENV = "POWERTOOLS_METRICS_NAMESPACE"

logger = Logger(service="gligabao")

Handler = TypeVar("Handler", bound=Callable[[Any, Any], Any])


@functools.cache
def tracer() -> Tracer:
    """X-Ray segments (the template turns tracing on); Powertools disables the
    tracer outside Lambda and patches boto3/botocore, so every AWS call of a
    request is a subsegment. Built by the first invocation, not at import:
    constructing a Tracer imports the X-Ray SDK (180-530 ms of a handler's
    import on this machine, ~40 ms after botocore under Lambda, where it
    skips the sampling client), and a handler's import must not pay for it
    (tests/unit/test_cold_start.py)."""
    return Tracer(service="gligabao")


def _namespace() -> str:
    return os.environ.get(NAMESPACE_ENV) or DEFAULT_NAMESPACE


def metrics() -> Metrics:
    return Metrics(namespace=_namespace(), service="gligabao")


def lambda_stack(handler: Handler) -> Handler:
    """A Lambda handler with Powertools' Logger (the Lambda context in every
    log line), Tracer (a segment for the invocation, its cold start and
    errors) and Metrics (the ColdStart metric), as Powertools documents them.
    Called in-process without a Lambda context (the local server, tests), the
    handler runs bare: there is nothing to trace or log it with. The stack is
    built by the first invocation with a context (see ``tracer``)."""

    @functools.cache
    def decorated() -> Callable[[Any, Any], Any]:
        return tracer().capture_lambda_handler(  # type: ignore[no-any-return]
            metrics().log_metrics(
                logger.inject_lambda_context(handler), capture_cold_start_metric=True
            )
        )

    @functools.wraps(handler)
    def entry(event: Any, context: Any) -> Any:
        return handler(event, context) if context is None else decorated()(event, context)

    return entry  # type: ignore[return-value]


# True in a ``gligabao.Memory`` call: its calls are recorded (call records,
# inferences) but print no log line or metrics to the embedding program's
# stdout, which is not CloudWatch's.
_silenced: contextvars.ContextVar[bool] = contextvars.ContextVar("gb_silenced", default=False)


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    token = _silenced.set(True)
    try:
        yield
    finally:
        _silenced.reset(token)


def emit(call: CallRecord, endpoint: str, http_status: int) -> None:
    """Never raises: monitoring must not turn an answer into an error."""
    if _silenced.get():
        return
    try:
        _emit(call, endpoint, http_status)
    except Exception:
        logger.exception("could not emit the call's monitoring event")


def _emit(call: CallRecord, endpoint: str, http_status: int) -> None:
    totals = call.totals()
    tokens = totals["input_tokens"] + totals["output_tokens"]
    logger.info(
        "call",
        extra={
            "endpoint": endpoint,
            "call_id": call.call_id,
            "user_id": call.user_id,
            "dataset": call.dataset,
            "session_id": call.session_id,
            "status": call.status,
            "http_status": http_status,
            "latency_ms": round(call.duration_ms, 2),
            **totals,
            "tokens": tokens,
        },
    )
    # One metric set per call, flushed (and dropped) at its end.
    m = EphemeralMetrics(namespace=_namespace(), service="gligabao")
    m.add_dimension(name="endpoint", value=endpoint)
    m.add_metric(name="Calls", unit=MetricUnit.Count, value=1)
    m.add_metric(name="Errors", unit=MetricUnit.Count, value=0 if http_status < 500 else 1)
    m.add_metric(name="Latency", unit=MetricUnit.Milliseconds, value=call.duration_ms)
    m.add_metric(name="LLMCalls", unit=MetricUnit.Count, value=totals["llm_calls"])
    m.add_metric(
        name="LLMErrors",
        unit=MetricUnit.Count,
        value=sum(1 for i in call.inferences if i.status != "ok"),
    )
    m.add_metric(name="Tokens", unit=MetricUnit.Count, value=tokens)
    m.add_metric(name="CostUSD", unit=MetricUnit.NoUnit, value=totals["cost_usd"])
    m.flush_metrics()
