"""The plumbing every handler shares: a Powertools resolver with our error
mapping, the body rules, the call id header, and the call runner that records
each call's trajectory, inferences and monitoring event."""

from __future__ import annotations

import base64
import contextlib
import contextvars
import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types

from .. import deadline
from ..ai.port import LLM, Embedder
from ..ai.rerank.port import Reranker
from ..errors import BadRequest, Busy, DeadlineExceeded, GbError, PayloadTooLarge, UpstreamError
from ..events.publisher import recording
from ..records.meter import Meter
from ..records.model import CallRecord, Step, new_call
from ..records.monitor import emit, lambda_stack, logger
from ..records.port import RecordStore
from .jsonin import UnsafeJson, loads

MAX_BODY_BYTES = 64 * 1024
# The status of a queued call that failed for a reason that may pass and
# will run again (the queue redelivers it).
RETRYING = "retrying: "
CALL_ID_HEADER = "X-Gb-Call-Id"

_call_id: contextvars.ContextVar[str] = contextvars.ContextVar("gb_call_id", default="")
# When the request reached the handler, and its body size: the "parse" step
# of the trajectory (validation and options) is the time until the use case.
_received: contextvars.ContextVar[tuple[float, int]] = contextvars.ContextVar(
    "gb_received", default=(0.0, 0)
)


def current_call_id() -> str:
    return _call_id.get() or uuid.uuid4().hex


@contextlib.contextmanager
def call_id_set(call_id: str) -> Iterator[None]:
    """Run with this call id (a queued job carries the id its request got)."""
    token = _call_id.set(call_id)
    try:
        yield
    finally:
        _call_id.reset(token)


def error_response(status: int, message: str) -> Response[str]:
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps({"error": message}),
    )


def make_app() -> APIGatewayHttpResolver:
    app = APIGatewayHttpResolver()

    @app.exception_handler(GbError)
    def _domain_error(exc: GbError) -> Response[str]:
        response = error_response(exc.status, exc.message)
        if isinstance(exc, Busy):
            response.headers["Retry-After"] = str(exc.retry_after)
        if isinstance(exc, UpstreamError) and exc.detail:
            # how it failed (classes, request IDs, tables) stays in the log
            logger.warning("upstream failure: %s", exc.detail, extra={"call_id": current_call_id()})
        return response

    @app.exception_handler(json.JSONDecodeError)
    def _bad_json(exc: json.JSONDecodeError) -> Response[str]:
        return error_response(400, f"invalid JSON body: {exc.msg}")

    @app.not_found
    def _not_found(exc: Exception) -> Response[str]:
        allowed = allowed_methods(app, app.current_event.path)
        if not allowed:
            return error_response(404, "no such route")
        method = app.current_event.http_method.upper()
        response = error_response(405, f"{method} is not allowed here: {', '.join(allowed)}")
        response.headers["Allow"] = ", ".join(allowed)
        return response

    return app


def allowed_methods(app: APIGatewayHttpResolver, path: str) -> list[str]:
    """The methods served at ``path`` (HEAD with GET), for a 405's
    ``Allow``: the route table's (api/routes.py), not the resolver's, which
    also holds the routes that only answer 405 (GET and DELETE /mcp); empty
    for a path no route has."""
    from .routes import methods_at

    return methods_at(path)


def json_body(app: APIGatewayHttpResolver) -> Any:
    try:
        raw = app.current_event.decoded_body or ""
    except ValueError as exc:  # bytes that are not UTF-8 (or broken base64)
        raise BadRequest("the body must be JSON in UTF-8") from exc
    if not raw.strip():
        raise json.JSONDecodeError("empty body", raw, 0)
    try:
        return loads(raw)
    except UnsafeJson as exc:
        raise BadRequest(f"invalid JSON body: {exc}") from None


def json_response(status: int, payload: Any) -> Response[str]:
    return Response(
        status_code=status, content_type=content_types.APPLICATION_JSON, body=json.dumps(payload)
    )


def _body_size(event: dict[str, Any]) -> int:
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        try:
            return len(base64.b64decode(body))
        except ValueError:
            return len(body)
    return len(body.encode())


