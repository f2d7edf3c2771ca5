"""POST /v1/gb/entities/{id}/split, on both stores (DynamoDB on moto, and the
local server's SQLite file): a wrong merge undone, its facts and mentions
moved to a new entity with their history kept; every refusal writes
nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from remember_helpers import ent, extraction, fact
from test_sqlite_server import db_path, gb_sqlite  # noqa: F401  (the SQLite fixture)

from conftest import Harness, Reply
from fakes.extraction import links
from gligabao.local.server import make_event
from gligabao.models import DatasetKey

KEY = DatasetKey("u1", "main")


@pytest.fixture(params=["dynamodb", "sqlite"])
def mem(request: pytest.FixtureRequest) -> Harness:
    harness: Harness = request.getfixturevalue("gb" if request.param == "dynamodb" else "gb_sqlite")
    return harness


def _wrong_merge(mem: Harness) -> None:
    """Dan Haas (1) works at Acme Roofing (2), from text 1; then a model
    files Hal Haas under Dan: Dan (1) teaches at Riverside School (3), text 2."""
    mem.llm.script(
        "extract",
        extraction(
            [ent("Dan Haas", "person", "roofer"), ent("Acme Roofing", "organization")],
            [fact("Dan Haas", "Acme Roofing", "works_at", valid_at="2020-01-01T00:00:00Z")],
        ),
    )
    mem.remember("Dan Haas works at Acme Roofing.")
    wrong = extraction(
        [ent("Hal Haas", "person", "piano teacher"), ent("Riverside School", "organization")],
        [fact("Hal Haas", "Riverside School", "teaches_at", valid_at="2021-09-01T00:00:00Z")],
    )
    mem.llm.script("extract", links(wrong, {"Hal Haas": "Dan Haas"}))
    out = mem.remember("Hal Haas teaches piano at Riverside School.")
    assert [(e["id"], e["match"]) for e in out["entities"]] == [(1, "model"), (3, None)]


def _split(mem: Harness, entity: Any, body: dict[str, Any]) -> Reply:
    return mem.client.post(f"/v1/gb/entities/{entity}/split", {"user_id": "u1", **body})


def _snapshot(mem: Harness) -> dict[str, Any]:
    """The graph through the port: rows, provenance links, counts."""
    g = mem.graph
    ents = sorted((e.id, e.name, e.description) for e in g.iter_entities(KEY))
    edges = sorted(
        (e.id, e.source_id, e.target_id, e.relation, e.expired_at) for e in g.iter_edges(KEY)
    )
    ds = g.get_dataset(KEY)
    return {
        "entities": ents,
        "edges": edges,
        "entity_links": {i: g.entity_artifacts(KEY, i) for i, _, _ in ents},
        "edge_links": {e[0]: g.edge_artifacts(KEY, e[0]) for e in edges},
        "names": g.entity_ids_by_names(KEY, ["dan haas", "hal haas", "riverside school"]),
        "counts": (ds.entities, ds.edges, ds.artifacts) if ds else None,
    }


def test_split_moves_facts_and_mentions_and_keeps_history(mem: Harness) -> None:
    _wrong_merge(mem)
    before = {e.id: e for e in mem.graph.iter_edges(KEY)}
    llm_calls = mem.llm.calls()
    r = _split(mem, 1, {"name": "Hal Haas", "edges": [2], "mentions": [2]})
    assert r.status == 200, r.body
    assert r.body == {
        "entity": {"id": 4, "name": "Hal Haas", "type": "person"},
        "moved": {"edges": [3], "mentions": [2]},
    }
    assert mem.llm.calls() == llm_calls  # no LLM call: one embeddings request
    g = mem.graph
    edges = g.get_edges(KEY, [2, 3])  # a batch read's order is not the IDs'
    old, new = edges[2], edges[3]
    # The original is kept, expired (the memory no longer holds it about Dan);
    # in the world it never ended.
    assert old.expired_at is not None and old.invalid_at is None
    assert (old.source_id, old.target_id) == (1, 3)
    # The copy: the same fact on the new entity, with its time and sources.
    assert (new.source_id, new.target_id, new.relation) == (4, 3, "teaches_at")
    assert (new.valid_at, new.created_at, new.artifact_id) == (
        before[2].valid_at,
        before[2].created_at,
        before[2].artifact_id,
    )
    assert new.expired_at is None
    assert g.edge_artifacts(KEY, 3) == [2]
    assert g.entity_artifacts(KEY, 1) == [1]  # text 2 no longer names Dan
    assert g.entity_artifacts(KEY, 4) == [2]
    assert [e.id for e in g.live_edges_around(KEY, [1], 10)] == [1]
    assert g.entity_ids_by_names(KEY, ["hal haas"]) == {"hal haas": 4}
    ds = g.get_dataset(KEY)
    assert ds is not None and (ds.entities, ds.edges, ds.artifacts) == (4, 3, 2)
    # Hal is his own entity from now on.
    mem.llm.script("extract", extraction([ent("Hal Haas", "person", "plays jazz")]))
    out = mem.remember("Hal Haas plays jazz.")
    assert [(e["id"], e["match"]) for e in out["entities"]] == [(4, "same name")]


def test_split_without_a_name_keeps_the_old_one(mem: Harness) -> None:
    _wrong_merge(mem)
    r = _split(mem, 1, {"mentions": [2]})
    assert r.status == 200, r.body
    assert r.body["entity"] == {"id": 4, "name": "Dan Haas", "type": "person"}
    assert r.body["moved"] == {"edges": [], "mentions": [2]}
    # The old entity keeps its name in the names table; the new one is found by its words.
    assert mem.graph.entity_ids_by_names(KEY, ["dan haas"]) == {"dan haas": 1}
    assert mem.graph.entity_artifacts(KEY, 4) == [2]


@pytest.mark.parametrize(
    ("entity", "body", "status"),
    [
        (999, {"edges": [2]}, 404),  # no such entity
        (1, {"dataset": "nope", "edges": [2]}, 404),  # no such dataset
        (1, {"edges": [999]}, 404),  # no such edge
        (1, {"mentions": [999]}, 404),  # no such text
        ("abc", {"edges": [2]}, 400),  # a malformed id
        (0, {"edges": [2]}, 400),
        (1, {}, 400),  # nothing to move
        (3, {"edges": [1]}, 400),  # a fact of another entity
        (2, {"mentions": [2]}, 400),  # a text that does not name it
        (1, {"edges": ["2"]}, 400),  # IDs are integers
        (1, {"edges": [2], "extra": 1}, 400),
        (1, {"edges": list(range(1, 60)), "mentions": list(range(1, 40))}, 400),  # too many
        (1, {"edges": [2], "name": ""}, 400),
    ],
)
def test_refusals_write_nothing(
    mem: Harness, entity: Any, body: dict[str, Any], status: int
) -> None:
    _wrong_merge(mem)
    before = _snapshot(mem)
    r = _split(mem, entity, body)
    assert r.status == status, r.body
    assert set(r.body) == {"error"}
    assert _snapshot(mem) == before


def test_a_superseded_fact_does_not_move_again(mem: Harness) -> None:
    _wrong_merge(mem)
    assert _split(mem, 1, {"name": "Hal Haas", "edges": [2]}).status == 200
    before = _snapshot(mem)
    r = _split(mem, 1, {"edges": [2]})
    assert r.status == 400 and "superseded" in r.body["error"]
    assert _snapshot(mem) == before


def test_only_an_operator_splits(mem: Harness) -> None:
    from gligabao.handlers import remember

    _wrong_merge(mem)
    before = _snapshot(mem)

    def call(claims: dict[str, Any]) -> int:
        body = json.dumps({"user_id": "u1", "edges": [2]}).encode()
        event = make_event(
            "POST", "/v1/gb/entities/1/split", {"Content-Type": "application/json"}, body, "::1"
        )
        event["requestContext"]["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
        status: int = remember.lambda_handler(event, None)["statusCode"]
        return status

    assert call({"sub": "u1"}) == 403  # the user itself is no operator
    assert _snapshot(mem) == before
    assert call({"sub": "ops", "cognito:groups": "[gligabao-operators]"}) == 200
