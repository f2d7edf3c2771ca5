"""The stack's providers (LlmProvider, EmbeddingProvider): the functions'
environment, the Bedrock IAM grant (bedrock:InvokeModel on exactly the
configured model and inference-profile ARNs) and the secrets (none for a
provider not in use), for several parameter choices. The template's
conditions and intrinsics are evaluated here as CloudFormation would: no
AWS, no network."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cfnlint")

from cfn import EvaluatedStack, load

LLM_FUNCTIONS = {"RememberFunction", "RememberWorkerFunction", "QueryFunction", "McpFunction"}
HAIKU = "anthropic.claude-haiku-4-5-20251001-v1:0"
TITAN = "amazon.titan-embed-text-v2:0"


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return load()


def test_default_stack_is_bedrock_only_with_no_secret(raw: dict[str, Any]) -> None:
    stack = EvaluatedStack(raw)
    assert stack.secrets() == set()
    for fn in LLM_FUNCTIONS:
        env = stack.env(fn)
        assert env["GB_LLM_PROVIDER"] == "bedrock" and env["GB_EMBEDDING_PROVIDER"] == "bedrock"
        assert env["GB_DEFAULT_MODEL"] == f"us.{HAIKU}"
        assert env["GB_EMBEDDING_MODEL"] == TITAN
        assert env["GB_EMBEDDING_DIMENSION"] == ""  # the provider's default (1024)
        # Empty: the calibrated pair, or for Titan the ID/name-only merge and rank cut.
        assert env["GB_RESOLVE_THRESHOLD"] == "" and env["GB_QUERY_THRESHOLD"] == ""
        assert env["GB_ANTHROPIC_SECRET"] == "" and env["GB_OPENAI_SECRET"] == ""
        assert stack.grants(fn, "bedrock:InvokeModel") == [
            f"arn:aws:bedrock:eu-west-1:123456789012:inference-profile/us.{HAIKU}",
            f"arn:aws:bedrock:*::foundation-model/{HAIKU}",
            f"arn:aws:bedrock:eu-west-1::foundation-model/{TITAN}",
        ]
        assert stack.grants(fn, "secretsmanager:GetSecretValue") == []
    for fn in set(stack.resources) - LLM_FUNCTIONS:
        if stack.resources[fn]["Type"] == "AWS::Serverless::Function":
            assert stack.grants(fn, "bedrock:InvokeModel") == [], fn
    assert not {"AnthropicSecretArn", "OpenAISecretArn"} & set(stack.outputs)


def test_api_key_providers_get_their_secrets_and_no_bedrock(raw: dict[str, Any]) -> None:
    stack = EvaluatedStack(raw, LlmProvider="anthropic", EmbeddingProvider="openai")
    assert stack.secrets() == {"AnthropicApiKeySecret", "OpenAIApiKeySecret"}
    for fn in LLM_FUNCTIONS:
        env = stack.env(fn)
        assert env["GB_DEFAULT_MODEL"] == "claude-haiku-5-5"
        assert env["GB_EMBEDDING_MODEL"] == "text-embedding-3-small"
        assert env["GB_ANTHROPIC_SECRET"] == "ref:AnthropicApiKeySecret"
        assert env["GB_OPENAI_SECRET"] == "ref:OpenAIApiKeySecret"
        assert stack.grants(fn, "bedrock:InvokeModel") == []
        assert stack.grants(fn, "secretsmanager:GetSecretValue") == [
            "ref:AnthropicApiKeySecret",
            "ref:OpenAIApiKeySecret",
        ]


def test_bedrock_llm_in_region_with_openai_embeddings(raw: dict[str, Any]) -> None:
    stack = EvaluatedStack(raw, BedrockInferenceProfile="none", EmbeddingProvider="openai")
    assert stack.secrets() == {"OpenAIApiKeySecret"}
    for fn in LLM_FUNCTIONS:
        assert stack.env(fn)["GB_DEFAULT_MODEL"] == HAIKU
        assert stack.grants(fn, "bedrock:InvokeModel") == [
            f"arn:aws:bedrock:eu-west-1::foundation-model/{HAIKU}"
        ]
        assert stack.grants(fn, "secretsmanager:GetSecretValue") == ["ref:OpenAIApiKeySecret"]


def test_global_profile_and_cohere(raw: dict[str, Any]) -> None:
    stack = EvaluatedStack(
        raw,
        BedrockInferenceProfile="global",
        BedrockEmbeddingModel="cohere.embed-multilingual-v3",
        EmbeddingDimension="1024",
    )
    env = stack.env("QueryFunction")
    assert env["GB_DEFAULT_MODEL"] == f"global.{HAIKU}"
    assert env["GB_EMBEDDING_MODEL"] == "cohere.embed-multilingual-v3"
    assert env["GB_EMBEDDING_DIMENSION"] == "1024"
    assert stack.grants("QueryFunction", "bedrock:InvokeModel") == [
        f"arn:aws:bedrock:eu-west-1:123456789012:inference-profile/global.{HAIKU}",
        f"arn:aws:bedrock:*::foundation-model/{HAIKU}",
        f"arn:aws:bedrock:::foundation-model/{HAIKU}",
        "arn:aws:bedrock:eu-west-1::foundation-model/cohere.embed-multilingual-v3",
    ]


def test_openai_compatible_llm_on_bedrock_embeddings(raw: dict[str, Any]) -> None:
    stack = EvaluatedStack(
        raw,
        LlmProvider="openai",
        LlmModel="gpt-4.1-mini",
        LlmBaseUrl="https://litellm.example.com/v1",
    )
    assert stack.secrets() == {"OpenAIApiKeySecret"}
    env = stack.env("RememberFunction")
    assert env["GB_LLM_BASE_URL"] == "https://litellm.example.com/v1"
    assert env["GB_DEFAULT_MODEL"] == "gpt-4.1-mini"
    assert stack.grants("RememberFunction", "bedrock:InvokeModel") == [
        f"arn:aws:bedrock:eu-west-1::foundation-model/{TITAN}"
    ]
