"""The vector index bodies per target, as `gligabao bootstrap --dry-run`
prints them: Faiss on Serverless (pinned as an exact body: the test node has
no Faiss libraries), Lucene on a node without Faiss (created on the real node
from the printed bodies). And no write ever creates an index."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from gligabao.errors import VectorIndexMissing
from gligabao.models import DatasetKey
from gligabao.vectors.port import SearchRequest, VectorItem

DIM = 8


def _dry_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **env: str
) -> Any:
    from gligabao import wiring
    from gligabao.local.cli import main

    monkeypatch.setenv("GB_EMBEDDING_DIMENSION", str(DIM))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    wiring.reset()
    try:
        assert main(["bootstrap", "--dry-run"]) == 0
    finally:
        wiring.reset()
    return json.loads(capsys.readouterr().out)


def _vector(engine: str, space: str) -> dict[str, Any]:
    return {
        "type": "knn_vector",
        "dimension": DIM,
        "method": {
            "name": "hnsw",
            "engine": engine,
            "space_type": space,
            "parameters": {"m": 16, "ef_construction": 128},
        },
    }


def test_dry_run_on_serverless_prints_faiss_bodies(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bodies = _dry_run(
        monkeypatch, capsys, GB_OPENSEARCH_SERVICE="aoss", GB_OPENSEARCH_INDEX_PREFIX="acme"
    )
    base = {
        "user_id": {"type": "keyword"},
        "dataset": {"type": "keyword"},
        "pk": {"type": "keyword"},
        "row_id": {"type": "long"},
        "vector": _vector("faiss", "innerproduct"),
    }
    expected = {
        f"acme-{kind}": {
            "settings": {"index": {"knn": True}},
            "mappings": {
                "dynamic": "strict",
                "properties": {
                    **base,
                    **({"location": {"type": "geo_point"}} if kind == "entities" else {}),
                    # the passages' words, for the lexical half of hybrid search
                    **({"text": {"type": "text"}} if kind == "chunks" else {}),
                },
            },
        }
        for kind in ("entities", "edges", "chunks", "summaries")
    }
    assert bodies == expected


def test_faiss_scores_turn_back_into_cosines() -> None:
    from gligabao.vectors.opensearch.bodies import cosine_of

    # innerproduct of unit vectors: score = ip + 1 (ip >= 0), 1 / (1 - ip) below
    for cos in (1.0, 0.7071, 0.25, 0.0, -0.3162, -1.0):
        score = cos + 1 if cos >= 0 else 1 / (1 - cos)
        assert cosine_of(score, "faiss") == pytest.approx(cos)
        assert cosine_of((1 + cos) / 2, "lucene") == pytest.approx(cos)


def test_faiss_mode_writes_and_searches_unit_vectors() -> None:
    """The bodies the adapter sends in Faiss mode (a recording client)."""
    from gligabao.vectors.opensearch.store import OpenSearchVectorIndex

    class Recorder:
        def __init__(self) -> None:
            self.indices = self
            self.bodies: list[str] = []

        def exists(self, **kw: Any) -> bool:
            return True

        def search(self, **kw: Any) -> Any:
            return {"hits": {"hits": []}}

        def bulk(self, **kw: Any) -> Any:
            self.bodies.append(kw["body"])
            return {"errors": False, "items": []}

        def msearch(self, **kw: Any) -> Any:
            self.bodies.append(kw["body"])
            return {"responses": [{"hits": {"hits": [{"_score": 1.6, "_source": {"row_id": 3}}]}}]}

    client = Recorder()
    index = OpenSearchVectorIndex("http://127.0.0.1:1", dimension=2, service="aoss", client=client)
    assert index.engine == "faiss"
    key = DatasetKey("u", "main")
    index.upsert(key, "edges", [VectorItem(3, [3.0, 4.0])])
    [hits] = index.search(key, [SearchRequest("edges", [0.0, 2.0], 1, 0.5)])
    doc = json.loads(client.bodies[0].splitlines()[1])
    assert doc["vector"] == pytest.approx([0.6, 0.8])
    query = json.loads(client.bodies[1].splitlines()[1])["query"]["knn"]["vector"]
    assert query["vector"] == pytest.approx([0.0, 1.0])
    assert query["filter"] == {"bool": {"filter": [{"term": {"pk": key.pk}}]}}
    assert [(h.id, round(h.score, 6)) for h in hits] == [(3, 0.6)]


def test_dry_run_on_a_node_prints_lucene_bodies_the_node_takes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], opensearch_url: str
) -> None:
    from gligabao.vectors.opensearch.store import OpenSearchVectorIndex

    prefix = f"gbt-{uuid.uuid4().hex[:10]}-dry"
    bodies = _dry_run(
        monkeypatch,
        capsys,
        GB_OPENSEARCH_URL=opensearch_url,
        GB_OPENSEARCH_SERVICE="es",
        GB_OPENSEARCH_INDEX_PREFIX=prefix,
    )
    engines = {b["mappings"]["properties"]["vector"]["method"]["engine"] for b in bodies.values()}
    assert engines == {"lucene"}
    index = OpenSearchVectorIndex(opensearch_url, dimension=DIM, index_prefix=prefix, refresh=True)
    assert index.index_bodies() == bodies
    try:
        assert sorted(index.bootstrap()) == sorted(bodies)
        assert index.bootstrap() == []  # idempotent
        client = index._client
        for name, body in bodies.items():
            live = client.indices.get_mapping(index=name)[name]["mappings"]
            assert live["properties"]["vector"] == body["mappings"]["properties"]["vector"]
        key = DatasetKey("u", "main")
        index.upsert(key, "entities", [VectorItem(1, [1.0] + [0.0] * (DIM - 1))])
        [hits] = index.search(key, [SearchRequest("entities", [2.0] + [0.0] * (DIM - 1), 1, 0.9)])
        assert [h.id for h in hits] == [1] and hits[0].score == pytest.approx(1.0, abs=1e-4)
    finally:
        index.drop_indexes()


def test_no_write_creates_an_index(opensearch_url: str) -> None:
    from gligabao.vectors.opensearch.store import OpenSearchVectorIndex

    prefix = f"gbt-{uuid.uuid4().hex[:10]}-none"
    for service in ("es", "aoss"):
        index = OpenSearchVectorIndex(
            opensearch_url, dimension=DIM, service=service, index_prefix=prefix, engine="lucene"
        )
        key = DatasetKey("u", "main")
        with pytest.raises(VectorIndexMissing, match=f"{prefix}-entities does not exist") as err:
            index.upsert(key, "entities", [VectorItem(1, [1.0] * DIM)])
        assert err.value.status == 503
        with pytest.raises(VectorIndexMissing, match=f"{prefix}-edges"):
            index.search(key, [SearchRequest("edges", [1.0] * DIM, 3, 0.0)])
        assert not index._client.indices.exists(index=f"{prefix}-entities")
