"""One deadline: the Lambda's remaining time is the budget of every call
after it. A slow LLM past the budget ends as a JSON 504 with a call record
(never Lambda's bare 500 after a kill)."""

from __future__ import annotations

import json
from typing import Any

from conftest import Harness
from gligabao.local.server import make_event


def _seed(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        {
            "entities": [{"name": "Alice", "type": "person"}, {"name": "Acme", "type": "company"}],
            "edges": [
                {
                    "source": "Alice",
                    "target": "Acme",
                    "relation": "works_at",
                    "description": "Alice works at Acme.",
                }
            ],
        },
    )
    gb.remember("Alice works at Acme.")


class LambdaContext:
    """What Lambda passes: its identity and the time left of the invocation."""

    function_name = "gb-QueryFunction"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:gb-QueryFunction"
    memory_limit_in_mb = 1024
    aws_request_id = "c6af9ac6-7b61-11e6-9a41-93e812345678"
    log_group_name = "/aws/lambda/gb-QueryFunction"
    log_stream_name = "2026/12/01/[$LATEST]abc"

    def __init__(self, remaining_ms: int) -> None:
        import time

        self._end = time.monotonic() + remaining_ms / 1000

    def get_remaining_time_in_millis(self) -> int:
        import time

        return max(0, int((self._end - time.monotonic()) * 1000))


def _invoke(handler: Any, method: str, target: str, body: Any, remaining_ms: int) -> dict[str, Any]:
    event = make_event(
        method, target, {"content-type": "application/json"}, json.dumps(body).encode(), "127.0.0.1"
    )
    return dict(handler(event, LambdaContext(remaining_ms)))


def test_a_slow_llm_past_the_budget_answers_json_504_with_a_call_record(gb: Harness) -> None:
    from gligabao.handlers import query

    _seed(gb)
    # 4.5 s left: 2.5 s of budget after the reserve; the LLM takes 8 s
    gb.llm.delay_next(8.0, stage="query")
    out = _invoke(
        query.lambda_handler,
        "POST",
        "/v1/gb/query",
        {"user_id": "u1", "query": "Where does Alice work?"},
        4_500,
    )
    assert out["statusCode"] == 504, out
    assert out["headers"]["Content-Type"] == "application/json"
    body = json.loads(out["body"])
    assert "time budget ran out" in body["error"]
    call_id = out["headers"]["X-Gb-Call-Id"]

    call = gb.client.get(f"/v1/gb/calls/{call_id}?user_id=u1")
    assert call.status == 200, call.body
    assert call.body["type"] == "query"
    assert "time budget ran out" in call.body["status"]
    rows = gb.client.get(f"/v1/gb/inferences?user_id=u1&call_id={call_id}").body["inferences"]
    [llm_row] = [r for r in rows if r["stage"] == "query"]
    assert "time budget ran out" in llm_row["status"]


def test_a_budget_already_spent_calls_nothing(gb: Harness) -> None:
    from gligabao.handlers import query

    _seed(gb)
    before = gb.llm.calls("query"), gb.emb.calls()
    # less than the reserve left: nothing may start
    out = _invoke(
        query.lambda_handler,
        "POST",
        "/v1/gb/query",
        {"user_id": "u1", "query": "Where does Alice work?"},
        1_000,
    )
    assert out["statusCode"] == 504, out
    assert json.loads(out["body"])["error"].startswith("the time budget ran out before")
    assert (gb.llm.calls("query"), gb.emb.calls()) == before


def test_without_a_lambda_context_there_is_no_deadline(gb: Harness) -> None:
    from gligabao.handlers import query

    _seed(gb)
    event = make_event(
        "POST",
        "/v1/gb/query",
        {"content-type": "application/json"},
        json.dumps({"user_id": "u1", "query": "Where does Alice work?"}).encode(),
        "127.0.0.1",
    )
    assert query.lambda_handler(event, None)["statusCode"] == 200
