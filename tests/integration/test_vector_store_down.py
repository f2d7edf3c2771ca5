"""The vector store cannot be reached: query and remember answer 502 and
write nothing."""

from __future__ import annotations

import uuid

import pytest

from conftest import Harness
from gligabao.local.embedded import free_port
from gligabao.models import DatasetKey


@pytest.fixture
def gb_env() -> dict[str, str]:
    # Nothing listens there: every OpenSearch request fails to connect.
    return {"GB_OPENSEARCH_URL": f"http://127.0.0.1:{free_port()}"}


def test_query_and_remember_answer_502_when_the_vector_store_is_down(gb: Harness) -> None:
    gb.graph.ensure_dataset(DatasetKey("u1", "main"))
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"})
    assert r.status == 502, r.body
    assert "error" in r.body
    assert gb.llm.calls("query") == 0

    gb.llm.script("extract", {"entities": [{"name": "Alice", "type": "person"}], "edges": []})
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice is here."})
    assert r.status == 502, r.body
    for table in ("entities", "edges", "artifacts", "links", "names", "terms"):
        assert gb.scan(table) == [], table


@pytest.fixture
def missing_indexes(monkeypatch: pytest.MonkeyPatch, gb: Harness, opensearch_url: str) -> str:
    """The real node, under an index prefix nobody bootstrapped."""
    from gligabao import wiring

    prefix = f"gbt-{uuid.uuid4().hex[:10]}-missing"
    monkeypatch.setenv("GB_OPENSEARCH_URL", opensearch_url)
    monkeypatch.setenv("GB_OPENSEARCH_INDEX_PREFIX", prefix)
    wiring.reset()
    return prefix


def test_a_missing_vector_index_is_503_and_nothing_is_written(
    gb: Harness, missing_indexes: str
) -> None:
    gb.llm.script("extract", {"entities": [{"name": "Alice", "type": "person"}], "edges": []})
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice is here."})
    assert r.status == 503, r.body
    assert "does not exist" in r.body["error"] and "bootstrap" in r.body["error"]
    for table in ("entities", "edges", "artifacts", "links", "names", "terms"):
        assert gb.scan(table) == [], table
    gb.graph.ensure_dataset(DatasetKey("u1", "main"))
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": "Where is Alice?"})
    assert r.status == 503, r.body
    assert gb.llm.calls("query") == 0
    # and the failed write did not create the index
    from opensearchpy import OpenSearch

    from gligabao.config import settings

    client = OpenSearch(hosts=[settings().opensearch_url])
    assert not client.indices.exists(index=f"{missing_indexes}-entities")
