"""The reranker's settings: off unless GB_RERANK_PROVIDER names one, the
http provider needs its server, prices per 1,000 search units."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gligabao import wiring
from gligabao.ai.prices import rerank_price_of
from gligabao.ai.rerank.bedrock import BedrockReranker
from gligabao.ai.rerank.http_api import HttpReranker
from gligabao.config import load_settings

NAMES = (
    "GB_RERANK_PROVIDER",
    "GB_RERANK_MODEL",
    "GB_RERANK_BASE_URL",
    "GB_RERANK_API_KEY",
    "GB_RERANK_REGION",
    "GB_RERANK_CANDIDATES",
    "GB_RERANK_TIMEOUT_S",
    "GB_RERANK_PRICES",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    wiring.reset()
    yield
    wiring.reset()  # no cached settings of this test's environment for the next


def test_off_by_default() -> None:
    cfg = load_settings()
    assert cfg.rerank_provider == "none"
    assert cfg.rerank_candidates == 100


def test_wiring_builds_no_reranker_when_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert wiring.reranker() is None


def test_bedrock_defaults_to_cohere_rerank_in_the_rerank_region(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GB_RERANK_PROVIDER", "Bedrock")
    monkeypatch.setenv("GB_RERANK_REGION", "us-west-2")
    cfg = load_settings()
    assert (cfg.rerank_provider, cfg.rerank_model) == ("bedrock", "cohere.rerank-v3-5:0")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    r = wiring.reranker()
    assert isinstance(r, BedrockReranker) and r._region == "us-west-2"


def test_http_needs_its_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GB_RERANK_PROVIDER", "http")
    with pytest.raises(ValueError, match="GB_RERANK_BASE_URL"):
        load_settings()
    monkeypatch.setenv("GB_RERANK_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert isinstance(wiring.reranker(), HttpReranker)
    assert load_settings().rerank_model == ""  # sent only when set


def test_an_unknown_provider_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GB_RERANK_PROVIDER", "cohere")
    with pytest.raises(ValueError, match="GB_RERANK_PROVIDER"):
        load_settings()


@pytest.mark.parametrize(("raw", "kept"), [("0", 1), ("250", 250), ("5000", 1000)])
def test_candidates_are_kept_within_the_apis_limit(
    monkeypatch: pytest.MonkeyPatch, raw: str, kept: int
) -> None:
    monkeypatch.setenv("GB_RERANK_CANDIDATES", raw)
    assert load_settings().rerank_candidates == kept


def test_prices_per_thousand_search_units(monkeypatch: pytest.MonkeyPatch) -> None:
    prices = load_settings().rerank_prices
    assert rerank_price_of(prices, "cohere.rerank-v3-5:0") == 2.0
    arn = "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0"
    assert rerank_price_of(prices, arn) == 1.0
    assert rerank_price_of(prices, "bge-reranker-v2-m3") == 0.0
    monkeypatch.setenv("GB_RERANK_PRICES", '{"bge-reranker-v2-m3": 0.5}')
    assert rerank_price_of(load_settings().rerank_prices, "bge-reranker-v2-m3") == 0.5
