"""The Bedrock and OpenAI-compatible adapters through the real SDKs (the
boto3's bedrock-runtime client for Claude and the embedders, the openai SDK) against fakes on loopback that check what a real server checks:
SigV4 signatures, the model families' bodies, the response formats."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator

import pytest

from fakes.bedrock_server import FakeBedrock
from fakes.openai_chat_server import FakeOpenAICompatible
from fakes.openai_server import cosine
from gligabao.ai.bedrock_embedders import BedrockEmbedder
from gligabao.ai.bedrock_llm import BedrockLLM
from gligabao.ai.jsonreply import parse_json_object
from gligabao.ai.openai_llm import OpenAILLM
from gligabao.ai.port import LLMRequest
from gligabao.errors import NotConfigured, UpstreamError

PROFILE = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
PROFILE_ARN = f"arn:aws:bedrock:us-east-1:123456789012:inference-profile/{PROFILE}"
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}


@pytest.fixture
def bedrock(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeBedrock]:
    with FakeBedrock() as fake:
        for k, v in fake.env().items():
            if v:
                monkeypatch.setenv(k, v)
            else:
                monkeypatch.delenv(k, raising=False)
        yield fake


def bedrock_llm(fake: FakeBedrock) -> BedrockLLM:
    return BedrockLLM(fake.region, endpoint_url=fake.url, max_retries=0)


def request(stage: str = "query", model: str = PROFILE, reasoning: str = "none") -> LLMRequest:
    return LLMRequest(
        stage, f"[stage: {stage}] answer in JSON", "Where does Alice work?", model, reasoning, 512
    )


# ------------------------------------------------------------------ Bedrock LLM


@pytest.mark.parametrize(
    "model", [PROFILE, PROFILE_ARN, "anthropic.claude-haiku-4-5-20251001-v1:0"]
)
def test_bedrock_llm_sends_a_signed_messages_body_to_invoke_model(
    bedrock: FakeBedrock, model: str
) -> None:
    bedrock.script("query", {"answer": "Acme"})
    reply = bedrock_llm(bedrock).complete(request(model=model))
    assert parse_json_object(reply.text) == {"answer": "Acme"}
    [req] = bedrock.invocations()
    assert req.status == 200  # the fake checked the SigV4 signature
    assert req.headers["authorization"].startswith(
        f"AWS4-HMAC-SHA256 Credential={bedrock.access_key}/"
    )
    assert "/us-east-1/bedrock/aws4_request" in req.headers["authorization"]
    # botocore quotes the model ID whole in the path (":" and "/" too).
    assert req.path == "/model/" + urllib.parse.quote(model, safe="") + "/invoke"
    body = req.body
    assert "model" not in body and body["anthropic_version"]
    assert body["system"] == "[stage: query] answer in JSON"
    assert body["messages"] == [{"role": "user", "content": "Where does Alice work?"}]
    assert body["max_tokens"] == 512 and "thinking" not in body
    assert reply.input_tokens > 0 and reply.output_tokens > 0


def test_bedrock_llm_asks_for_structured_replies_by_tool_use(bedrock: FakeBedrock) -> None:
    # The Anthropic adapter's code, unchanged, through the Bedrock client.
    bedrock.script("query", {"answer": "Acme"})
    req = LLMRequest(
        "query", "[stage: query] answer", "Where does Alice work?", PROFILE, json_schema=SCHEMA
    )
    reply = bedrock_llm(bedrock).complete(req)
    assert parse_json_object(reply.text) == {"answer": "Acme"}
    body = bedrock.last_request().body
    [tool] = body["tools"]
    assert tool["input_schema"] == SCHEMA
    assert body["tool_choice"] == {"type": "tool", "name": tool["name"]}


def test_bedrock_llm_maps_reasoning_levels_as_anthropic(bedrock: FakeBedrock) -> None:
    bedrock_llm(bedrock).complete(request(reasoning="medium"))
    body = bedrock.last_request().body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert body["max_tokens"] == 512 + 4096


def test_bedrock_llm_retries_a_throttled_call_then_succeeds(bedrock: FakeBedrock) -> None:
    # boto3's standard retries, as the anthropic SDK's were: 429 then 200.
    bedrock.script("query", {"answer": "Acme"}).fail_next(429, times=1)
    llm = BedrockLLM(bedrock.region, endpoint_url=bedrock.url, max_retries=1)
    reply = llm.complete(request())
    assert parse_json_object(reply.text) == {"answer": "Acme"}
    assert [r.status for r in bedrock.invocations()] == [429, 200]


def test_bedrock_llm_gives_up_after_its_retries(bedrock: FakeBedrock) -> None:
    bedrock.fail_next(429, times=5)
    llm = BedrockLLM(bedrock.region, endpoint_url=bedrock.url, max_retries=1)
    with pytest.raises(UpstreamError, match="HTTP 429 ThrottlingException"):
        llm.complete(request())
    assert [r.status for r in bedrock.invocations()] == [429, 429]


def test_bedrock_llm_reply_that_is_not_a_messages_reply_is_an_upstream_error(
    bedrock: FakeBedrock,
) -> None:
    bedrock.fail_next(200, body={"outputs": [{"text": "Acme"}]})
    with pytest.raises(UpstreamError, match="not a Messages reply"):
        bedrock_llm(bedrock).complete(request())


def test_bedrock_llm_never_imports_the_anthropic_sdk(bedrock: FakeBedrock) -> None:
    # A fresh interpreter (this one has imported the SDK for other tests): the
    # default stack's first LLM call stays free of the SDK's import.
    bedrock.script("query", {"answer": "Acme"})
    code = (
        "import sys\n"
        "from gligabao.ai.bedrock_llm import BedrockLLM\n"
        "from gligabao.ai.port import LLMRequest\n"
        f"llm = BedrockLLM({bedrock.region!r}, endpoint_url={bedrock.url!r}, max_retries=0)\n"
        f"print(llm.complete(LLMRequest('query', '[stage: query] JSON', 'q?', {PROFILE!r})).text)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('anthropic', 'openai')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    text, loaded = out.stdout.strip().splitlines()
    assert parse_json_object(text) == {"answer": "Acme"}
    assert loaded == "[]"
    assert [r.status for r in bedrock.invocations()] == [200]


def test_bedrock_llm_with_an_api_key_and_an_http_endpoint_is_not_configured(
    bedrock: FakeBedrock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # botocore sends a Bedrock API key over https only: said as such, nothing sent.
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-for-tests")
    with pytest.raises(NotConfigured, match=r"AWS_BEARER_TOKEN_BEDROCK.*https") as err:
        bedrock_llm(bedrock).complete(request())
    assert err.value.status == 503
    assert bedrock.requests == []


def test_bedrock_llm_whose_endpoint_does_not_answer_is_an_upstream_error(
    bedrock: FakeBedrock,
) -> None:
    # A port nothing listens on (the fake's, once it is closed): botocore's
    # connection error, said in words a client may see.
    with FakeBedrock() as gone:
        url = gone.url
    llm = BedrockLLM(bedrock.region, endpoint_url=url, max_retries=0, timeout_s=2)
    with pytest.raises(UpstreamError, match="LLM call failed: unreachable"):
        llm.complete(request())


def test_bedrock_llm_signed_with_another_secret_is_refused(bedrock: FakeBedrock) -> None:
    # A server that knows another secret for the same key: the signature the
    # SDK computed cannot match (the check is real, not a header sniff).
    with FakeBedrock(secret_key="another-secret") as other:
        llm = BedrockLLM(other.region, endpoint_url=other.url, max_retries=0)
        with pytest.raises(UpstreamError, match="HTTP 403"):
            llm.complete(request())
        [req] = other.invocations()
    assert req.status == 403
    assert req.reply == {
        "message": "The request signature we calculated does not match the signature you provided"
    }


def test_bedrock_llm_without_aws_credentials_is_not_configured(
    bedrock: FakeBedrock, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", f"{tmp_path}/none")
    monkeypatch.setenv("AWS_CONFIG_FILE", f"{tmp_path}/none")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", raising=False)
    with pytest.raises(NotConfigured, match="provider bedrock"):
        bedrock_llm(bedrock).complete(request())
    assert bedrock.requests == []


# --------------------------------------------------------- Bedrock embeddings


def titan(fake: FakeBedrock, dim: int = 256, retries: int = 0) -> BedrockEmbedder:
    return BedrockEmbedder(
        "amazon.titan-embed-text-v2:0", dim, fake.region, endpoint_url=fake.url, max_retries=retries
    )


def test_titan_sends_one_signed_request_per_text(bedrock: FakeBedrock) -> None:
    texts = ["Alice", "Acme", "Alice works at Acme.", "Paris"]
    out = titan(bedrock).embed(texts, "document")
    reqs = bedrock.invocations("titan")
    assert len(reqs) == 4 and all(r.status == 200 for r in reqs)
    assert sorted(r["inputText"] for r in reqs) == sorted(texts)
    assert all(r.body.keys() == {"inputText", "dimensions", "normalize"} for r in reqs)
    assert all(r["dimensions"] == 256 and r["normalize"] is True for r in reqs)
    # The order of the vectors is the order of the texts, whatever the arrival order.
    for text, vec in zip(texts, out.vectors, strict=True):
        assert cosine(vec, bedrock.embeddings.vector(text, 256)) > 0.9999
    assert out.requests == 4 and out.input_tokens > 0


def test_titan_retries_a_throttled_request(bedrock: FakeBedrock) -> None:
    bedrock.fail_embeddings_next(429, "ThrottlingException")
    out = titan(bedrock, retries=1).embed(["Alice"], "query")
    assert len(out.vectors) == 1
    assert [r.status for r in bedrock.invocations("titan")] == [429, 200]


def test_titan_sends_one_request_plus_its_retries_and_no_more(bedrock: FakeBedrock) -> None:
    # botocore's max_attempts counts retries only; the total is what max_retries means here.
    bedrock.fail_embeddings_next(429, "ThrottlingException", times=5)
    with pytest.raises(UpstreamError):
        titan(bedrock, retries=1).embed(["Alice"], "query")
    assert [r.status for r in bedrock.invocations("titan")] == [429, 429]


def test_titan_with_an_unsupported_dimension_is_an_upstream_error(bedrock: FakeBedrock) -> None:
    with pytest.raises(UpstreamError, match="HTTP 400 ValidationException"):
        titan(bedrock, dim=64).embed(["Alice"], "document")


def test_cohere_batches_96_texts_with_the_input_type(bedrock: FakeBedrock) -> None:
    emb = BedrockEmbedder(
        "cohere.embed-v4:0", 512, bedrock.region, endpoint_url=bedrock.url, max_retries=0
    )
    texts = [f"fact number {i}" for i in range(100)]
    out = emb.embed(texts, "document")
    reqs = bedrock.invocations("cohere")
    assert [len(r["texts"]) for r in reqs] == [96, 4]
    assert all(r["input_type"] == "search_document" and r["output_dimension"] == 512 for r in reqs)
    assert len(out.vectors) == 100 and all(len(v) == 512 for v in out.vectors)
    assert cosine(out.vectors[97], bedrock.embeddings.vector(texts[97], 512)) > 0.9999
    assert out.requests == 2
    emb.embed(["Where does Alice work?"], "query")
    assert bedrock.last_request()["input_type"] == "search_query"


def test_cohere_v3_has_its_own_size_and_a_mismatch_is_refused(bedrock: FakeBedrock) -> None:
    ok = BedrockEmbedder(
        "cohere.embed-multilingual-v3",
        1024,
        bedrock.region,
        endpoint_url=bedrock.url,
        max_retries=0,
    )
    out = ok.embed(["x" * 5000], "document")
    body = bedrock.last_request().body
    assert "output_dimension" not in body and len(body["texts"][0]) == 2048
    assert len(out.vectors[0]) == 1024
    wrong = BedrockEmbedder(
        "cohere.embed-english-v3", 256, bedrock.region, endpoint_url=bedrock.url, max_retries=0
    )
    with pytest.raises(UpstreamError, match="1024 dimensions"):
        wrong.embed(["Alice"], "document")


# ------------------------------------------------------ OpenAI-compatible LLM


@pytest.fixture
def compat() -> Iterator[FakeOpenAICompatible]:
    with FakeOpenAICompatible() as fake:
        yield fake


def schema_request(stage: str = "query", reasoning: str = "none") -> LLMRequest:
    return LLMRequest(
        stage,
        f"[stage: {stage}] answer in JSON",
        "Where does Alice work?",
        "qwen2.5:3b-instruct",
        reasoning,
        300,
        json_schema=SCHEMA,
    )


def test_openai_llm_asks_for_the_json_schema(compat: FakeOpenAICompatible) -> None:
    compat.script("query", {"answer": "Acme"})
    llm = OpenAILLM("", compat.base_url, max_retries=0)
    reply = llm.complete(schema_request())
    assert parse_json_object(reply.text) == {"answer": "Acme"}
    [req] = compat.chat_requests()
    assert req.status == 200
    assert req["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "query", "schema": SCHEMA},
    }
    assert req["messages"][0] == {"role": "system", "content": "[stage: query] answer in JSON"}
    assert req["max_tokens"] == 300 and "reasoning_effort" not in req
    assert req.headers["authorization"] == "Bearer unused"  # a server without keys
    assert reply.model == "qwen2.5:3b-instruct" and reply.input_tokens > 0


def test_openai_llm_falls_back_to_plain_json_once_and_reads_fenced_replies() -> None:
    with FakeOpenAICompatible(json_schema=False, fence=True) as fake:
        fake.script("query", {"answer": "Acme"}).script("query", {"answer": "Globex"})
        llm = OpenAILLM("k", fake.base_url, max_retries=0)
        first = llm.complete(schema_request())
        second = llm.complete(schema_request(reasoning="low"))
        assert "```json" in first.text
        assert parse_json_object(first.text) == {"answer": "Acme"}
        assert parse_json_object(second.text) == {"answer": "Globex"}
        reqs = fake.chat_requests()
        # Rejected once, then never asked with the format again.
        assert [(r.status, "response_format" in r) for r in reqs] == [
            (400, True),
            (200, False),
            (200, False),
        ]
        assert reqs[-1]["reasoning_effort"] == "low"
        assert reqs[-1].headers["authorization"] == "Bearer k"


def test_openai_llm_cut_reply_and_missing_configuration(compat: FakeOpenAICompatible) -> None:
    compat.truncate_next("query")
    with pytest.raises(UpstreamError, match="token limit") as err:
        OpenAILLM("", compat.base_url, max_retries=0).complete(schema_request())
    assert err.value.usage is not None
    with pytest.raises(NotConfigured, match="provider openai"):
        OpenAILLM("", "").complete(schema_request())
    assert len(compat.chat_requests()) == 1
