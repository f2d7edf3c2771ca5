"""Monitoring: one structured log line per call, and CloudWatch embedded
metric format metrics, through Powertools."""

from __future__ import annotations

from functools import lru_cache

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from .model import CallRecord

logger = Logger(service="gligabao")


@lru_cache(maxsize=1)
def metrics() -> Metrics:
    return Metrics(namespace="gligabao", service="gligabao")


def emit(call: CallRecord, endpoint: str, http_status: int) -> None:
    totals = call.totals()
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
        },
    )
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
    m.add_metric(
        name="Tokens", unit=MetricUnit.Count, value=totals["input_tokens"] + totals["output_tokens"]
    )
    m.add_metric(name="CostUSD", unit=MetricUnit.NoUnit, value=totals["cost_usd"])
    m.flush_metrics()
