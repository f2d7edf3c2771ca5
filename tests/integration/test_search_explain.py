"""A query's and a search's ``"explain": true``: every entity, edge and passage
of the context says why it is there (its score and the parts that made it,
which add up to it), the best candidates left out say why they are not, and
the call record keeps it. A request's ``profile`` (the retrieval profile's
fields) is taken by the local server only; any other server, an unknown field
or a bad value is a 400 that writes nothing."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from query_helpers import GraphBuilder, ask, graph_snapshot, vector_counts

from conftest import Harness


@pytest.fixture
def gb_env(request: pytest.FixtureRequest) -> dict[str, str]:
    return dict(getattr(request, "param", {}))


LOCAL = pytest.mark.parametrize("gb_env", [{"GB_LOCAL": "1"}], indirect=True)


def _graph(gb: Harness) -> GraphBuilder:
    g = GraphBuilder(gb)
    alice = g.entity("Alice", "person", sim=0.9)
    acme = g.entity("Acme", "organization")
    lyon = g.entity("Lyon", "place")
    bob = g.entity("Bob", "person")
    g.edge(alice, acme, "works_at", "Alice works at Acme.", sim=0.9)
    g.edge(alice, lyon, "lives_in", "Alice lives in Lyon.")
    g.edge(bob, lyon, "visited", "Bob visited Lyon once.")
    g.save()
    return g


def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [*body["entities"], *body["edges"], *body["passages"]]


def _adds_up(explain: dict[str, Any]) -> None:
    total = 0.0
    for v in explain["parts"].values():
        total += v
    assert total == explain["score"], explain


def test_every_context_item_says_why_and_the_parts_add_up(gb: Harness) -> None:
    _graph(gb)
    question = ask(gb, "Where does Alice work?")
    plain = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": question})
    r = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": question, "explain": True})
    assert r.status == 200, r.body
    # The same context, explained.
    strip = copy.deepcopy({k: v for k, v in r.body.items() if k != "left_out"})
    for item in _items(strip):
        assert "explain" in item
        _adds_up(item["explain"])
        item.pop("explain")
    assert strip == plain.body
    assert "explain" not in str(plain.body) and "left_out" not in plain.body

    works = next(e for e in r.body["edges"] if e["relation"] == "works_at")
    why = works["explain"]
    assert set(why["parts"]) == {"reach", "similarity", "lexical", "recency", "provenance", "when"}
    assert why["pool"] in ("one_hop", "similar_facts")
    assert why["parts"]["similarity"] > 0  # it resembles the question
    # Alice came in with her best fact, before her own line (a seed's) was weighed.
    alice = next(e for e in r.body["entities"] if e["name"] == "Alice")
    assert alice["explain"]["pool"] == "fact_end"
    assert alice["explain"]["end_of"] in {e["id"] for e in r.body["edges"]}

    for left in r.body["left_out"]:
        assert left["reason"] in ("under_floor", "past_budget")
        _adds_up(left["explain"])

    call = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1").body
    kept = call["result"]["explain"]
    assert kept["edges"][str(works["id"])] == why
    assert kept["left_out"] == r.body["left_out"]


def test_left_out_gives_the_best_candidates_and_their_reason(gb: Harness) -> None:
    _graph(gb)
    question = ask(gb, "Where does Alice work?")
    # A budget that holds the seeds' lines but not every fact.
    body = {"user_id": "u1", "query": question, "explain": True, "max_context_tokens": 100}
    r = gb.client.post("/v1/gb/search", body)
    assert r.status == 200, r.body
    left = r.body["left_out"]
    assert left, r.body
    assert len(left) <= 5
    scores = [x["explain"]["score"] for x in left]
    assert scores == sorted(scores, reverse=True)
    assert {x["reason"] for x in left} <= {"under_floor", "past_budget"}


def test_query_with_explain_explains_its_context_and_evidence(gb: Harness) -> None:
    _graph(gb)
    question = ask(gb, "Where does Alice work?")
    gb.llm.script("query", {"answer": "At Acme.", "entities": [], "edges": [], "passages": []})
    plain = gb.query(question)
    gb.llm.script("query", {"answer": "At Acme.", "entities": [], "edges": [], "passages": []})
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": question, "explain": True})
    assert r.status == 200, r.body
    assert {e["relation"] for e in r.body["context"]["edges"]} == {
        "works_at",
        "lives_in",
        "visited",
    } or r.body["context"]["edges"]
    for item in _items(r.body["context"]):
        _adds_up(item["explain"])
    assert "left_out" in r.body
    assert "context" not in plain and "left_out" not in plain


@pytest.mark.parametrize("route", ["/v1/gb/search", "/v1/gb/query"])
def test_a_profile_is_refused_off_the_local_server_and_writes_nothing(
    gb: Harness, route: str
) -> None:
    g = _graph(gb)
    tables, vectors = graph_snapshot(gb), vector_counts(gb, g.key)
    body = {"user_id": "u1", "query": "Where?", "profile": {"relevance_floor": 0.1}}
    r = gb.client.post(route, body)
    assert r.status == 400, r.body
    assert r.body["error"].startswith("profile:")
    assert graph_snapshot(gb) == tables
    assert vector_counts(gb, g.key) == vectors
    assert gb.llm.calls() == 0


@LOCAL
@pytest.mark.parametrize(
    ("profile", "message"),
    [
        ({"no_such_weight": 1}, "profile.no_such_weight: unknown field"),
        ({"relevance_floor": 2.0}, "profile.relevance_floor"),
        ({"keyword_seeds": "ten"}, "profile.keyword_seeds"),
        ({"edge_cap": 0}, "profile.edge_cap"),
    ],
)
@pytest.mark.parametrize("route", ["/v1/gb/search", "/v1/gb/query"])
def test_a_bad_profile_is_a_400_naming_the_field_and_writes_nothing(
    gb: Harness, route: str, profile: dict[str, Any], message: str
) -> None:
    g = _graph(gb)
    tables, vectors = graph_snapshot(gb), vector_counts(gb, g.key)
    r = gb.client.post(route, {"user_id": "u1", "query": "Where?", "profile": profile})
    assert r.status == 400, r.body
    assert message in r.body["error"]
    assert graph_snapshot(gb) == tables
    assert vector_counts(gb, g.key) == vectors
    assert gb.llm.calls() == 0


@LOCAL
def test_the_local_server_takes_a_profile_and_the_explanation_follows_it(gb: Harness) -> None:
    _graph(gb)
    question = ask(gb, "Where does Alice work?")
    base = {"user_id": "u1", "query": question, "explain": True}
    before = gb.client.post("/v1/gb/search", base).body
    heavier = {**base, "profile": {"w_edge_sim": 7.0}}
    after = gb.client.post("/v1/gb/search", heavier)
    assert after.status == 200, after.body

    def works(body: dict[str, Any]) -> dict[str, Any]:
        return next(e for e in body["edges"] if e["relation"] == "works_at")["explain"]

    assert works(after.body)["parts"]["similarity"] == pytest.approx(
        2 * works(before)["parts"]["similarity"]
    )
    _adds_up(works(after.body))
    # A floor of 1: only the best fact (and the seeds' lines) stay.
    strict = gb.client.post("/v1/gb/search", {**base, "profile": {"relevance_floor": 1.0}})
    assert strict.status == 200, strict.body
    assert len(strict.body["edges"]) == 1
    assert {x["reason"] for x in strict.body["left_out"]} == {"under_floor"}
