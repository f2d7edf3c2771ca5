"""The stack's reranker (RerankProvider): off by default with no grant; on,
the functions that run queries (query, MCP, the worker of queued queries)
may call Rerank and invoke exactly the configured model, in its region."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cfnlint")

from cfn import EvaluatedStack, load

QUERY_FUNCTIONS = {"QueryFunction", "McpFunction", "RememberWorkerFunction"}


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return load()


def _functions(stack: EvaluatedStack) -> set[str]:
    return set(stack.of_type("AWS::Serverless::Function"))


def test_off_by_default_with_no_grant(raw: dict[str, Any]) -> None:
    stack = EvaluatedStack(raw)
    for fn in _functions(stack):
        assert stack.env(fn)["GB_RERANK_PROVIDER"] == "none"
        assert stack.env(fn)["GB_RERANK_MODEL"] == ""
        assert stack.grants(fn, "bedrock:Rerank") == [], fn
        assert not [r for r in stack.grants(fn, "bedrock:InvokeModel") if "rerank" in r], fn


@pytest.mark.parametrize(
    ("params", "arn"),
    [
        ({}, "arn:aws:bedrock:eu-west-1::foundation-model/cohere.rerank-v3-5:0"),
        (
            {"RerankModel": "amazon.rerank-v1:0", "RerankRegion": "us-west-2"},
            "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0",
        ),
    ],
)
def test_on_grants_rerank_and_exactly_its_model(
    raw: dict[str, Any], params: dict[str, str], arn: str
) -> None:
    stack = EvaluatedStack(raw, RerankProvider="bedrock", **params)
    for fn in QUERY_FUNCTIONS:
        env = stack.env(fn)
        assert env["GB_RERANK_PROVIDER"] == "bedrock"
        assert env["GB_RERANK_MODEL"] == arn.rsplit("/", 1)[1]
        assert env["GB_RERANK_REGION"] == params.get("RerankRegion", "")
        assert stack.grants(fn, "bedrock:Rerank") == ["*"]
        assert arn in stack.grants(fn, "bedrock:InvokeModel")
    for fn in _functions(stack) - QUERY_FUNCTIONS:
        assert stack.grants(fn, "bedrock:Rerank") == [], fn
        assert arn not in stack.grants(fn, "bedrock:InvokeModel"), fn
