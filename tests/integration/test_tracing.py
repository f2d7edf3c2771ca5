"""X-Ray under Lambda with tracing on, through Powertools' Tracer (built by the
first invocation, not at import): the invocation sends its ``## handler``
subsegment, annotated with the cold start, and under it one subsegment per
DynamoDB call, all in the invocation's trace, to the daemon (a UDP socket on
loopback standing in for the one Lambda runs). Unsampled, nothing is sent.

Each case runs in a fresh interpreter: the X-Ray SDK decides at its import
whether it runs in Lambda, and patches botocore for the whole process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from typing import Any

import pytest

ROOT = "1-6750a1b2-0123456789abcdef01234567"
PARENT = "53995c3f42cd8ad8"

# The handler invoked as Lambda does: the module imported (the Tracer is not
# built yet), then one invocation with a context.
SCRIPT = """
import json, sys
from gligabao.local.embedded import create_tables
create_tables()
import gligabao.handlers.datasets as handler
from gligabao.local.server import make_event

class Context:  # what Lambda passes
    function_name = "gb-QueryFunction"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:gb-QueryFunction"
    memory_limit_in_mb = 1024
    aws_request_id = "c6af9ac6-7b61-11e6-9a41-93e812345678"
    def get_remaining_time_in_millis(self):
        return 20_000

assert "aws_xray_sdk" not in sys.modules
event = make_event("GET", "/v1/gb/datasets?user_id=u1", {}, b"", "127.0.0.1")
out = handler.lambda_handler(event, Context())
print(json.dumps({"status": out["statusCode"]}))
"""


def invoke(moto_url: str, sampled: str, daemon: socket.socket) -> str:
    prefix = f"t{uuid.uuid4().hex[:10]}_"
    env = {
        **os.environ,
        "GB_DYNAMODB_ENDPOINT": moto_url,
        "GB_TABLE_PREFIX": prefix,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "LAMBDA_TASK_ROOT": "/var/task",
        "AWS_LAMBDA_FUNCTION_NAME": "gb-QueryFunction",
        "_X_AMZN_TRACE_ID": f"Root={ROOT};Parent={PARENT};Sampled={sampled}",
        "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{daemon.getsockname()[1]}",
        "POWERTOOLS_METRICS_NAMESPACE": "gligabao-test",
    }
    for off in ("AWS_SAM_LOCAL", "POWERTOOLS_TRACE_DISABLED", "POWERTOOLS_DEV"):
        env.pop(off, None)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"status": 200}
    return prefix


@pytest.fixture
def daemon() -> Any:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.2)
    yield sock
    sock.close()


def received(sock: socket.socket) -> list[dict[str, Any]]:
    """The documents sent so far: each datagram is a header line, then one
    segment document (or, batched, a subsegment's tree)."""
    docs: list[dict[str, Any]] = []
    while True:
        try:
            data = sock.recv(65536)
        except TimeoutError:
            return docs
        header, _, body = data.partition(b"\n")
        assert json.loads(header) == {"format": "json", "version": 1}
        docs.append(json.loads(body))


def flatten(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    todo = list(docs)
    while todo:
        doc = todo.pop()
        out.append(doc)
        todo.extend(doc.get("subsegments", []))
    return out


def test_a_sampled_invocation_sends_its_subsegments(moto_url: str, daemon: socket.socket) -> None:
    prefix = invoke(moto_url, "1", daemon)
    sent = received(daemon)
    assert sent and all(d["trace_id"] == ROOT for d in sent)
    docs = flatten(sent)
    [handler] = [d for d in docs if d["name"] == "## handler"]
    assert handler["parent_id"] == PARENT
    assert handler["annotations"]["ColdStart"] is True
    assert handler["annotations"]["Service"] == "gligabao"
    dynamo = [d for d in docs if d.get("namespace") == "aws" and d["name"] == "dynamodb"]
    assert dynamo, [d["name"] for d in docs]
    assert all(
        d["aws"]["table_name"].startswith(prefix) for d in dynamo if "table_name" in d["aws"]
    )
    assert all(d["http"]["response"]["status"] == 200 for d in dynamo)


def test_an_unsampled_invocation_sends_nothing(moto_url: str, daemon: socket.socket) -> None:
    invoke(moto_url, "0", daemon)
    assert received(daemon) == []
