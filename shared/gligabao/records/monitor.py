"""Monitoring: one structured log line per call, and CloudWatch embedded
metric format metrics, through Powertools.

The namespace is ``POWERTOOLS_METRICS_NAMESPACE`` (Powertools' own setting),
``gligabao`` by default. Powertools keeps one metric set per process, shared
by every ``Metrics`` instance: the lock keeps the calls of a threaded server
(``gligabao serve``) from flushing each other's metrics.
"""

from __future__ import annotations

import os
import threading

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from .model import CallRecord

DEFAULT_NAMESPACE = "gligabao"
NAMESPACE_ENV = "POWERTOOLS_METRICS_NAMESPACE"

logger = Logger(service="gligabao")
_metrics_lock = threading.Lock()


def metrics() -> Metrics:
    return Metrics(namespace=os.environ.get(NAMESPACE_ENV) or DEFAULT_NAMESPACE, service="gligabao")


def emit(call: CallRecord, endpoint: str, http_status: int) -> None:
    """Never raises: monitoring must not turn an answer into an error."""
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
    with _metrics_lock:
        m = metrics()
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
        # With metrics disabled (POWERTOOLS_METRICS_DISABLED, POWERTOOLS_DEV)
        # the flush prints nothing and keeps the values: drop them, or they
        # pile up and later print mixed under another call's endpoint.
        m.clear_metrics()
