"""Provider settings read from the environment, and prices of the names a
provider takes (Bedrock profiles and ARNs priced as their model)."""

from __future__ import annotations

import pytest

from gligabao.ai.prices import DEFAULT_PRICES, price_of
from gligabao.config import load_settings

HAIKU = "anthropic.claude-haiku-4-5-20251001-v1:0"
ARN = f"arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.{HAIKU}"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "GB_LLM_PROVIDER",
        "GB_EMBEDDING_PROVIDER",
        "GB_EMBEDDER",
        "GB_LLM_BASE_URL",
        "GB_LLM_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "GB_EMBEDDING_MODEL",
        "GB_EMBEDDING_DIMENSION",
        "GB_DEFAULT_MODEL",
        "GB_PRICES",
        "GB_RESOLVE_THRESHOLD",
        "GB_QUERY_THRESHOLD",
        "ANTHROPIC_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


def test_profiles_and_arns_are_priced_as_their_model() -> None:
    prices = dict(DEFAULT_PRICES)
    assert price_of(prices, HAIKU) == (1.0, 5.0)
    assert price_of(prices, f"us.{HAIKU}") == (1.0, 5.0)
    assert price_of(prices, f"global.{HAIKU}") == (1.0, 5.0)
    assert price_of(prices, ARN) == (1.0, 5.0)
    assert price_of(prices, "amazon.titan-embed-text-v2:0") == (0.02, 0.0)
    assert price_of(prices, "qwen2.5:3b-instruct") == (0.0, 0.0)
    prices[ARN] = (0.5, 2.5)  # GB_PRICES may price a profile ARN itself
    assert price_of(prices, ARN) == (0.5, 2.5)


def test_gb_prices_overrides_a_bedrock_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GB_PRICES", f'{{"{HAIKU}": [1.1, 5.5]}}')
    assert price_of(load_settings().prices, f"us.{HAIKU}") == (1.1, 5.5)


def test_openai_provider_falls_back_to_the_openai_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GB_LLM_PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fallback")
    cfg = load_settings()
    assert (cfg.llm_base_url, cfg.llm_api_key) == ("http://localhost:11434/v1", "sk-fallback")
    monkeypatch.setenv("GB_LLM_BASE_URL", "http://vllm:8000/v1")
    monkeypatch.setenv("GB_LLM_API_KEY", "own")
    cfg = load_settings()
    assert (cfg.llm_base_url, cfg.llm_api_key) == ("http://vllm:8000/v1", "own")
    assert cfg.llm_configured and cfg.llm_model == "gpt-4.1-mini"


def test_embedding_provider_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings(local=True).embedder == "local"
    assert load_settings(local=False).embedder == "openai"  # Lambda never ships the local model
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert load_settings(local=True).embedder == "openai"
    monkeypatch.setenv("GB_EMBEDDER", "local")  # the former name still works
    assert load_settings(local=True).embedder == "local"
    monkeypatch.setenv("GB_EMBEDDING_PROVIDER", "bedrock")
    cfg = load_settings(local=True)
    assert (cfg.embedder, cfg.embedding_model, cfg.embedding_dimension) == (
        "bedrock",
        "amazon.titan-embed-text-v2:0",
        1024,
    )
    monkeypatch.setenv("GB_EMBEDDING_DIMENSION", "512")
    assert load_settings().embedding_dimension == 512


def test_uncalibrated_thresholds_and_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GB_EMBEDDING_PROVIDER", "bedrock")
    cfg = load_settings()
    assert cfg.resolve_threshold > 1.0 and cfg.query_threshold == -1.0
    assert "not calibrated" in cfg.thresholds_source
    monkeypatch.setenv("GB_RESOLVE_THRESHOLD", "0.62")
    cfg = load_settings()
    assert (cfg.resolve_threshold, cfg.query_threshold) == (0.62, -1.0)
    assert "GB_RESOLVE_THRESHOLD" in cfg.thresholds_source
    monkeypatch.setenv("GB_EMBEDDING_PROVIDER", "openai")
    cfg = load_settings()
    assert (cfg.resolve_threshold, cfg.query_threshold) == (0.62, 0.75)
