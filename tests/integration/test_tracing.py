"""X-Ray under Lambda with tracing on: a query's invocation sends its
``## handler`` subsegment and, under it, one subsegment per DynamoDB call and
per model request to the daemon (here a UDP socket on loopback standing in
for the one Lambda runs), all in the invocation's trace. Unsampled, or
outside Lambda, nothing is sent."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from remember_helpers import works_at
from test_deadline import LambdaContext

from conftest import Harness
from gligabao.local.server import make_event

ROOT = "1-6750a1b2-0123456789abcdef01234567"
PARENT = "53995c3f42cd8ad8"


@pytest.fixture
def daemon(monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.2)
    monkeypatch.setenv("AWS_XRAY_DAEMON_ADDRESS", f"127.0.0.1:{sock.getsockname()[1]}")
    monkeypatch.setenv("LAMBDA_TASK_ROOT", "/var/task")
    monkeypatch.delenv("AWS_SAM_LOCAL", raising=False)
    monkeypatch.delenv("POWERTOOLS_TRACE_DISABLED", raising=False)
    yield sock
    sock.close()


def received(sock: socket.socket) -> list[dict[str, Any]]:
    docs = []
    while True:
        try:
            data = sock.recv(65536)
        except TimeoutError:
            return docs
        header, _, body = data.partition(b"\n")
        assert json.loads(header) == {"format": "json", "version": 1}
        docs.append(json.loads(body))


def invoke_query(gb: Harness, monkeypatch: pytest.MonkeyPatch, sampled: str) -> dict[str, Any]:
    from gligabao.handlers import query

    monkeypatch.setenv("_X_AMZN_TRACE_ID", f"Root={ROOT};Parent={PARENT};Sampled={sampled}")
    body = json.dumps({"user_id": "u1", "query": "Where does Alice work?"}).encode()
    event = make_event("POST", "/v1/gb/query", {"content-type": "application/json"}, body, "::1")
    return dict(query.lambda_handler(event, LambdaContext(20_000)))


def test_a_sampled_invocation_sends_its_subsegments(
    gb: Harness, daemon: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    gb.llm.default("query", {"answer": "Acme.", "entities": [], "edges": [], "passages": []})
    gb.llm.default("extract", works_at())
    gb.remember("Alice works at Acme.")  # over HTTP: not a Lambda invocation, not traced
    received(daemon)
    assert invoke_query(gb, monkeypatch, "1")["statusCode"] == 200
    docs = received(daemon)
    assert docs and all(d["type"] == "subsegment" and d["trace_id"] == ROOT for d in docs)
    assert all(d["end_time"] >= d["start_time"] for d in docs)
    [handler] = [d for d in docs if d["name"].startswith("## ")]
    assert handler["parent_id"] == PARENT
    assert handler["annotations"]["Service"] == "gligabao"
    assert isinstance(handler["annotations"]["ColdStart"], bool)
    ids = {d["id"] for d in docs}
    assert all(d["parent_id"] in ids for d in docs if d is not handler)

    dynamo = [d for d in docs if d.get("namespace") == "aws" and d["name"] == "DynamoDB"]
    assert dynamo, [d["name"] for d in docs]
    assert all(d["aws"]["table_name"].startswith(gb.prefix) for d in dynamo if "table_name" in d["aws"])
    ops = {d["aws"]["operation"] for d in dynamo}
    assert {"Query", "BatchGetItem"} <= ops  # the reads
    assert ops & {"PutItem", "UpdateItem", "BatchWriteItem", "TransactWriteItems"}  # the record
    assert all(d["http"]["response"]["status"] == 200 for d in dynamo)
    assert all(d["aws"].get("request_id") for d in dynamo)

    remote = {d["name"]: d for d in docs if d.get("namespace") == "remote"}
    assert remote["anthropic"]["metadata"]["gligabao"]["stage"] == "query"
    assert remote["openai"]["metadata"]["gligabao"]["stage"] == "embed"
    assert not any(d.get("fault") or d.get("error") for d in docs)


def test_a_failed_model_request_is_a_fault(
    gb: Harness, daemon: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    gb.llm.default("extract", works_at())
    gb.remember("Alice works at Acme.")
    received(daemon)
    gb.llm.fail_next(500, stage="query")
    assert invoke_query(gb, monkeypatch, "1")["statusCode"] == 502
    docs = received(daemon)
    [llm] = [d for d in docs if d["name"] == "anthropic"]
    assert llm["fault"] is True
    assert llm["cause"]["exceptions"][0]["type"] == "UpstreamError"


def test_unsampled_or_outside_lambda_sends_nothing(
    gb: Harness, daemon: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    gb.llm.default("query", {"answer": "Acme.", "entities": [], "edges": [], "passages": []})
    gb.llm.default("extract", works_at())
    gb.remember("Alice works at Acme.")
    assert invoke_query(gb, monkeypatch, "0")["statusCode"] == 200
    assert received(daemon) == []
    monkeypatch.delenv("LAMBDA_TASK_ROOT")
    assert invoke_query(gb, monkeypatch, "1")["statusCode"] == 200
    assert received(daemon) == []
