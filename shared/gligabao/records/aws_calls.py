"""Every botocore call of a traced invocation as an X-Ray ``aws``
subsegment (:mod:`.tracing`): botocore's ``BaseClient._make_api_call`` is
wrapped once, on the first traced invocation (as the X-Ray SDK patches it),
so every client is covered (DynamoDB, SQS, Bedrock), however it was built.
Apart from :mod:`.tracing` so that the use cases, which time their model
requests with it, never import botocore."""

from __future__ import annotations

from typing import Any

from .tracing import Span, current, http_status, subsegment

_patched = [False]


def patch_botocore() -> None:
    """Every botocore call of a traced invocation as an ``aws`` subsegment."""
    if _patched[0]:
        return
    _patched[0] = True
    from botocore.client import BaseClient

    original = BaseClient._make_api_call  # type: ignore[attr-defined]

    def traced(self: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
        if current() is None:
            return original(self, operation_name, api_params)
        meta = self.meta
        aws: dict[str, Any] = {"operation": operation_name, "region": meta.region_name}
        if isinstance(api_params.get("TableName"), str):
            aws["table_name"] = api_params["TableName"]
        with subsegment(meta.service_model.service_id, "aws", aws=aws) as span:
            try:
                result = original(self, operation_name, api_params)
            except Exception as exc:
                _response(span, getattr(exc, "response", None))
                raise
            _response(span, result)
            return result

    BaseClient._make_api_call = traced  # type: ignore[attr-defined]


def _response(span: Span | None, response: Any) -> None:
    if span is None or not isinstance(response, dict):
        return
    meta = response.get("ResponseMetadata") or {}
    if meta.get("RequestId"):
        span.doc["aws"]["request_id"] = meta["RequestId"]
    if meta.get("RetryAttempts"):
        span.doc["aws"]["retries"] = meta["RetryAttempts"]
    if meta.get("HTTPStatusCode"):
        http_status(span, int(meta["HTTPStatusCode"]))
