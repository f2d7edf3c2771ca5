"""The stack's providers (LlmProvider, EmbeddingProvider): the functions'
environment, the Bedrock IAM grant (bedrock:InvokeModel on exactly the
configured model and inference-profile ARNs) and the secrets (none for a
provider not in use), for several parameter choices. The template's
conditions and intrinsics are evaluated here as CloudFormation would: no
AWS, no network."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

cfn_yaml = pytest.importorskip("cfnlint.decode.cfn_yaml")

ROOT = Path(__file__).resolve().parents[2]
PSEUDO = {
    "AWS::Region": "eu-west-1",
    "AWS::AccountId": "123456789012",
    "AWS::Partition": "aws",
    "AWS::StackName": "gb",
    "AWS::StackId": "arn:aws:cloudformation:eu-west-1:123456789012:stack/gb/8c1f33a0-7d3e-11ef-9d6b-0a1b2c3d4e5f",
    "AWS::URLSuffix": "amazonaws.com",
}
LLM_FUNCTIONS = {"RememberFunction", "RememberWorkerFunction", "QueryFunction"}
NO_VALUE = object()
HAIKU = "anthropic.claude-haiku-4-5-20251001-v1:0"
TITAN = "amazon.titan-embed-text-v2:0"


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return dict(json.loads(json.dumps(cfn_yaml.load(str(ROOT / "template.yaml")))))


class Stack:
    """The template as CloudFormation would create it with these parameters."""

    def __init__(self, template: dict[str, Any], **params: str) -> None:
        self.t = template
        self.params = {k: str(v.get("Default", "")) for k, v in template["Parameters"].items()}
        unknown = set(params) - set(self.params)
        assert not unknown, unknown
        self.params.update(params)
        self.resources = {
            k: self.value(v)
            for k, v in template["Resources"].items()
            if "Condition" not in v or self.condition(v["Condition"])
        }

    def condition(self, name: str) -> bool:
        return bool(self.value(self.t["Conditions"][name]))

    def ref(self, name: str) -> str:
        if name in self.params:
            return self.params[name]
        if name in PSEUDO:
            return PSEUDO[name]
        assert name in self.t["Resources"], f"Ref to a missing resource {name}"
        cond = self.t["Resources"][name].get("Condition")
        assert cond is None or self.condition(cond), f"Ref to {name}, not created"
        return f"ref:{name}"

    def sub(self, text: str, names: dict[str, Any] | None = None) -> str:
        def one(m: re.Match[str]) -> str:
            name = m.group(1)
            if names and name in names:
                return str(self.value(names[name]))
            return self.ref(name) if "." not in name else f"getatt:{name}"

        return re.sub(r"\$\{([^}!]+)\}", one, text)

    def value(self, node: Any) -> Any:
        if isinstance(node, list):
            return [v for v in (self.value(x) for x in node) if v is not NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            [(key, arg)] = node.items()
            if key == "Ref":
                return NO_VALUE if arg == "AWS::NoValue" else self.ref(arg)
            if key == "Fn::If":
                name, yes, no = arg
                return self.value(yes if self.condition(name) else no)
            if key == "Fn::Sub":
                return self.sub(arg) if isinstance(arg, str) else self.sub(arg[0], arg[1])
            if key == "Fn::Equals":
                a, b = (self.value(x) for x in arg)
                return a == b
            if key == "Fn::Not":
                return not self.value(arg[0])
            if key == "Fn::And":
                return all(self.value(x) for x in arg)
            if key == "Fn::Or":
                return any(self.value(x) for x in arg)
            if key == "Condition":
                return self.condition(arg)
            if key == "Fn::GetAtt":
                return f"getatt:{arg if isinstance(arg, str) else '.'.join(arg)}"
        out = {k: self.value(v) for k, v in node.items()}
        return {k: v for k, v in out.items() if v is not NO_VALUE}

    def env(self, function: str) -> dict[str, Any]:
        glob = self.value(self.t["Globals"]["Function"]["Environment"]["Variables"])
        own = self.resources[function]["Properties"].get("Environment", {}).get("Variables", {})
        return {**glob, **own}

    def grants(self, function: str, action: str) -> list[str]:
        out: list[str] = []
        for policy in self.resources[function]["Properties"].get("Policies", []):
            for st in policy["Statement"]:
                actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
                if action in actions:
                    res = st["Resource"]
                    out.extend(res if isinstance(res, list) else [res])
        return out

    def secrets(self) -> set[str]:
        return {k for k, v in self.resources.items() if v["Type"] == "AWS::SecretsManager::Secret"}


def test_default_stack_is_bedrock_only_with_no_secret(raw: dict[str, Any]) -> None:
    stack = Stack(raw)
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
    outputs = {k for k, v in raw["Outputs"].items()
               if "Condition" not in v or stack.condition(v["Condition"])}
    assert not {"AnthropicSecretArn", "OpenAISecretArn"} & outputs


def test_api_key_providers_get_their_secrets_and_no_bedrock(raw: dict[str, Any]) -> None:
    stack = Stack(raw, LlmProvider="anthropic", EmbeddingProvider="openai")
    assert stack.secrets() == {"AnthropicApiKeySecret", "OpenAIApiKeySecret"}
    for fn in LLM_FUNCTIONS:
        env = stack.env(fn)
        assert env["GB_DEFAULT_MODEL"] == "claude-haiku-5-5"
        assert env["GB_EMBEDDING_MODEL"] == "text-embedding-3-small"
        assert env["GB_ANTHROPIC_SECRET"] == "ref:AnthropicApiKeySecret"
        assert env["GB_OPENAI_SECRET"] == "ref:OpenAIApiKeySecret"
        assert stack.grants(fn, "bedrock:InvokeModel") == []
        assert stack.grants(fn, "secretsmanager:GetSecretValue") == [
            "ref:AnthropicApiKeySecret", "ref:OpenAIApiKeySecret"
        ]


def test_bedrock_llm_in_region_with_openai_embeddings(raw: dict[str, Any]) -> None:
    stack = Stack(raw, BedrockInferenceProfile="none", EmbeddingProvider="openai")
    assert stack.secrets() == {"OpenAIApiKeySecret"}
    for fn in LLM_FUNCTIONS:
        assert stack.env(fn)["GB_DEFAULT_MODEL"] == HAIKU
        assert stack.grants(fn, "bedrock:InvokeModel") == [
            f"arn:aws:bedrock:eu-west-1::foundation-model/{HAIKU}"
        ]
        assert stack.grants(fn, "secretsmanager:GetSecretValue") == ["ref:OpenAIApiKeySecret"]


def test_global_profile_and_cohere(raw: dict[str, Any]) -> None:
    stack = Stack(raw, BedrockInferenceProfile="global",
                  BedrockEmbeddingModel="cohere.embed-multilingual-v3", EmbeddingDimension="1024")
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
    stack = Stack(raw, LlmProvider="openai", LlmModel="gpt-4.1-mini",
                  LlmBaseUrl="https://litellm.example.com/v1")
    assert stack.secrets() == {"OpenAIApiKeySecret"}
    env = stack.env("RememberFunction")
    assert env["GB_LLM_BASE_URL"] == "https://litellm.example.com/v1"
    assert env["GB_DEFAULT_MODEL"] == "gpt-4.1-mini"
    assert stack.grants("RememberFunction", "bedrock:InvokeModel") == [
        f"arn:aws:bedrock:eu-west-1::foundation-model/{TITAN}"
    ]
