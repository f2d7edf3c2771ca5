"""Geo over HTTP: places get coordinates at remember, and query's nearby search
(`geo_nearby` / `geo_radius_km`) finds the geo entities near the places of the
question, with the embedded GeoNames resolver.

Known coordinates (GeoNames): Paris 48.85341, 2.3488; Lyon 45.74906, 4.84789
(Paris-Lyon 392 km); Versailles 48.80146, 2.13042 (17 km from Paris);
New York City 40.71427, -74.00597.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import Harness

pytestmark = pytest.mark.timeout(120)

GEO_OFF = [{"GB_GEO": "off"}]

PARIS = (48.85341, 2.3488)
LYON = (45.74906, 4.84789)


@pytest.fixture
def gb_env() -> dict[str, str]:
    return {"GB_GEO": "on"}


PEOPLE = (("Alice", "Paris"), ("Bob", "New York"), ("Carol", "Versailles"))


def _seed(gb: Harness) -> dict[str, Any]:
    """Alice lives in Paris, Bob in New York, Carol in Versailles (one text each)."""
    out: dict[str, Any] = {}
    for person, city in PEOPLE:
        fact = f"{person} lives in {city}."
        gb.llm.script(
            "extract",
            {
                "entities": [{"name": person, "type": "person"}, {"name": city, "type": "city"}],
                "edges": [
                    {"source": person, "target": city, "relation": "lives_in", "description": fact}
                ],
            },
        )
        out.update({e["name"]: e for e in gb.remember(fact)["entities"]})
    return out


def _key() -> Any:
    from gligabao.models import DatasetKey

    return DatasetKey("u1", "main")


# ------------------------------------------------------------------ remember


def test_remember_gives_places_coordinates(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        {
            "entities": [{"name": "Alice", "type": "person"}, {"name": "Paris", "type": "city"}],
            "edges": [
                {
                    "source": "Alice",
                    "target": "Paris",
                    "relation": "lives_in",
                    "description": "Alice lives in Paris.",
                }
            ],
        },
    )
    out = gb.remember("Alice lives in Paris.")
    by_name = {e["name"]: e for e in out["entities"]}
    assert by_name["Paris"]["lat"] == pytest.approx(PARIS[0], abs=0.01)
    assert by_name["Paris"]["lon"] == pytest.approx(PARIS[1], abs=0.01)
    assert "lat" not in by_name["Alice"]  # a person is no place
    row = gb.graph.get_entities(_key(), [by_name["Paris"]["id"]])[by_name["Paris"]["id"]]
    assert (row.lat, row.lon) == pytest.approx(PARIS, abs=0.01)
    # No detect_geo at remember: it belongs to query.
    assert gb.llm.calls("detect_geo") == 0


# --------------------------------------------------------------------- query


def test_nearby_finds_paris_from_lyon(gb: Harness) -> None:
    ents = _seed(gb)
    paris, new_york = ents["Paris"], ents["New York"]
    assert new_york["lat"] == pytest.approx(40.71, abs=0.05)  # the state resolves to NYC
    gb.llm.script("detect_geo", {"places": ["Lyon"]})
    q = gb.query("Who lives near Lyon?", geo_radius_km=500)

    near = q["nearby"]
    assert near["radius_km"] == 500
    [anchor] = near["anchors"]
    assert anchor["name"] == "Lyon"
    assert (anchor["lat"], anchor["lon"]) == pytest.approx(LYON, abs=0.01)
    found = {n["name"]: n for n in near["nearby"]}
    assert "New York" not in found
    assert "Lyon" not in found  # an anchor is not its own neighbour
    p = found["Paris"]
    assert p["id"] == paris["id"]
    assert p["distance_km"] == pytest.approx(392, abs=5)
    assert p["distance_km"] == round(p["distance_km"], 1)
    assert p["anchor"] == "Lyon"
    assert p["type"] == "city"
    assert (p["lat"], p["lon"]) == pytest.approx(PARIS, abs=0.01)
    # Nearest first: Versailles is farther from Lyon than Paris is.
    names = [n["name"] for n in near["nearby"]]
    assert names == ["Paris", "Versailles"]
    dists = [n["distance_km"] for n in near["nearby"]]
    assert dists == sorted(dists)

    # Lyon is stored, as a place with coordinates.
    lyon_id = anchor["entity_id"]
    assert gb.graph.entity_ids_by_names(_key(), ["lyon"]) == {"lyon": lyon_id}
    lyon = gb.graph.get_entities(_key(), [lyon_id])[lyon_id]
    assert lyon.type == "place"
    assert (lyon.lat, lyon.lon) == pytest.approx(LYON, abs=0.01)

    # The nearby entities and the facts around them were in the answer's context.
    prompt = str(gb.llm.requests_for("query")[-1]["messages"])
    assert "Alice lives in Paris." in prompt
    assert "Carol lives in Versailles." in prompt


def test_stored_place_is_reused(gb: Harness) -> None:
    _seed(gb)
    gb.llm.script("detect_geo", {"places": ["Lyon"]}, times=2)
    first = gb.query("Who lives near Lyon?", geo_radius_km=500)
    before = gb.client.get("/v1/gb/datasets?user_id=u1").body
    second = gb.query("Anyone around Lyon?", geo_nearby=True, geo_radius_km=450)
    after = gb.client.get("/v1/gb/datasets?user_id=u1").body
    assert first["nearby"]["anchors"][0]["entity_id"] == second["nearby"]["anchors"][0]["entity_id"]
    assert before == after  # no second Lyon
    assert second["nearby"]["radius_km"] == 450


def test_existing_place_without_coordinates_is_left_alone(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        {
            "entities": [{"name": "Lyon", "type": "band"}, {"name": "Dan", "type": "person"}],
            "edges": [{"source": "Dan", "target": "Lyon", "relation": "likes"}],
        },
    )
    out = gb.remember("Dan likes the band Lyon.")
    lyon_id = {e["name"]: e for e in out["entities"]}["Lyon"]["id"]
    gb.llm.script("detect_geo", {"places": ["Lyon"]})
    q = gb.query("What is near Lyon?", geo_radius_km=10)
    [anchor] = q["nearby"]["anchors"]
    assert anchor["entity_id"] == lyon_id
    assert (anchor["lat"], anchor["lon"]) == pytest.approx(LYON, abs=0.01)
    row = gb.graph.get_entities(_key(), [lyon_id])[lyon_id]
    assert row.lat is None and row.type == "band"


def test_place_claimed_by_a_concurrent_call(gb: Harness) -> None:
    import threading

    _seed(gb)
    # Another call holds a live lease on "lyon" and has not committed; it
    # gives up a moment later: the query waits for the lease, then creates
    # the place itself.
    gb.graph.claim_names(_key(), "other-call", {"lyon": 999})
    later = threading.Timer(0.5, gb.graph.abort, (_key(), "other-call"))
    later.start()
    gb.llm.script("detect_geo", {"places": ["Lyon"]})
    q = gb.query("Who lives near Lyon?", geo_radius_km=500)
    later.join()
    [anchor] = q["nearby"]["anchors"]
    assert anchor["entity_id"] != 999
    assert (anchor["lat"], anchor["lon"]) == pytest.approx(LYON, abs=0.01)
    assert [n["name"] for n in q["nearby"]["nearby"]] == ["Paris", "Versailles"]
    assert gb.graph.get_entities(_key(), [999]) == {}  # nothing written for it
    assert gb.graph.entity_ids_by_names(_key(), ["lyon"]) == {"lyon": anchor["entity_id"]}


def test_default_radius(gb: Harness) -> None:
    _seed(gb)
    gb.llm.script("detect_geo", {"places": ["Paris"]})
    q = gb.query("Who lives around Paris?", geo_nearby=True)
    near = q["nearby"]
    assert near["radius_km"] == 50
    paris_id = gb.graph.entity_ids_by_names(_key(), ["paris"])["paris"]
    assert [a["entity_id"] for a in near["anchors"]] == [paris_id]  # the stored Paris
    assert [n["name"] for n in near["nearby"]] == ["Versailles"]
    assert near["nearby"][0]["distance_km"] == pytest.approx(17, abs=2)


@pytest.mark.parametrize("gb_env", [{"GB_GEO": "on", "GB_GEO_RADIUS_KM": "10"}])
def test_default_radius_from_the_environment(gb: Harness) -> None:
    _seed(gb)
    gb.llm.script("detect_geo", {"places": ["Paris"]})
    q = gb.query("Who lives around Paris?", geo_nearby=True)
    assert q["nearby"]["radius_km"] == 10
    assert q["nearby"]["nearby"] == []  # Versailles is 17 km away


def test_matched_place_is_an_anchor(gb: Harness) -> None:
    ents = _seed(gb)
    # The question names no place the LLM lists, but "Versailles" matches the
    # entity by keyword: a matched entity with coordinates is an anchor.
    q = gb.query("Who lives close to Versailles?", geo_radius_km=30)
    near = q["nearby"]
    assert [a["entity_id"] for a in near["anchors"]] == [ents["Versailles"]["id"]]
    assert [n["name"] for n in near["nearby"]] == ["Paris"]
    assert near["nearby"][0]["anchor"] == "Versailles"


def test_nearby_absent_without_a_place(gb: Harness) -> None:
    _seed(gb)
    counts = gb.row_counts()
    q = gb.query("What does Alice like?", geo_nearby=True)  # detect_geo: no places
    assert "nearby" not in q
    gb.llm.script("detect_geo", {"places": ["Nowhereville"]})
    q = gb.query("Who lives in Nowhereville?", geo_radius_km=100)
    assert "nearby" not in q
    after = gb.row_counts()
    assert {k: v for k, v in after.items() if k.startswith(("entit", "term", "name"))} == {
        k: v for k, v in counts.items() if k.startswith(("entit", "term", "name"))
    }
    assert gb.graph.entity_ids_by_names(_key(), ["nowhereville"]) == {}


def test_places_not_stored_without_nearby_search(gb: Harness) -> None:
    _seed(gb)
    gb.llm.script("detect_geo", {"places": ["Lyon"]})
    q = gb.query("Who lives near Lyon?")
    assert "nearby" not in q
    assert gb.llm.calls("detect_geo") == 1  # the call runs anyway
    assert gb.graph.entity_ids_by_names(_key(), ["lyon"]) == {}


def test_detect_geo_is_its_own_inference(gb: Harness) -> None:
    _seed(gb)
    gb.llm.script("detect_geo", {"places": ["Lyon"]})
    r = gb.client.post(
        "/v1/gb/query",
        {
            "user_id": "u1",
            "query": "Who lives near Lyon?",
            "geo_radius_km": 500,
            "models": {"detect_geo": "claude-haiku-4-5"},
            "reasoning": {"detect_geo": "low"},
        },
    )
    assert r.status == 200, r.body
    req = gb.llm.requests_for("detect_geo")[0]
    assert req["model"] == "claude-haiku-4-5"
    assert req["max_tokens"] >= 512
    assert "Who lives near Lyon?" in str(req["messages"])
    rows = gb.client.get(f"/v1/gb/inferences?user_id=u1&call_id={r.call_id}").body["inferences"]
    geo = [i for i in rows if i["stage"] == "detect_geo"]
    assert len(geo) == 1
    assert geo[0]["type"] == "query"
    assert geo[0]["model"] == "claude-haiku-4-5"
    assert geo[0]["reasoning"] == "low"
    assert geo[0]["status"] == "ok"
    assert {i["stage"] for i in rows} >= {"detect_geo", "query", "embed"}
    listed = gb.client.get("/v1/gb/inferences?user_id=u1").body["inferences"]
    assert any(i["stage"] == "detect_geo" for i in listed)
    steps = [s["name"] for s in gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1").body["steps"]]
    assert "nearby" in steps


@pytest.mark.parametrize("reply", ["not json at all", {"places": "Lyon"}, {"cities": []}])
def test_bad_detect_geo_reply_is_502(gb: Harness, reply: Any) -> None:
    _seed(gb)
    gb.llm.script("detect_geo", reply)
    r = gb.client.post(
        "/v1/gb/query", {"user_id": "u1", "query": "Near Lyon?", "geo_radius_km": 10}
    )
    assert r.status == 502, r.body
    assert gb.llm.calls("query") == 0
    rows = gb.client.get(f"/v1/gb/inferences?user_id=u1&call_id={r.call_id}").body["inferences"]
    assert [i["status"] != "ok" for i in rows if i["stage"] == "detect_geo"] == [True]
    assert gb.graph.entity_ids_by_names(_key(), ["lyon"]) == {}


# -------------------------------------------------------------------- 400s


@pytest.mark.parametrize(
    "body",
    [
        {"geo_radius_km": 0},
        {"geo_radius_km": -5},
        {"geo_radius_km": 20015.01},
        {"geo_radius_km": 1e9},
        {"geo_radius_km": "50"},
        {"geo_radius_km": True},
        {"geo_radius_km": [50]},
        {"geo_nearby": "yes"},
        {"geo_nearby": False, "geo_radius_km": 10},
    ],
)
def test_bad_geo_params_are_400(gb: Harness, body: dict[str, Any]) -> None:
    _seed(gb)
    gb.llm.reset()
    counts = gb.row_counts()
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": "Near Lyon?", **body})
    assert r.status == 400, r.body
    assert gb.llm.calls() == 0
    assert gb.row_counts() == counts


def test_radius_bounds_are_accepted(gb: Harness) -> None:
    _seed(gb)
    for radius in (0.001, 20015):
        gb.llm.script("detect_geo", {"places": ["Lyon"]})
        q = gb.query("Near Lyon?", geo_radius_km=radius)
        assert q["nearby"]["radius_km"] == radius
    q = gb.query("Near Lyon?", geo_nearby=False)  # explicit off: no search
    assert "nearby" not in q


@pytest.mark.parametrize("gb_env", GEO_OFF)
@pytest.mark.parametrize(
    "body",
    [
        {"geo_nearby": True},
        {"geo_radius_km": 10},
        {"geo_nearby": True, "geo_radius_km": 10},
    ],
)
def test_geo_params_need_geo_on(gb: Harness, body: dict[str, Any]) -> None:
    gb.remember("Alice lives in Paris.")
    gb.llm.reset()
    counts = gb.row_counts()
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": "Near Lyon?", **body})
    assert r.status == 400, r.body
    assert "geo" in str(r.body)
    assert gb.llm.calls() == 0
    assert gb.row_counts() == counts


@pytest.mark.parametrize("gb_env", GEO_OFF)
def test_geo_off_never_detects(gb: Harness) -> None:
    gb.llm.script(
        "extract",
        {
            "entities": [{"name": "Alice", "type": "person"}, {"name": "Paris", "type": "city"}],
            "edges": [{"source": "Alice", "target": "Paris", "relation": "lives_in"}],
        },
    )
    out = gb.remember("Alice lives in Paris.")
    assert all("lat" not in e for e in out["entities"])  # no geo step
    q = gb.query("Who lives near Lyon?", geo_nearby=False)  # false is allowed
    assert "nearby" not in q
    q = gb.query("Who lives near Lyon?", reasoning={"detect_geo": "low"})
    assert "nearby" not in q
    assert gb.llm.calls("detect_geo") == 0
    rows = gb.client.get("/v1/gb/inferences?user_id=u1").body["inferences"]
    assert not any(i["stage"] == "detect_geo" for i in rows)
