"""One SDK client per configuration (ai/sdk_clients.py): adapters built again
with the same settings share the warm client; any setting or SDK environment
variable that differs gets its own; the kept ones are bounded."""

from __future__ import annotations

import pytest

from gligabao.ai import sdk_clients
from gligabao.ai.embedders import OpenAIEmbedder
from gligabao.errors import NotConfigured


def _embedder(timeout_s: float = 30.0) -> OpenAIEmbedder:
    return OpenAIEmbedder("key", "text-embedding-3-small", timeout_s=timeout_s)


def test_the_same_settings_share_one_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    first, second = _embedder()._sdk(), _embedder()._sdk()
    assert first is second
    assert str(first.base_url) == "http://127.0.0.1:9/v1/"


def test_another_setting_or_base_url_gets_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    one = _embedder()._sdk()
    assert _embedder(timeout_s=5.0)._sdk() is not one
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:10/v1")
    other = _embedder()._sdk()
    assert other is not one and str(other.base_url) == "http://127.0.0.1:10/v1/"


def test_the_kept_clients_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sdk_clients, "_clients", type(sdk_clients._clients)())
    first = _embedder(timeout_s=1.0)._sdk()
    for i in range(sdk_clients.KEPT):
        _embedder(timeout_s=2.0 + i)._sdk()
    assert len(sdk_clients._clients) == sdk_clients.KEPT
    assert _embedder(timeout_s=1.0)._sdk() is not first  # the oldest was dropped


def test_a_missing_package_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match="no_such_sdk"):
        sdk_clients.sdk_client("no_such_sdk", "a test", "Client")