def lambda_entry(
    app: APIGatewayHttpResolver,
    error_body: Callable[[int, str], dict[str, Any]] = lambda status, message: {"error": message},
) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The Lambda handler around a resolver: the body limit, a call id on
    every response (errors too), and a JSON 500 for what nothing else caught
    (``error_body`` shapes those two: the MCP endpoint answers JSON-RPC)."""

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        event = _head_as_get(event)
        call_id = uuid.uuid4().hex
        token = _call_id.set(call_id)
        size = _body_size(event)
        received = _received.set((time.perf_counter(), size))
        try:
            if size > MAX_BODY_BYTES:
                exc = PayloadTooLarge("the request body is larger than 64 KiB")
                result = _plain(exc.status, error_body(exc.status, exc.message))
            else:
                try:
                    with deadline.lambda_budget(context):
                        result = app.resolve(event, context)
                except Exception:
                    logger.exception("unhandled error")
                    result = _plain(500, error_body(500, "internal error"))
        finally:
            _call_id.reset(token)
            _received.reset(received)
        headers = result.setdefault("headers", {}) or {}
        headers[CALL_ID_HEADER] = call_id
        result["headers"] = headers
        return result

    return lambda_stack(handler)


def _head_as_get(event: dict[str, Any]) -> dict[str, Any]:
    """HEAD is answered where GET is, as that GET (the server sends the
    headers only)."""
    http = (event.get("requestContext") or {}).get("http") or {}
    if str(http.get("method", "")).upper() != "HEAD":
        return event
    context = {**event["requestContext"], "http": {**http, "method": "GET"}}
    return {**event, "requestContext": context}


def _plain(status: int, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": {"Content-Type": content_types.APPLICATION_JSON},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


@dataclass(frozen=True)
class CallServices:
    """What a recorded call uses, passed in by the handler: the models its
    meter counts, and where its record is saved."""

    llm: LLM
    embedder: Embedder
    records: RecordStore
    reranker: Reranker | None = None  # None: reranking is off


def run_call(
    services: CallServices,
    type_: str,
    user_id: str,
    dataset: str,
    session_id: str | None,
    work: Callable[[Meter], dict[str, Any]],
    *,
    background: bool = False,
    retry_if: Callable[[GbError], bool] | None = None,
) -> dict[str, Any]:
    """Run a use case inside a recorded call: its steps and inferences are
    saved whatever the outcome, and one monitoring event is emitted.

    ``background`` (a queued job): the record is saved as ``running`` first,
    and the final record also keeps the response under ``result``. An error
    for which ``retry_if`` is true is saved as ``retrying: <error>``."""
    from ..config import settings

    call: CallRecord = new_call(current_call_id(), type_, user_id, dataset, session_id)
    started, size = _received.get()
    if started:
        call.steps.append(Step("parse", (time.perf_counter() - started) * 1000, {"bytes": size}))
    cfg = settings()
    meter = Meter(
        call, services.llm, services.embedder, cfg.prices, services.reranker, cfg.rerank_prices
    )
    http_status = 200
    if background:
        call.status = "running"
        _save(services.records, call)
    try:
        with recording(call):  # the events' deliveries go into its steps
            result = work(meter)
        call.finish("ok")
        if background:
            call.result = result
        return result
    except Exception as exc:
        if deadline.expired() and not isinstance(exc, DeadlineExceeded):
            # a call that failed because the budget ran out (an LLM or
            # database timeout at the end of it) is a timeout: 504
            late = DeadlineExceeded(f"the time budget ran out ({_reason(exc)})")
            http_status = late.status
            call.finish(late.message)
            raise late from exc
        if isinstance(exc, GbError):
            http_status = exc.status
            retrying = retry_if is not None and retry_if(exc)
            call.finish(f"{RETRYING}{exc.message}" if retrying else exc.message)
        else:
            http_status = 500
            call.finish(f"internal error: {type(exc).__name__}")
        raise
    finally:
        _save(services.records, call)
        emit(call, type_, http_status)


def _reason(exc: Exception) -> str:
    return exc.message if isinstance(exc, GbError) else type(exc).__name__


def _save(records: RecordStore, call: CallRecord) -> None:
    try:
        records.save_call(call)
    except Exception:  # records must never turn a good answer into an error
        logger.exception("could not save the call record", extra={"call_id": call.call_id})
