"""A client SDK that only some configurations use (the clients layer on AWS,
``gligabao[clients]`` locally) and that is not installed: the adapter that
needs it is not configured (503, in words that say where the package comes
from), never an import error; the default stack's adapters do not need it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gligabao.ai.anthropic_llm import AnthropicLLM
from gligabao.ai.embedders import OpenAIEmbedder
from gligabao.ai.openai_llm import OpenAILLM
from gligabao.ai.port import LLMRequest
from gligabao.errors import NotConfigured, optional_sdk
from gligabao.vectors.opensearch.transport import make_client

REQUEST = LLMRequest("query", "answer in JSON", "Where does Alice work?", "m")


@pytest.fixture
def no_sdks(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules: `import name` raises ModuleNotFoundError, as when
    # the package is not installed.
    for name in ("anthropic", "openai", "opensearchpy"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.usefixtures("no_sdks")
def test_each_adapter_of_a_missing_sdk_is_not_configured() -> None:
    calls = [
        (lambda: AnthropicLLM("key").complete(REQUEST), "provider anthropic", "anthropic"),
        (lambda: OpenAILLM("key").complete(REQUEST), "provider openai", "openai"),
        (lambda: OpenAIEmbedder("key", "m").embed(["x"], "query"), "OpenAI embeddings", "openai"),
        (
            lambda: make_client(
                "http://127.0.0.1:1", service="es", region="us-east-1", aws_auth=False, timeout_s=1
            ),
            "the OpenSearch vector store",
            "opensearch-py",
        ),
    ]
    for call, who, package in calls:
        with pytest.raises(NotConfigured) as err:
            call()
        assert err.value.status == 503
        assert f"{who} needs the Python package {package}" in str(err.value)
        assert "clients layer" in str(err.value)


def test_an_import_error_inside_an_installed_sdk_is_not_hidden(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The SDK is there but one of its own imports fails: a real fault, raised
    # as it is rather than passed off as a configuration to change.
    (tmp_path / "gb_broken_sdk").mkdir()
    (tmp_path / "gb_broken_sdk" / "__init__.py").write_text("import gb_not_a_module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as err:
        optional_sdk("gb_broken_sdk", "provider x")
    assert err.value.name == "gb_not_a_module"
    with pytest.raises(NotConfigured, match="provider x needs the Python package gb_absent"):
        optional_sdk("gb_absent", "provider x")
