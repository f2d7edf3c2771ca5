"""gligabao.secrets on moto's Secrets Manager: the named secrets become the API
key variables the settings read, once, and never override an explicit key."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from gligabao import secrets
from gligabao.config import load_settings


@pytest.fixture
def sm(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    import boto3
    from aws_lambda_powertools.utilities import parameters
    from moto import mock_aws

    for var in (*secrets.SECRET_ENV, *secrets.SECRET_ENV.values()):
        monkeypatch.setenv(var, "")  # records the variable, so what the code sets is undone
        monkeypatch.delenv(var)
    parameters.clear_caches()
    parameters.base.DEFAULT_PROVIDERS.clear()
    with mock_aws():
        yield boto3.client("secretsmanager", region_name="us-east-1")
    parameters.clear_caches()
    parameters.base.DEFAULT_PROVIDERS.clear()


def test_named_secrets_become_the_api_keys(sm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    a = sm.create_secret(Name="stack/anthropic-api-key", SecretString="sk-ant-123")["ARN"]
    sm.create_secret(Name="stack/openai-api-key", SecretString=json.dumps({"api_key": "sk-oa"}))
    monkeypatch.setenv("GB_ANTHROPIC_SECRET", a)  # an ARN ...
    monkeypatch.setenv("GB_OPENAI_SECRET", "stack/openai-api-key")  # ... or a name

    exported = secrets.load_secrets()

    assert exported == {"ANTHROPIC_API_KEY": a, "OPENAI_API_KEY": "stack/openai-api-key"}
    cfg = load_settings()
    assert cfg.anthropic_api_key == "sk-ant-123"
    assert cfg.openai_api_key == "sk-oa"
    assert cfg.llm_configured


def test_fetched_once_per_container(sm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sm.create_secret(Name="k", SecretString="first")
    monkeypatch.setenv("GB_ANTHROPIC_SECRET", "k")
    assert secrets.load_secrets() == {"ANTHROPIC_API_KEY": "k"}
    sm.put_secret_value(SecretId="k", SecretString="second")
    assert secrets.load_secrets() == {}  # the key is set: no second fetch
    assert os.environ["ANTHROPIC_API_KEY"] == "first"


def test_an_explicit_key_wins(sm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sm.create_secret(Name="k", SecretString="from-secret")
    monkeypatch.setenv("GB_ANTHROPIC_SECRET", "k")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    assert secrets.load_secrets() == {}
    assert load_settings().anthropic_api_key == "from-env"


def test_the_placeholder_counts_as_no_key(sm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sm.create_secret(Name="k", SecretString=secrets.PLACEHOLDER)
    monkeypatch.setenv("GB_ANTHROPIC_SECRET", "k")
    assert secrets.load_secrets() == {}
    assert not load_settings().llm_configured


def test_nothing_named_nothing_fetched(sm: Any) -> None:
    assert secrets.load_secrets() == {}


def test_a_missing_secret_is_an_error(sm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GB_OPENAI_SECRET", "no-such-secret")
    with pytest.raises(secrets.SecretError, match="no-such-secret"):
        secrets.load_secrets()


def test_blank_sdk_variables_count_as_unset(sm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """template.yaml declares the SDKs' variables empty (for `sam local --env-vars`): an empty
    base URL must leave the SDK on its default endpoint, not on ""."""
    import anthropic
    import openai

    for var in secrets.SDK_ENV:
        monkeypatch.setenv(var, "")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # a set one stays

    assert secrets.load_secrets() == {}

    assert "ANTHROPIC_BASE_URL" not in os.environ
    assert "ANTHROPIC_API_KEY" not in os.environ
    assert os.environ["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1"
    assert str(anthropic.Anthropic(api_key="k").base_url).startswith("https://api.anthropic.com")
    assert str(openai.OpenAI(api_key="k").base_url) == "http://127.0.0.1:9/v1/"
