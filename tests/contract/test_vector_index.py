"""The VectorIndex contract, one suite over every adapter:

- ``memory``: the in-process numpy index;
- ``sqlite``: vectors in the local server's SQLite file (a fresh file per
  test), searched with numpy; ``sqlite-2`` writes through one process's index
  and searches through another's on the same file (its cache must follow);
- ``opensearch``: OpenSearchVectorIndex as on a managed domain (document IDs
  ``pk:row``, ``_delete_by_query``) against a real OpenSearch 2.19 node with the
  k-NN plugin (infra/opensearch.sh);
- ``opensearch-aoss``: the same adapter in its Serverless mode (auto IDs, row
  dedupe, delete by listing IDs) against the same node, with the Lucene engine
  (the node has no Faiss libraries; the Faiss body is pinned in
  test_index_bodies.py);
- ``dynamodb``: DynamoVectorIndex, the vectors on the graph's rows, against
  DynamoDB with vector indexes (tests/fakes/dynamodb_vectors.py in front of
  moto). A vector is an attribute of its row there: an upsert for a row not
  written yet writes the row first, as the graph's commit would (its vector
  and its passage's words with it: graph/vector_rows.py).

Every test writes under fresh user IDs, so tests never see each other's data;
the OpenSearch indexes are unique to the session and dropped at its end.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gligabao.errors import UpstreamError
from gligabao.models import DatasetKey
from gligabao.sqlite.db import Database
from gligabao.vectors.inprocess import MemoryVectorIndex
from gligabao.vectors.port import (
    KINDS,
    VECTOR_WEIGHT,
    GeoHit,
    SearchRequest,
    VectorIndex,
    VectorItem,
)
from gligabao.vectors.sqlite.store import SqliteVectorIndex

DIM = 8
TOL = 1e-4  # OpenSearch computes in float32

PARIS = (48.8566, 2.3522)
LYON = (45.764, 4.8357)
NEW_YORK = (40.7128, -74.0060)


def e(i: int, scale: float = 1.0) -> list[float]:
    """The i-th basis vector."""
    v = [0.0] * DIM
    v[i] = scale
    return v


def mix(*parts: tuple[float, int]) -> list[float]:
    v = [0.0] * DIM
    for weight, i in parts:
        v[i] += weight
    return v


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def new_key(dataset: str = "main") -> DatasetKey:
    return DatasetKey(f"user-{uuid.uuid4().hex[:12]}", dataset)


# -- the adapters ----------------------------------------------------------------


@pytest.fixture(scope="session")
def opensearch_modes(opensearch_url: str, opensearch_prefix: str) -> Iterator[dict[str, str]]:
    """Bootstrapped indexes for both adapter modes: mode -> index prefix."""
    from gligabao.vectors.opensearch.store import OpenSearchVectorIndex

    prefixes = {"es": f"{opensearch_prefix}-es", "aoss": f"{opensearch_prefix}-aoss"}
    indexes = [
        OpenSearchVectorIndex(
            opensearch_url, dimension=DIM, service=svc, index_prefix=prefix, engine="lucene"
        )
        for svc, prefix in prefixes.items()
    ]
    for index in indexes:
        index.bootstrap()
    yield prefixes
    for index in indexes:
        index.drop_indexes()


class _WithRows:
    """DynamoVectorIndex, with the rows its vectors belong to: a row that does
    not exist yet is written as the graph's commit writes one (vector, words,
    counts); one that exists gets its vector from ``upsert`` (as reindex)."""

    def __init__(self, index: Any) -> None:
        self.index = index

    def __getattr__(self, name: str) -> Any:
        return getattr(self.index, name)

    def upsert(self, key: DatasetKey, kind: Any, items: list[VectorItem]) -> None:
        from gligabao.dynamodb.batch import batch_write
        from gligabao.dynamodb.tables import ArtifactRow, EdgeRow, EntityRow
        from gligabao.graph.dynamodb.vector_rows import count_words, inline_vectors

        model = {"entities": EntityRow, "edges": EdgeRow}.get(kind, ArtifactRow)
        have = {int(r.id) for r in model.batch_get([(key.pk, i.id) for i in items])}
        new = [i for i in items if i.id not in have]
        rows: list[Any] = []
        for i in new:
            if kind == "entities":
                rows.append(
                    EntityRow(
                        key.pk,
                        i.id,
                        name=f"e{i.id}",
                        norm_name=f"e{i.id}",
                        updated_key=f"#{i.id:012d}",
                        lat=i.lat,
                        lon=i.lon,
                    )
                )
            elif kind == "edges":
                rows.append(
                    EdgeRow(key.pk, i.id, source_id=0, target_id=0, relation="r", vstate="live")
                )
            else:
                rows.append(ArtifactRow(key.pk, i.id, text=i.text or ""))
        rows += inline_vectors(key.pk, rows, {kind: new}, time.time())
        batch_write(puts=rows)
        if kind == "chunks":
            count_words(key.pk, {int(r.id): r for r in rows if isinstance(r, ArtifactRow)})
        self.index.upsert(key, kind, [i for i in items if i.id in have])


class _TwoReaders:
    """Writes through one SqliteVectorIndex, reads through another on the same
    file: what two processes sharing the file see."""

    def __init__(self, path: Path) -> None:
        self.writer = SqliteVectorIndex(Database(path))
        self.reader = SqliteVectorIndex(Database(path))

    def __getattr__(self, name: str) -> Any:
        side = self.writer if name in {"upsert", "delete_dataset"} else self.reader
        return getattr(side, name)


@pytest.fixture
def dynamodb_index(request: pytest.FixtureRequest, aws_env: None) -> Iterator[Any]:
    from dynamo_fixtures import dynamo_vector_index, vector_tables_on

    fake = request.getfixturevalue("dynamo_vectors_fake")
    for _ in vector_tables_on(fake, DIM):
        yield _WithRows(dynamo_vector_index(DIM))


@pytest.fixture(
    params=["memory", "sqlite", "sqlite-2", "opensearch", "opensearch-aoss", "dynamodb"]
)
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "dynamodb":
        return request.getfixturevalue("dynamodb_index")
    if request.param == "memory":
        return MemoryVectorIndex()
    if request.param == "sqlite":
        return SqliteVectorIndex(Database(tmp_path / "gligabao.db"))
    if request.param == "sqlite-2":
        return _TwoReaders(tmp_path / "gligabao.db")
    from gligabao.vectors.opensearch.store import OpenSearchVectorIndex

    url: str = request.getfixturevalue("opensearch_url")
    modes: dict[str, str] = request.getfixturevalue("opensearch_modes")
    service = "aoss" if request.param == "opensearch-aoss" else "es"
    # refresh: writes are searchable when the call returns (tests only).
    return OpenSearchVectorIndex(
        url,
        dimension=DIM,
        service=service,
        index_prefix=modes[service],
        engine="lucene",
        refresh=True,
    )


def ids(hits: list[Any]) -> list[int]:
    return [h.id for h in hits]


# -- search ----------------------------------------------------------------------------


def test_search_orders_by_cosine_and_applies_min_score(index: VectorIndex) -> None:
    key = new_key()
    q = e(0)
    vectors = {
        1: e(0, 3.0),  # cosine 1 (length does not matter)
        2: mix((1.0, 0), (1.0, 1)),  # 0.7071
        3: mix((1.0, 0), (3.0, 1)),  # 0.3162
        4: e(1),  # 0
        5: mix((-1.0, 0), (1.0, 2)),  # -0.7071
    }
    index.upsert(key, "entities", [VectorItem(i, v) for i, v in vectors.items()])

    [hits] = index.search(key, [SearchRequest("entities", q, 10, -1.0)])
    assert ids(hits) == [1, 2, 3, 4, 5]
    for hit in hits:
        assert hit.score == pytest.approx(cosine(q, vectors[hit.id]), abs=TOL)

    [hits] = index.search(key, [SearchRequest("entities", q, 10, 0.5)])
    assert ids(hits) == [1, 2]
    [hits] = index.search(key, [SearchRequest("entities", q, 10, 0.0)])
    assert ids(hits) == [1, 2, 3, 4]
    [hits] = index.search(key, [SearchRequest("entities", q, 10, 0.99)])
    assert ids(hits) == [1]


def test_k_limits_the_hits_to_the_best(index: VectorIndex) -> None:
    key = new_key()
    q = mix((1.0, 0), (0.5, 1), (0.25, 2))
    items = [
        VectorItem(i, [math.sin(i * (j + 1) * 0.7) + (1.5 if j == 0 else 0.0) for j in range(DIM)])
        for i in range(1, 41)
    ]
    index.upsert(key, "chunks", items)
    exact = sorted(items, key=lambda it: (-cosine(q, it.vector), it.id))

    [hits] = index.search(key, [SearchRequest("chunks", q, 5, -1.0)])
    assert ids(hits) == [it.id for it in exact[:5]]
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    [one] = index.search(key, [SearchRequest("chunks", q, 1, -1.0)])
    assert ids(one) == [exact[0].id]


def test_writing_a_row_again_replaces_its_vector(index: VectorIndex) -> None:
    key = new_key()
    index.upsert(key, "edges", [VectorItem(7, e(0)), VectorItem(8, e(1))])
    index.upsert(key, "edges", [VectorItem(7, e(2))])

    [hits] = index.search(key, [SearchRequest("edges", e(2), 10, 0.5)])
    assert ids(hits) == [7]
    assert hits[0].score == pytest.approx(1.0, abs=TOL)
    [hits] = index.search(key, [SearchRequest("edges", e(0), 10, 0.5)])
    assert hits == []
    assert index.count(key, "edges") == 2


def test_several_requests_in_one_call(index: VectorIndex) -> None:
    key = new_key()
    index.upsert(key, "entities", [VectorItem(1, e(0)), VectorItem(2, e(1))])
    index.upsert(key, "edges", [VectorItem(10, e(1)), VectorItem(11, e(2))])
    index.upsert(key, "summaries", [VectorItem(20, e(3))])

    before = index.requests  # type: ignore[attr-defined]
    results = index.search(
        key,
        [
            SearchRequest("entities", e(0), 5, 0.5),
            SearchRequest("edges", e(1), 5, 0.5),
            SearchRequest("chunks", e(0), 5, 0.5),  # nothing written
            SearchRequest("summaries", e(3), 5, 0.5),
            SearchRequest("entities", e(1), 5, -1.0),
        ],
    )
    assert index.requests - before == 1  # type: ignore[attr-defined]  # one round trip
    assert [ids(r) for r in results] == [[1], [10], [], [20], [2, 1]]


def test_search_of_an_empty_dataset_or_a_foreign_dimension_finds_nothing(
    index: VectorIndex,
) -> None:
    key = new_key()
    assert index.search(key, [SearchRequest("entities", e(0), 5, -1.0)]) == [[]]
    index.upsert(key, "entities", [VectorItem(1, e(0))])
    assert index.search(key, [SearchRequest("entities", [1.0, 0.0], 5, -1.0)]) == [[]]
    assert index.search(key, []) == []


# -- tenants and datasets -------------------------------------------------------------


def test_hybrid_search_fuses_lexical_and_vector_ranks(index: VectorIndex) -> None:
    key = new_key()
    passages = [
        VectorItem(1, e(0), text="the weather was nice today"),  # the vector only
        VectorItem(2, e(1), text="my sister Maya adopted a beagle"),  # the words only
        VectorItem(3, mix((1.0, 0), (1.0, 1)), text="Maya likes hiking"),  # both
        VectorItem(4, e(2), text="nothing relevant here"),  # neither
    ]
    index.upsert(key, "chunks", passages)
    other = new_key()  # another tenant's words never match
    index.upsert(other, "chunks", [VectorItem(1, e(3), text="Maya beagle Maya beagle")])

    hybrid, knn = index.search(
        key,
        [
            SearchRequest("chunks", e(0), 3, 0.5, text="Maya beagle"),
            SearchRequest("chunks", e(0), 3, 0.5),
        ],
    )
    assert ids(knn) == [1, 3]
    # Vector ranks [1, 3], BM25 ranks [2, 3]: 3 is second in both
    # (VECTOR_WEIGHT/62 + 1/62), 1 and 2 first in one each, and the vector
    # ranking weighs more than the words' (VECTOR_WEIGHT/61 against 1/61), so
    # 1 comes before 2. min_score holds for the vector side only: 2 (cosine 0)
    # comes by its words.
    assert ids(hybrid) == [3, 1, 2]
    assert hybrid[0].score == pytest.approx((VECTOR_WEIGHT + 1) / 62)
    assert hybrid[1].score == pytest.approx(VECTOR_WEIGHT / 61)
    assert hybrid[2].score == pytest.approx(1 / 61)
    [top2] = index.search(key, [SearchRequest("chunks", e(0), 2, 0.5, text="Maya beagle")])
    assert ids(top2) == [3, 1]
    # No shared word: the vector ranking alone.
    [plain] = index.search(key, [SearchRequest("chunks", e(0), 3, 0.5, text="zebra")])
    assert ids(plain) == [1, 3]
    # A vector of another dimension matches nothing, the words still do.
    [words] = index.search(key, [SearchRequest("chunks", [1.0], 3, 0.5, text="beagle")])
    assert ids(words) == [2]
    # No vector at all: the words alone (the query's second round asks so).
    [alone] = index.search(key, [SearchRequest("chunks", [], 3, 0.5, text="beagle")])
    assert ids(alone) == [2]
    # Texts without a single searchable term (stop words, one letter): the
    # vector ranking alone.
    bare = new_key()
    index.upsert(bare, "chunks", [VectorItem(1, e(0), text="the a"), VectorItem(2, e(1), text="")])
    [only] = index.search(bare, [SearchRequest("chunks", e(0), 3, 0.5, text="the thing")])
    assert ids(only) == [1]


def test_tenants_never_see_each_other(index: VectorIndex) -> None:
    alice, bob = new_key("shared"), new_key("shared")
    alice_other = DatasetKey(alice.user_id, "other")
    index.upsert(alice, "entities", [VectorItem(1, e(0)), VectorItem(2, e(1))])
    index.upsert(bob, "entities", [VectorItem(1, e(0)), VectorItem(3, e(0))])
    index.upsert(alice_other, "entities", [VectorItem(4, e(0))])

    def found(key: DatasetKey) -> list[int]:
        [hits] = index.search(key, [SearchRequest("entities", e(0), 10, -1.0)])
        return sorted(ids(hits))

    assert found(alice) == [1, 2]
    assert found(bob) == [1, 3]
    assert found(alice_other) == [4]
    assert index.count(alice, "entities") == 2
    assert index.count(bob, "entities") == 2

    # Filtering happens inside the k-NN search: k hits of the tenant even when
    # another tenant has many closer vectors.
    crowd = new_key("shared")
    index.upsert(crowd, "entities", [VectorItem(100 + i, e(0)) for i in range(30)])
    [hits] = index.search(alice, [SearchRequest("entities", e(0), 2, -1.0)])
    assert ids(hits) == [1, 2]


def test_delete_dataset_removes_only_that_dataset(index: VectorIndex) -> None:
    doomed = new_key("doomed")
    kept = DatasetKey(doomed.user_id, "kept")
    neighbour = DatasetKey(f"{doomed.user_id}-2", "doomed")
    for key in (doomed, kept, neighbour):
        index.upsert(key, "entities", [VectorItem(1, e(0), *PARIS), VectorItem(2, e(1))])
        index.upsert(key, "edges", [VectorItem(3, e(2))])
        index.upsert(key, "chunks", [VectorItem(4, e(3))])
        index.upsert(key, "summaries", [VectorItem(5, e(4))])

    index.delete_dataset(doomed)

    for kind in KINDS:
        assert index.count(doomed, kind) == 0
    assert index.search(doomed, [SearchRequest("entities", e(0), 5, -1.0)]) == [[]]
    assert index.nearby(doomed, *PARIS, 10.0, 10) == []
    for key in (kept, neighbour):
        assert [index.count(key, kind) for kind in KINDS] == [2, 1, 1, 1]
        [hits] = index.search(key, [SearchRequest("entities", e(0), 5, 0.5)])
        assert ids(hits) == [1]
    # Deleting a dataset that has nothing is fine.
    index.delete_dataset(new_key())


def test_delete_removes_those_rows_vectors_only(index: VectorIndex) -> None:
    """Forget's half on the vector side: the named rows of one kind lose their
    vectors (and a passage its words), the rest of the dataset and the same IDs
    of another dataset stay."""
    key = new_key("forget")
    other = DatasetKey(key.user_id, "other")
    for k in (key, other):
        index.upsert(k, "chunks", [VectorItem(4, e(3), text="Alice joined Globex in May")])
        index.upsert(k, "chunks", [VectorItem(6, e(5), text="Bob likes tea")])
        index.upsert(k, "edges", [VectorItem(4, e(3))])

    assert index.delete(key, "chunks", [4, 99]) == 1  # 99 has no vector: skipped

    assert index.count(key, "chunks") == 1
    [hits] = index.search(key, [SearchRequest("chunks", e(3), 5, -1.0, text="Globex")])
    assert 4 not in ids(hits)
    assert index.count(key, "edges") == 1  # the same ID of another kind stays
    assert index.count(other, "chunks") == 2
    [hits] = index.search(other, [SearchRequest("chunks", e(3), 5, -1.0, text="Globex")])
    assert 4 in ids(hits)
    assert index.delete(key, "chunks", []) == 0


def test_count_per_kind(index: VectorIndex) -> None:
    key = new_key()
    assert index.count(key, "entities") == 0
    index.upsert(key, "entities", [VectorItem(i, e(i % DIM)) for i in range(1, 8)])
    index.upsert(key, "chunks", [VectorItem(1, e(0)), VectorItem(2, e(1))])
    index.upsert(key, "chunks", [])
    assert index.count(key, "entities") == 7
    assert index.count(key, "chunks") == 2
    assert index.count(key, "edges") == 0
    assert index.count(key, "summaries") == 0


# -- geo ---------------------------------------------------------------------------------


def test_nearby_finds_entities_within_the_radius_nearest_first(index: VectorIndex) -> None:
    key = new_key()
    index.upsert(
        key,
        "entities",
        [
            VectorItem(1, e(0), *LYON),
            VectorItem(2, e(1), *PARIS),
            VectorItem(3, e(2), *NEW_YORK),
            VectorItem(4, e(3)),  # no coordinates
        ],
    )
    other = new_key()
    index.upsert(other, "entities", [VectorItem(9, e(0), *PARIS)])

    hits = index.nearby(key, *PARIS, 500.0, 10)
    assert ids(hits) == [2, 1]
    assert hits[0].distance_km == pytest.approx(0.0, abs=0.01)
    assert hits[1].distance_km == pytest.approx(392.0, abs=3.0)
    assert all(isinstance(h, GeoHit) for h in hits)

    assert ids(index.nearby(key, *PARIS, 500.0, 1)) == [2]
    assert ids(index.nearby(key, *PARIS, 100.0, 10)) == [2]
    assert ids(index.nearby(key, *LYON, 10_000.0, 10)) == [1, 2, 3]
    assert index.nearby(key, 0.0, 0.0, 100.0, 10) == []
    assert index.nearby(new_key(), *PARIS, 500.0, 10) == []


# -- the OpenSearch adapter alone: request shapes, retries, errors ----------------------


class FakeClient:
    """Stands for opensearchpy.OpenSearch: scripted replies, recorded calls."""

    def __init__(self, replies: dict[str, list[Any]]) -> None:
        self.replies = replies
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.indices = self  # indices.exists: every index exists

    def exists(self, **kwargs: Any) -> bool:
        return True

    def _reply(self, name: str, kwargs: dict[str, Any]) -> Any:
        self.calls.append((name, kwargs))
        reply = self.replies[name].pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def bulk(self, **kwargs: Any) -> Any:
        return self._reply("bulk", kwargs)

    def msearch(self, **kwargs: Any) -> Any:
        return self._reply("msearch", kwargs)


SLEEPS: list[float] = []  # the backoff delays the fake indexes asked for


def _fake_index(client: FakeClient, **kw: Any) -> Any:
    from gligabao.vectors.opensearch.store import OpenSearchVectorIndex

    SLEEPS.clear()
    return OpenSearchVectorIndex(
        "http://127.0.0.1:1", dimension=DIM, client=client, sleep=SLEEPS.append, **kw
    )


def _transport_error(status: int) -> Exception:
    from opensearchpy.exceptions import TransportError

    return TransportError(status, "boom", {"error": {"type": "x", "reason": "boom"}})


def test_bulk_retries_throttled_items_and_whole_requests_with_backoff() -> None:
    ok_item = {"index": {"status": 201}}
    throttled = {"index": {"status": 429, "error": {"type": "es_rejected_execution_exception"}}}
    client = FakeClient(
        {
            "bulk": [
                _transport_error(503),
                {"errors": True, "items": [ok_item, throttled]},
                {"errors": False, "items": [ok_item]},
            ]
        }
    )
    index = _fake_index(client)
    index.upsert(new_key(), "entities", [VectorItem(1, e(0)), VectorItem(2, e(1))])
    assert len(client.calls) == 3 and index.requests == 4  # and the index check
    assert len(SLEEPS) == 2 and SLEEPS[1] > SLEEPS[0] / 2
    last_body = client.calls[-1][1]["body"]
    assert last_body.count("\n") == 2 and '"row_id": 2' in last_body  # only the throttled item


def test_failures_raise_upstream_error() -> None:
    index = _fake_index(FakeClient({"bulk": [_transport_error(400)]}))
    with pytest.raises(UpstreamError):
        index.upsert(new_key(), "entities", [VectorItem(1, e(0))])

    bad_item = {"index": {"status": 400, "error": {"type": "mapper_parsing_exception"}}}
    index = _fake_index(FakeClient({"bulk": [{"errors": True, "items": [bad_item]}]}))
    with pytest.raises(UpstreamError, match="mapper_parsing_exception"):
        index.upsert(new_key(), "entities", [VectorItem(1, e(0))])

    index = _fake_index(FakeClient({"msearch": [_transport_error(503)] * 3}), max_retries=2)
    with pytest.raises(UpstreamError, match="after 3 tries"):
        index.search(new_key(), [SearchRequest("entities", e(0), 3, 0.0)])
    assert index.requests == 3


def test_search_sends_the_filter_inside_the_knn_clause_and_converts_scores() -> None:
    import json

    client = FakeClient(
        {
            "msearch": [
                {
                    "responses": [
                        {
                            "hits": {
                                "hits": [
                                    {"_score": 0.9, "_source": {"row_id": 5}},
                                    {"_score": 0.95, "_source": {"row_id": 5}},
                                    {"_score": 0.6, "_source": {"row_id": 6}},
                                ]
                            }
                        }
                    ]
                }
            ]
        }
    )
    index = _fake_index(client, service="aoss", index_prefix="px", engine="lucene")
    key = new_key()
    [hits] = index.search(key, [SearchRequest("edges", e(0), 3, 0.5)])
    assert [(h.id, round(h.score, 6)) for h in hits] == [(5, 0.9)]  # deduped, 0.6 -> 0.2 < 0.5
    header, body = (json.loads(line) for line in client.calls[0][1]["body"].splitlines())
    assert header == {"index": "px-edges"}
    knn = body["query"]["knn"]["vector"]
    assert knn["filter"] == {"bool": {"filter": [{"term": {"pk": key.pk}}]}}
    assert knn["k"] == 6 and body["size"] == 6  # Serverless over-fetches for duplicates
    assert body["_source"] == ["row_id"]


def test_hybrid_search_is_one_msearch_with_a_knn_and_a_match_body() -> None:
    import json

    knn_reply = {"hits": {"hits": [{"_score": 0.95, "_source": {"row_id": 7}}]}}
    match_reply = {"hits": {"hits": [{"_score": 3.2, "_source": {"row_id": 8}}]}}
    client = FakeClient({"msearch": [{"responses": [knn_reply, match_reply]}]})
    index = _fake_index(client, index_prefix="px")
    key = new_key()
    [hits] = index.search(key, [SearchRequest("chunks", e(0), 4, 0.5, text="Maya beagle")])
    assert [h.id for h in hits] == [7, 8]  # first in one ranking each: a tie, by ID
    assert len(client.calls) == 1 and index.requests == 1
    lines = [json.loads(line) for line in client.calls[0][1]["body"].splitlines()]
    assert lines[0] == lines[2] == {"index": "px-chunks"}
    assert "knn" in lines[1]["query"]
    match = lines[3]["query"]["bool"]
    assert match["filter"] == [{"term": {"pk": key.pk}}]
    assert match["must"] == [{"match": {"text": "Maya beagle"}}]
    assert lines[3]["size"] == 4


def test_aws_endpoints_are_recognised() -> None:
    from gligabao.vectors.opensearch.transport import is_aws_endpoint

    assert is_aws_endpoint("https://search-x.us-east-1.es.amazonaws.com")
    assert is_aws_endpoint("https://abc.us-east-1.aoss.amazonaws.com:443")
    assert not is_aws_endpoint("http://127.0.0.1:9200")
    assert not is_aws_endpoint("http://search-x.us-east-1.es.amazonaws.com")


def test_from_settings() -> None:
    from gligabao.config import Settings
    from gligabao.vectors.opensearch.store import OpenSearchVectorIndex

    settings = Settings(
        opensearch_url="http://127.0.0.1:9",
        opensearch_service="aoss",
        opensearch_index_prefix="acme",
        region="eu-west-3",
    )
    index = OpenSearchVectorIndex.from_settings(settings, dimension=DIM)
    assert index.serverless and index.dimension == DIM
    assert index.index_name("summaries") == "acme-summaries"
    with pytest.raises(ValueError):
        OpenSearchVectorIndex("http://127.0.0.1:9", dimension=DIM, service="solr")
