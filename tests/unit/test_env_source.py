"""env_source.py reads the environment as pydantic-settings' BaseSettings read
it for config.Settings (which it replaced to keep that package's import out of
every cold start): the same environments give the same settings, compared
with a BaseSettings twin of Settings built here from the same fields."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from gligabao import env_source
from gligabao.config import ENV_PREFIX, Settings, env_names


class Twin(BaseSettings):
    """Settings' fields as pydantic-settings read them (the config before)."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_ignore_empty=True,
        str_strip_whitespace=True,
        populate_by_name=True,
        frozen=True,
    )


for _name, _info in Settings.model_fields.items():
    Twin.model_fields[_name] = _info
Twin.model_rebuild(force=True)

ENVIRONMENTS: list[dict[str, str]] = [
    {},
    {"GB_LLM_PROVIDER": "openai", "GB_LLM_BASE_URL": "http://x", "GB_EMBEDDING_DIMENSION": ""},
    {"gb_llm_provider": "bedrock", "GB_DEFAULT_MODEL": "  us.anthropic.m  "},  # any case
    {"AWS_DEFAULT_REGION": "eu-west-3"},  # the second of AWS_REGION, AWS_DEFAULT_REGION
    {"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "eu-west-3"},  # the first wins
    {"GB_PRICES": '{"m": [1, 2.5]}', "GB_RERANK_PRICES": '{"r": 0.5}'},
    {"GB_GEO": "true", "GB_GEO_RADIUS_KM": "12.5", "GB_LOCAL": "1"},
    {"GB_RESOLVE_THRESHOLD": "0.8", "GB_QUERY_THRESHOLD": ""},
    {"GB_REQUIRE_AUTH": "yes", "GB_CHUNK_TOKENS": "500"},
]


def settings_in(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], cls: type) -> Any:
    for name in list(os.environ):
        if name.upper().startswith(("GB_", "AWS_", "ANTHROPIC_", "OPENAI_")):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return cls()


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=lambda e: ",".join(e) or "empty")
def test_the_same_environment_gives_the_same_settings(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> None:
    ours = settings_in(monkeypatch, env, Settings).model_dump()
    theirs = settings_in(monkeypatch, env, Twin).model_dump()
    assert ours == theirs
    for name, value in env.items():  # and the variables were read at all
        if value:
            field = next(f for f in Settings.model_fields if name.upper() in env_names(f))
            assert ours[field] != Settings.model_fields[field].default, name


def test_keyword_arguments_override_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GB_LLM_PROVIDER", "openai")
    monkeypatch.setenv("GB_GEO", "true")
    s = Settings(llm_provider="bedrock")
    assert (s.llm_provider, s.geo) == ("bedrock", True)


def test_bad_values_fail_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GB_PRICES", "{not json")
    with pytest.raises(env_source.EnvError, match="GB_PRICES"):
        Settings()
    monkeypatch.delenv("GB_PRICES")
    monkeypatch.setenv("GB_LLM_PROVIDER", "cohere")
    with pytest.raises(ValidationError, match="GB_LLM_PROVIDER"):
        Settings()
    with pytest.raises(ValidationError):
        Settings(no_such_setting=1)  # type: ignore[call-arg]


def test_reading_the_settings_loads_no_pydantic_settings() -> None:
    probe = (
        "import sys, gligabao.config as c; c.Settings(); print('pydantic_settings' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
