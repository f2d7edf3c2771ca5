"""The reranker adapters through their real clients (boto3's
bedrock-agent-runtime, the openai SDK's HTTP client) against loopback fakes
that check what the real APIs check: SigV4, the request shapes, the model
ARN of the region. Retries of 429 and timeouts are the SDKs' own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fakes.rerank_server import FakeBedrockRerank, FakeRerank
from gligabao import deadline
from gligabao.ai.rerank.bedrock import BedrockReranker
from gligabao.ai.rerank.http_api import HttpReranker
from gligabao.ai.rerank.port import RerankRequest
from gligabao.errors import DeadlineExceeded, UpstreamError
from gligabao.records.meter import Meter
from gligabao.records.model import new_call

DOCS = ["Alice paints landscapes.", "Bob fixes bikes.", "The weather was mild."]
QUESTION = RerankRequest("What does Bob fix?", DOCS)


@pytest.fixture
def http_fake() -> Iterator[FakeRerank]:
    with FakeRerank() as fake:
        yield fake


@pytest.fixture
def bedrock_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeBedrockRerank]:
    with FakeBedrockRerank() as fake:
        for k, v in fake.env().items():
            if v:
                monkeypatch.setenv(k, v)
            else:
                monkeypatch.delenv(k, raising=False)
        yield fake


def http_reranker(fake: FakeRerank, **kw: Any) -> HttpReranker:
    kw.setdefault("max_retries", 0)
    return HttpReranker(fake.base_url, "rerank-test", fake.api_key, **kw)


def bedrock_reranker(
    fake: FakeBedrockRerank, model: str = "cohere.rerank-v3-5:0", **kw: Any
) -> BedrockReranker:
    kw.setdefault("max_retries", 0)
    return BedrockReranker(model, fake.region, endpoint_url=fake.url, **kw)


# ------------------------------------------------------------------ /v1/rerank


def test_http_sends_the_common_json_and_reads_the_order(http_fake: FakeRerank) -> None:
    http_fake.prefer("bikes", 0.9).prefer("weather", 0.5)
    reply = http_reranker(http_fake).rerank(QUESTION)
    [req] = http_fake.reranks()
    assert req.headers["authorization"] == f"Bearer {http_fake.api_key}"
    assert req.body == {
        "model": "rerank-test",
        "query": QUESTION.query,
        "documents": DOCS,
        "top_n": 3,
    }
    assert [r.index for r in reply.results] == [1, 2, 0]
    assert reply.results[0].score == 0.9
    assert reply.input_tokens == req.reply["usage"]["total_tokens"]
    assert reply.search_units == 1


def test_http_without_a_model_sends_none(http_fake: FakeRerank) -> None:
    HttpReranker(http_fake.base_url, "", http_fake.api_key, max_retries=0).rerank(QUESTION)
    assert "model" not in http_fake.last_request()


def test_http_429_then_success_is_retried(http_fake: FakeRerank) -> None:
    http_fake.fail_next(429).prefer("bikes")
    reply = http_reranker(http_fake, max_retries=1).rerank(QUESTION)
    assert [r.status for r in http_fake.reranks()] == [429, 200]
    assert reply.results[0].index == 1


def test_http_5xx_after_the_retries_is_an_upstream_error(http_fake: FakeRerank) -> None:
    http_fake.fail_next(503, times=2)
    with pytest.raises(UpstreamError, match="HTTP 503"):
        http_reranker(http_fake, max_retries=1).rerank(QUESTION)
    assert len(http_fake.reranks()) == 2


def test_http_a_timeout_is_retried_within_the_timeout(http_fake: FakeRerank) -> None:
    http_fake.delay_next(6.0).prefer("bikes")
    reply = http_reranker(http_fake, timeout_s=1.5, max_retries=1).rerank(QUESTION)
    first, retry = http_fake.reranks()
    assert first.status != 200 and retry.status == 200  # the client hung up on the first
    assert reply.results[0].index == 1


MALFORMED = [
    {"data": []},  # no results
    {"results": [{"index": 3, "relevance_score": 0.5}]},  # out of range
    {"results": [{"index": 0, "relevance_score": 0.5}, {"index": 0, "relevance_score": 0.4}]},
    {"results": [{"index": 0, "relevance_score": "high"}]},
    {"results": [{"index": True, "relevance_score": 0.5}]},
    {"results": [{"relevance_score": 0.5}]},
    ["not", "an", "object"],
]


@pytest.mark.parametrize("body", MALFORMED)
def test_http_a_malformed_reply_is_an_upstream_error(http_fake: FakeRerank, body: Any) -> None:
    http_fake.reply_next(body)
    with pytest.raises(UpstreamError, match="malformed"):
        http_reranker(http_fake).rerank(QUESTION)


def test_http_a_partial_reply_ranks_what_it_names(http_fake: FakeRerank) -> None:
    http_fake.reply_next({"results": [{"index": 2, "relevance_score": 0.7}]})
    assert [r.index for r in http_reranker(http_fake).rerank(QUESTION).results] == [2]


# ---------------------------------------------------------------- Bedrock Rerank


@pytest.mark.parametrize("model", ["cohere.rerank-v3-5:0", "amazon.rerank-v1:0"])
def test_bedrock_sends_a_signed_rerank_with_the_regions_model_arn(
    bedrock_fake: FakeBedrockRerank, model: str
) -> None:
    bedrock_fake.prefer("bikes", 0.8)
    reply = bedrock_reranker(bedrock_fake, model).rerank(QUESTION)
    [req] = bedrock_fake.reranks()
    assert req.status == 200  # the fake checked the signature, the shape and the ARN
    config = req["rerankingConfiguration"]["bedrockRerankingConfiguration"]
    assert config["modelConfiguration"]["modelArn"] == (
        f"arn:aws:bedrock:{bedrock_fake.region}::foundation-model/{model}"
    )
    assert config["numberOfResults"] == 3
    assert [s["inlineDocumentSource"]["textDocument"]["text"] for s in req["sources"]] == DOCS
    assert reply.results[0].index == 1 and reply.results[0].score == 0.8
    assert reply.model == model and reply.search_units == 1 and reply.input_tokens > 0


def test_bedrock_takes_a_full_model_arn(bedrock_fake: FakeBedrockRerank) -> None:
    arn = f"arn:aws:bedrock:{bedrock_fake.region}::foundation-model/amazon.rerank-v1:0"
    bedrock_reranker(bedrock_fake, arn).rerank(QUESTION)
    assert bedrock_fake.last_request().status == 200


def test_bedrock_throttling_then_success_is_retried(bedrock_fake: FakeBedrockRerank) -> None:
    bedrock_fake.fail_next(429).prefer("bikes")
    reply = bedrock_reranker(bedrock_fake, max_retries=1).rerank(QUESTION)
    assert [r.status for r in bedrock_fake.reranks()] == [429, 200]
    assert reply.results[0].index == 1


def test_bedrock_throttled_past_the_retries_is_an_upstream_error(
    bedrock_fake: FakeBedrockRerank,
) -> None:
    bedrock_fake.fail_next(429, times=2)
    with pytest.raises(UpstreamError, match="HTTP 429 ThrottlingException"):
        bedrock_reranker(bedrock_fake, max_retries=1).rerank(QUESTION)
    assert len(bedrock_fake.reranks()) == 2


def test_bedrock_a_timeout_is_retried(bedrock_fake: FakeBedrockRerank) -> None:
    bedrock_fake.delay_next(6.0).prefer("bikes")
    reply = bedrock_reranker(bedrock_fake, timeout_s=1.5, max_retries=1).rerank(QUESTION)
    first, retry = bedrock_fake.reranks()
    assert first.status != 200 and retry.status == 200
    assert reply.results[0].index == 1


@pytest.mark.parametrize(
    "body",
    [
        {"results": [{"index": 7, "relevanceScore": 0.5}]},
        {"results": [{"index": 0, "relevanceScore": 0.5}, {"index": 0, "relevanceScore": 0.1}]},
    ],
)
def test_bedrock_a_malformed_reply_is_an_upstream_error(
    bedrock_fake: FakeBedrockRerank, body: Any
) -> None:
    bedrock_fake.reply_next(body)
    with pytest.raises(UpstreamError, match="malformed"):
        bedrock_reranker(bedrock_fake).rerank(QUESTION)


# -------------------------------------------------------------- the Meter's row


class _Unused:
    provider = "none"
    model = "none"


def test_the_meter_records_a_rerank_priced_by_search_units(
    bedrock_fake: FakeBedrockRerank,
) -> None:
    call = new_call("c1", "query", "u1", "default", None)
    docs = [f"document {i}" for i in range(150)]  # two search units
    meter = Meter(
        call,
        _Unused(),
        _Unused(),
        {},
        bedrock_reranker(bedrock_fake),  # type: ignore[arg-type]
        {"cohere.rerank-v3-5:0": 2.0},
    )
    meter.rerank(RerankRequest("which document?", docs))
    [row] = call.inferences
    assert (row.stage, row.provider, row.model, row.status) == (
        "rerank",
        "bedrock",
        "cohere.rerank-v3-5:0",
        "ok",
    )
    assert row.cost_usd == pytest.approx(0.004)
    assert row.input_tokens > 0
    assert call.llm_calls == 0 and call.totals()["rerank_calls"] == 1


def test_the_meter_records_a_failed_rerank_and_the_deadline_bounds_it(
    http_fake: FakeRerank,
) -> None:
    call = new_call("c1", "query", "u1", "default", None)
    meter = Meter(call, _Unused(), _Unused(), {}, http_reranker(http_fake, timeout_s=30))  # type: ignore[arg-type]
    http_fake.delay_next(5.0)
    with deadline.budget(0.5), pytest.raises(DeadlineExceeded, match="rerank call"):
        meter.rerank(QUESTION)
    [row] = call.inferences
    assert row.stage == "rerank" and "time budget ran out" in row.status and row.cost_usd == 0
