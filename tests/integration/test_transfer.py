"""`gligabao export` / `gligabao import`: a dataset as JSON lines, moved from
the local SQLite file to another file and to DynamoDB (moto server) and back,
unchanged: entities, edges with every temporal field, artifacts and chunks,
provenance links; names and open facts claimed again; vectors rebuilt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.openai_server import FakeOpenAI
from gligabao import wiring
from gligabao.local.cli import main
from gligabao.models import Artifact, DatasetKey, Edge, Entity, GraphWrite

KEY = DatasetKey("u1", "main")
T0, T1, T2 = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI) -> Iterator[None]:
    # main() sets these itself; set first here so that they are restored after.
    for name in ("GB_LOCAL", "GB_DATA", "GB_DYNAMODB_ENDPOINT", "GB_OPENSEARCH_URL"):
        monkeypatch.setenv(name, "")
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    monkeypatch.setenv("GB_EMBEDDING_DIMENSION", "64")
    yield
    wiring.reset()


def use(monkeypatch: pytest.MonkeyPatch, data: Path | None = None, **extra: str) -> Any:
    monkeypatch.setenv("GB_LOCAL", "1")
    monkeypatch.setenv("GB_DATA", str(data or ""))
    for k, v in extra.items():
        monkeypatch.setenv(k, v)
    wiring.reset()
    return wiring.graph_store()


def build(graph: Any) -> None:
    graph.ensure_dataset(KEY)
    graph.allocate_ids(KEY, 3, 3, 3)
    graph.claim_names(KEY, "build", {"alice": 1, "paris": 2, "lyon": 3})
    graph.claim_facts(KEY, "build", {"1#lives_in#3": 3})
    graph.commit(
        KEY,
        GraphWrite(
            txn="build",
            artifacts=[
                Artifact(1, "Alice moved from Paris to Lyon.", T0, T0, session_id="s1"),
                Artifact(
                    2,
                    "chunk one",
                    T1,
                    T0,
                    parent_id=1,
                    index=0,
                    call_id="c1",
                    summary="Alice moved.",
                ),
                Artifact(3, "chunk two", T1, T0, parent_id=1, index=1),
            ],
            new_entities=[
                Entity(1, "Alice", "person", "a traveller", T0, T1),
                Entity(2, "Paris", "city", "", T0, T0, lat=48.8566, lon=2.3522),
                Entity(3, "Lyon", "city", "", T0, T0, lat=45.764, lon=4.8357),
            ],
            new_edges=[
                Edge(1, 1, 2, "lives_in", "Alice lived in Paris.", 1, T0, T1, T0, T2),
                Edge(
                    2, 1, 2, "lives_in", "Alice lived in Paris until February.", 1, T0, T1, T2, None
                ),
                Edge(3, 1, 3, "lives_in", "Alice lives in Lyon.", 1, T1, None, T2, None),
            ],
            entity_links=[(1, 1), (2, 1), (3, 1), (1, 2)],
            edge_links=[(1, 1), (2, 1), (3, 1)],
        ),
    )


def lines(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    for r in rows:
        if r["row"] == "dataset":
            r.pop("created_at")  # when the target's dataset was created
    return rows


def test_round_trip_sqlite_to_sqlite_and_dynamodb_and_back(
    env: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    dynamo_server: str,
    moto_server_url: str,
) -> None:
    src, dst = tmp_path / "a.db", tmp_path / "b.db"
    build(use(monkeypatch, src))
    out1 = tmp_path / "one.jsonl"
    assert main(["export", "--user", "u1", "--data", str(src), "--out", str(out1)]) == 0
    exported = lines(out1)
    kinds = [r["row"] for r in exported]
    assert kinds.count("entity") == 3 and kinds.count("edge") == 3
    assert kinds.count("artifact") == 3 and kinds.count("link") == 7
    edge1 = next(r for r in exported if r["row"] == "edge" and r["id"] == 1)
    assert (edge1["valid_at"], edge1["invalid_at"], edge1["created_at"], edge1["expired_at"]) == (
        T0,
        T1,
        T0,
        T2,
    )

    # into another SQLite file, with vectors
    assert main(["import", "--user", "u1", "--data", str(dst), "--in", str(out1)]) == 0
    out2 = tmp_path / "two.jsonl"
    assert main(["export", "--user", "u1", "--data", str(dst), "--out", str(out2)]) == 0
    assert lines(out2) == exported
    graph = use(monkeypatch, dst)
    ds = graph.get_dataset(KEY)
    assert (ds.entities, ds.edges, ds.artifacts) == (3, 3, 3)
    assert graph.allocate_ids(KEY, 1, 1, 1) == (4, 4, 4)  # new rows continue above
    assert graph.entity_ids_by_names(KEY, ["alice", "lyon"]) == {"alice": 1, "lyon": 3}
    assert graph.claim_facts(KEY, "t9", {"1#lives_in#3": 9}) == {"1#lives_in#3": 3}
    # the ended fact's triple is free
    assert graph.claim_facts(KEY, "t9", {"1#lives_in#2": 9}) == {"1#lives_in#2": 9}
    graph.abort(KEY, "t9")
    vectors = wiring.vector_index()
    assert [vectors.count(KEY, k) for k in ("entities", "edges", "chunks", "summaries")] == [
        3,
        3,
        2,
        1,
    ]
    assert [h.id for h in vectors.nearby(KEY, 45.76, 4.83, 10, 5)] == [3]

    # without vectors, then `gligabao reindex --data` on the file
    third = tmp_path / "c.db"
    assert (
        main(["import", "--user", "u1", "--data", str(third), "--in", str(out1), "--no-vectors"])
        == 0
    )
    use(monkeypatch, third)
    assert wiring.vector_index().count(KEY, "edges") == 0
    assert main(["reindex", "--user", "u1", "--data", str(third)]) == 0
    use(monkeypatch, third)
    assert [wiring.vector_index().count(KEY, k) for k in ("entities", "edges", "chunks")] == [
        3,
        3,
        2,
    ]

    # into DynamoDB (a deployed stack), and back out
    endpoint = {"GB_DYNAMODB_ENDPOINT": moto_server_url, "GB_TABLE_PREFIX": dynamo_server}
    use(monkeypatch, **endpoint)
    assert main(["import", "--user", "u1", "--in", str(out1), "--no-vectors"]) == 0
    out3 = tmp_path / "three.jsonl"
    use(monkeypatch, **endpoint)
    assert main(["export", "--user", "u1", "--out", str(out3)]) == 0
    assert lines(out3) == exported


def test_import_refuses_a_dataset_with_rows_and_a_bad_file_writing_nothing(
    env: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    src = tmp_path / "a.db"
    build(use(monkeypatch, src))
    out = tmp_path / "one.jsonl"
    assert main(["export", "--user", "u1", "--data", str(src), "--out", str(out)]) == 0
    before = out.read_text()
    # into the same, non-empty dataset: refused, nothing changes
    assert main(["import", "--user", "u1", "--data", str(src), "--in", str(out)]) == 1
    assert "already has rows" in capsys.readouterr().err
    assert main(["export", "--user", "u1", "--data", str(src), "--out", str(out)]) == 0
    assert out.read_text() == before
    # a broken file: refused before anything is written
    bad = tmp_path / "bad.jsonl"
    for text, message in [
        (before + "{not json\n", "not JSON"),
        (before + '{"row": "mystery"}\n', "unknown row type"),
        (before + '{"row": "link", "entity_id": 1}\n', "a link needs"),
        (before.split("\n", 1)[1], "no dataset line"),
    ]:
        bad.write_text(text)
        assert main(["import", "--user", "u2", "--data", str(src), "--in", str(bad)]) == 1
        assert message in capsys.readouterr().err
        assert use(monkeypatch, src).list_datasets("u2") == []
    # an unknown dataset does not export
    assert main(["export", "--user", "nobody", "--data", str(src), "--out", str(out)]) == 1
