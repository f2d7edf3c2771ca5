"""Monitoring: one structured (JSON) log line per call, CloudWatch embedded
metric format (EMF) metrics, and the X-Ray subsegment of each invocation
(:mod:`.tracing`).

The log lines and metrics keep the shape Powertools' Logger and Metrics gave
them (the same keys, the Lambda context in every line of an invocation, the
``ColdStart`` metric), written here with the standard library: importing
Powertools' logging and metrics costs 60-160 ms of a cold start, for a JSON
formatter and a print.

The namespace is ``POWERTOOLS_METRICS_NAMESPACE``, ``gligabao`` by default;
``POWERTOOLS_METRICS_DISABLED`` (or ``POWERTOOLS_DEV``) turns the metrics
off and ``POWERTOOLS_LOG_LEVEL`` (or ``LOG_LEVEL``) sets the level, as they
did with Powertools.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from . import aws_calls, tracing
from .model import CallRecord

SERVICE = "gligabao"
DEFAULT_NAMESPACE = "gligabao"
NAMESPACE_ENV = "POWERTOOLS_METRICS_NAMESPACE"
_TRUE = {"1", "true", "yes", "on"}
# The attributes every LogRecord has: the rest came in ``extra``.
_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message"}

Handler = TypeVar("Handler", bound=Callable[[Any, Any], Any])

# The Lambda context of the invocation being served, in every line it logs.
_context_keys: dict[str, Any] = {}
_cold_start = [True]
_write_lock = threading.Lock()


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "level": record.levelname,
            "location": f"{record.funcName}:{record.lineno}",
            "message": record.getMessage(),
            "timestamp": self.formatTime(record),
            "service": SERVICE,
            **_context_keys,
        }
        out.update((k, v) for k, v in vars(record).items() if k not in _RESERVED)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
            out["exception_name"] = record.exc_info[0].__name__ if record.exc_info[0] else ""
        return json.dumps(out, default=str)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        ms = int(record.msecs)
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(record.created)) + f",{ms:03d}+0000"


class _Stdout(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stdout is when a line is written (pytest's
    capture, a redirected server), not the one at import."""

    def __init__(self) -> None:
        super().__init__()

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stdout

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _logger() -> logging.Logger:
    log = logging.getLogger(SERVICE)
    if not any(isinstance(h, _Stdout) for h in log.handlers):
        handler = _Stdout()
        handler.setFormatter(JsonFormatter())
        log.addHandler(handler)
    level = os.environ.get("POWERTOOLS_LOG_LEVEL") or os.environ.get("LOG_LEVEL") or "INFO"
    log.setLevel(level.upper() if level.upper() in logging.getLevelNamesMapping() else "INFO")
    log.propagate = False
    return log


logger = _logger()


def context_keys() -> dict[str, Any]:
    """The Lambda context keys every log line of this invocation carries."""
    return dict(_context_keys)


def namespace() -> str:
    return os.environ.get(NAMESPACE_ENV) or DEFAULT_NAMESPACE


def put_metrics(dimensions: dict[str, str], values: list[tuple[str, str, float]]) -> None:
    """One EMF document: ``values`` are (name, unit, value)."""
    if _truthy("POWERTOOLS_METRICS_DISABLED") or _truthy("POWERTOOLS_DEV"):
        return
    dims = {**dimensions, "service": SERVICE}
    doc: dict[str, Any] = {
        "_aws": {
            "Timestamp": int(time.time() * 1000),
            "CloudWatchMetrics": [
                {
                    "Namespace": namespace(),
                    "Dimensions": [list(dims)],
                    "Metrics": [{"Name": n, "Unit": u} for n, u, _ in values],
                }
            ],
        },
        **dims,
        **{n: [float(v)] for n, _, v in values},
    }
    line = json.dumps(doc) + "\n"
    with _write_lock:  # one line per document, whatever the threads
        sys.stdout.write(line)
        sys.stdout.flush()


def _invocation_keys(context: Any) -> dict[str, Any]:
    keys = {
        "cold_start": _cold_start[0],
        "function_name": getattr(context, "function_name", ""),
        "function_memory_size": getattr(context, "memory_limit_in_mb", ""),
        "function_arn": getattr(context, "invoked_function_arn", ""),
        "function_request_id": getattr(context, "aws_request_id", ""),
    }
    trace = tracing.trace_header()
    if trace is not None:
        keys["xray_trace_id"] = trace[0]
    return keys


def lambda_stack(handler: Handler) -> Handler:
    """A Lambda handler with the Lambda context in every log line, the
    ``ColdStart`` metric on a container's first invocation, and the
    invocation's X-Ray subsegment. Called in-process without a Lambda
    context (the local server, tests), the handler runs bare."""

    @functools.wraps(handler)
    def entry(event: Any, context: Any) -> Any:
        if context is None:
            return handler(event, context)
        _context_keys.clear()
        _context_keys.update(_invocation_keys(context))
        if _cold_start[0]:
            put_metrics(
                {"function_name": str(getattr(context, "function_name", ""))},
                [("ColdStart", "Count", 1)],
            )
        _cold_start[0] = False
        try:
            with tracing.invocation(getattr(handler, "__name__", "handler")) as span:
                if span is not None:
                    aws_calls.patch_botocore()
                return handler(event, context)
        finally:
            _context_keys["cold_start"] = False

    return entry  # type: ignore[return-value]


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
    put_metrics(
        {"endpoint": endpoint},
        [
            ("Calls", "Count", 1),
            ("Errors", "Count", 0 if http_status < 500 else 1),
            ("Latency", "Milliseconds", call.duration_ms),
            ("LLMCalls", "Count", totals["llm_calls"]),
            ("LLMErrors", "Count", sum(1 for i in call.inferences if i.status != "ok")),
            ("Tokens", "Count", tokens),
            ("CostUSD", "None", totals["cost_usd"]),
        ],
    )
