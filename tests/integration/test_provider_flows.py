"""A full remember and query through each provider, over the local server's
real HTTP stack: Claude and the embedding models on Bedrock (SigV4-signed
InvokeModel at GB_BEDROCK_ENDPOINT_URL), and an OpenAI-compatible server
for both (what the README's Ollama recipe runs). Also: the rows name the
provider, an uncalibrated embedding model never merges entities by
similarity alone and cuts query matches by rank, and a provider without its
key is 503 with nothing written."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from remember_helpers import ent, extraction, fact

from conftest import Harness
from fakes.bedrock_server import FakeBedrock
from fakes.openai_chat_server import FakeOpenAICompatible

PROFILE_ARN = (
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
    "us.anthropic.claude-haiku-4-5-20251001-v1:0"
)
TITAN = "amazon.titan-embed-text-v2:0"
COHERE = "cohere.embed-v4:0"
LOCAL_MODEL = "qwen2.5:3b-instruct"
ALICE_ACME = extraction(
    [ent("Alice", "person", "engineer"), ent("Acme", "organization", "a company")],
    [fact("Alice", "Acme", "works at", "Alice works at Acme.")],
)


@pytest.fixture
def bedrock() -> Iterator[FakeBedrock]:
    with FakeBedrock() as fake:
        yield fake


@pytest.fixture
def compat() -> Iterator[FakeOpenAICompatible]:
    # Replies in ```json fences after prose: what small local models do.
    with FakeOpenAICompatible(dim=64, fence=True) as fake:
        yield fake


def bedrock_env(fake: FakeBedrock, embedding_model: str = TITAN, **extra: str) -> dict[str, str]:
    return {
        **fake.env(),
        "GB_LLM_PROVIDER": "bedrock",
        "GB_EMBEDDING_PROVIDER": "bedrock",
        "GB_DEFAULT_MODEL": PROFILE_ARN,
        "GB_EMBEDDING_MODEL": embedding_model,
        "GB_EMBEDDING_DIMENSION": "256",
        "ANTHROPIC_API_KEY": "",  # Bedrock needs no key
        **extra,
    }


@pytest.fixture
def gb_env(
    request: pytest.FixtureRequest, bedrock: FakeBedrock, compat: FakeOpenAICompatible
) -> dict[str, str]:
    kind, extra = getattr(request, "param", ("bedrock", {}))
    if kind == "bedrock":
        return bedrock_env(bedrock, **extra)
    return {
        "GB_LLM_PROVIDER": "openai",
        "GB_LLM_BASE_URL": compat.base_url,
        "GB_LLM_API_KEY": "",
        "OPENAI_BASE_URL": compat.base_url,
        "OPENAI_API_KEY": "test-openai-key",
        "GB_DEFAULT_MODEL": LOCAL_MODEL,
        "ANTHROPIC_API_KEY": "",
        **extra,
    }


def inferences(gb: Harness) -> list[dict[str, Any]]:
    r = gb.client.get("/v1/gb/inferences?user_id=u1&limit=200")
    assert r.status == 200, r.body
    return list(r.body["inferences"])


def step_counts(gb: Harness, call_id: str, name: str) -> dict[str, Any]:
    r = gb.client.get(f"/v1/gb/calls/{call_id}?user_id=u1")
    assert r.status == 200, r.body
    [step] = [s for s in r.body["steps"] if s["name"] == name]
    return dict(step)


# ------------------------------------------------------------------- Bedrock


def test_remember_and_query_through_bedrock_with_titan(gb: Harness, bedrock: FakeBedrock) -> None:
    bedrock.script("extract", ALICE_ACME)
    out = gb.remember("Alice works at Acme.")
    assert [(e["name"], e["created"]) for e in out["entities"]] == [("Alice", True), ("Acme", True)]
    [edge] = out["edges"]
    bedrock.script("query", {"answer": "Acme", "edges": [edge["id"]]})
    assert gb.query("Where does Alice work?")["answer"] == "Acme"

    calls = bedrock.invocations()
    assert calls and all(r.status == 200 for r in calls)  # every signature checked
    assert all(r.headers["authorization"].startswith("AWS4-HMAC-SHA256 ") for r in calls)
    claude = bedrock.invocations("anthropic")
    assert {r.stage for r in claude} >= {"extract", "query"}
    assert all(
        r.path == "/model/" + urllib.parse.quote(PROFILE_ARN, safe="") + "/invoke" for r in claude
    )
    assert all("model" not in r and r["anthropic_version"] for r in claude)
    titan = bedrock.invocations("titan")
    texts = {r["inputText"] for r in titan}
    assert {"Alice works at Acme.", "Where does Alice work?"} <= texts
    assert all(r["dimensions"] == 256 and r["normalize"] is True for r in titan)

    rows = inferences(gb)
    assert rows and {r["provider"] for r in rows} == {"bedrock"}
    llm_rows = [r for r in rows if r["stage"] != "embed"]
    assert {r["model"] for r in llm_rows} == {PROFILE_ARN}
    # The profile ARN is priced as the model it names (Haiku 4.5: $1 / $5).
    for r in llm_rows:
        assert r["cost_usd"] == pytest.approx((r["input_tokens"] + 5 * r["output_tokens"]) / 1e6)
    assert {r["model"] for r in rows if r["stage"] == "embed"} == {TITAN}


@pytest.mark.parametrize("gb_env", [("bedrock", {"embedding_model": COHERE})], indirect=True)
def test_remember_and_query_through_bedrock_with_cohere(gb: Harness, bedrock: FakeBedrock) -> None:
    bedrock.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.")
    stored = bedrock.invocations("cohere")
    assert stored and all(r["input_type"] == "search_document" for r in stored)
    assert all(r["output_dimension"] == 256 for r in stored)
    assert ["Alice works at Acme."] in [r["texts"] for r in stored]
    bedrock.script("query", {"answer": "Acme"})
    assert gb.query("Where does Alice work?")["answer"] == "Acme"
    asked = bedrock.invocations("cohere")[len(stored) :]
    assert [(r["texts"], r["input_type"]) for r in asked] == [
        (["Where does Alice work?"], "search_query")
    ]
    assert {r["provider"] for r in inferences(gb)} == {"bedrock"}


# ------------------------------------------------------- uncalibrated models


def test_an_uncalibrated_model_merges_by_name_never_by_similarity(
    gb: Harness, bedrock: FakeBedrock
) -> None:
    bedrock.embeddings.alias("Alicia Smith", "Alice Smith", 0.99)
    bedrock.script("extract", extraction([ent("Alice Smith", "person")], []))
    first = gb.remember("Alice Smith joined.")
    bedrock.script("extract", extraction([ent("Alicia Smith", "person")], []))
    second = gb.remember("Alicia Smith left.")
    bedrock.script("extract", extraction([ent("alice smith", "person")], []))
    third = gb.remember("alice smith came back.")
    bedrock.script("extract", extraction([ent("A. Smith", "person")], []))
    fourth = gb.remember("A. Smith waved.")
    [a], [b], [c], [d] = (r["entities"] for r in (first, second, third, fourth))
    assert a["created"] and b["created"] and a["id"] != b["id"]  # 0.99 alone: no merge
    assert (c["id"], c["created"], c["match"]) == (a["id"], False, "same name")
    # "A." fits Alice and Alicia alike: no guess, a new entity.
    assert d["created"] and d["id"] not in (a["id"], b["id"])


@pytest.mark.parametrize("gb_env", [("bedrock", {"GB_RESOLVE_THRESHOLD": "0.9"})], indirect=True)
def test_a_measured_threshold_turns_similar_name_candidates_on(
    gb: Harness, bedrock: FakeBedrock
) -> None:
    # No shared word and another normalized name: only the name vector finds it.
    bedrock.embeddings.alias("Jose Alvarez", "José Álvarez", 0.99)
    bedrock.script("extract", extraction([ent("José Álvarez", "person")], []))
    [a] = gb.remember("José Álvarez joined.")["entities"]
    bedrock.script("extract", extraction([ent("Jose Alvarez", "person")], []))
    [b] = gb.remember("Jose Alvarez left.")["entities"]
    assert (b["id"], b["created"], b["match"]) == (a["id"], False, "same name")


@pytest.mark.parametrize(
    ("gb_env", "similar"),
    [(("bedrock", {}), 2), (("bedrock", {"GB_QUERY_THRESHOLD": "0.75"}), 0)],
    indirect=["gb_env"],
)
def test_an_uncalibrated_model_cuts_query_matches_by_rank(
    gb: Harness, bedrock: FakeBedrock, similar: int
) -> None:
    bedrock.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.")
    # The question's vector is unrelated to both names (hashed vectors:
    # cosine ~ 0): only a rank cut lets them through.
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": "Who is on the team?"})
    assert r.status == 200, r.body
    assert step_counts(gb, r.call_id, "search_vectors")["entities"] == similar


# ------------------------------------------------------- OpenAI-compatible


@pytest.mark.parametrize("gb_env", [("openai", {})], indirect=True)
def test_remember_and_query_through_an_openai_compatible_server(
    gb: Harness, compat: FakeOpenAICompatible
) -> None:
    compat.script("extract", ALICE_ACME)
    out = gb.remember("Alice works at Acme.")
    assert [e["name"] for e in out["entities"]] == ["Alice", "Acme"]
    [edge] = out["edges"]
    compat.script("query", {"answer": "Acme", "edges": [edge["id"]]})
    assert gb.query("Where does Alice work?")["answer"] == "Acme"
    chats = compat.chat_requests()
    assert {r.stage for r in chats} >= {"extract", "query"}
    assert all(r.status == 200 and r["model"] == LOCAL_MODEL for r in chats)
    # A stage that sends a schema asks for it as the json_schema format.
    for r in chats:
        if "response_format" in r:
            assert r["response_format"]["type"] == "json_schema"
    assert compat.calls() > 0  # embeddings from the same server
    rows = inferences(gb)
    assert {r["provider"] for r in rows} == {"openai"}
    assert {r["model"] for r in rows if r["stage"] != "embed"} == {LOCAL_MODEL}


@pytest.mark.parametrize(
    "gb_env",
    [("openai", {"GB_LLM_BASE_URL": "", "OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""})],
    indirect=True,
)
def test_openai_provider_without_a_key_is_503_naming_it(
    gb: Harness, compat: FakeOpenAICompatible
) -> None:
    before = gb.row_counts()
    for path, body in (
        ("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."}),
        ("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"}),
    ):
        r = gb.client.post(path, body)
        assert r.status == 503, r.body
        assert "provider openai" in r.body["error"] and "GB_LLM_API_KEY" in r.body["error"]
    assert gb.row_counts() == before
    assert compat.requests == []
