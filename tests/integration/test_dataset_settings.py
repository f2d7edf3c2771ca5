"""A dataset's settings over HTTP (issue 44), GET and PUT
/v1/gb/datasets/{name}/settings, on both stores through the real HTTP stack:
summaries turned off by the route cost a remember no summary call; a TTL
dataset's texts get their expires_at and the retention sweep forgets them;
bad inputs are 400 (an unknown dataset, or another user's, 404) and write
nothing."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from test_summaries import ALICE_ACME, gb_env, served, settled, store  # noqa: F401  (fixtures)

from conftest import Harness
from gligabao import clock
from gligabao.models import DatasetKey

URL = "/v1/gb/datasets/{}/settings?user_id={}"
FAR = "9999-12-31T23:59:59Z"


def put(gb: Harness, body: Any, name: str = "main", user: str = "u1") -> Any:
    return gb.client.request("PUT", URL.format(name, user), body)


def options(user: str = "u1", name: str = "main") -> dict[str, Any]:
    from gligabao import wiring

    return wiring.notes_store().get_options(DatasetKey(user, name))


def due(gb: Harness, name: str) -> list[tuple[int, str]]:
    return [(a, at) for k, a, at in gb.graph.due_expiries(FAR, 100) if k.dataset == name]


def _sweep(at: str) -> dict[str, int]:
    from gligabao import wiring
    from gligabao.memory.retention import sweep

    return sweep(wiring.graph_store(), wiring.vector_index(), at)


def test_summaries_off_by_the_route_cost_a_remember_no_call(served: Harness) -> None:  # noqa: F811
    from gligabao import wiring

    gb = served
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme.", dataset="quiet")
    settled(gb, dataset="quiet")
    r = gb.client.get(URL.format("quiet", "u1"))
    assert (r.status, r.body) == (
        200,
        {"dataset": "quiet", "summaries": True, "text_ttl_days": None},
    )
    r = put(gb, {"summaries": False}, "quiet")
    assert (r.status, r.body) == (
        200,
        {"dataset": "quiet", "summaries": False, "text_ttl_days": None},
    )
    assert gb.client.get(URL.format("quiet", "u1")).body["summaries"] is False
    calls = gb.llm.calls("summarize_entity")
    gb.llm.script("extract", ALICE_ACME)
    gb.remember("Alice works at Acme again.", dataset="quiet")
    time.sleep(1.0)  # a job would have been queued by now: none is
    assert gb.llm.calls("summarize_entity") == calls
    assert wiring.notes_store().stale_count(DatasetKey("u1", "quiet"), 1) == 0


def test_a_ttl_dataset_s_texts_expire_and_the_sweep_forgets_them(served: Harness) -> None:  # noqa: F811
    gb = served
    gb.remember("The first note.", dataset="brief", extract=False)  # before the TTL: kept
    r = put(gb, {"text_ttl_days": 7}, "brief")
    assert r.status == 200, r.body
    assert r.body["text_ttl_days"] == 7
    before = clock.now()
    second = gb.remember("The second note.", dataset="brief", extract=False)
    after = clock.now()
    own = gb.remember("The third note.", dataset="brief", extract=False, expires_at=FAR)
    [(aid, at), (own_id, own_at)] = due(gb, "brief")
    assert aid == second["artifacts"][0] and own_id == own["artifacts"][0]
    assert own_at == FAR  # the request's own expires_at wins
    week = timedelta(days=7)
    assert before + week <= clock.parse(at) <= after + week
    assert _sweep(clock.fmt(clock.parse(at) - timedelta(seconds=1)) or "")["forgotten"] == 0
    assert _sweep(clock.fmt(clock.parse(at) + timedelta(seconds=1)) or "")["forgotten"] == 1
    key = DatasetKey("u1", "brief")
    assert sorted(a.text for a in gb.graph.iter_artifacts(key)) == [
        "The first note.",
        "The third note.",
    ]
    # null: no TTL for texts remembered from now on.
    assert put(gb, {"text_ttl_days": None}, "brief").body["text_ttl_days"] is None
    gb.remember("The fourth note.", dataset="brief", extract=False)
    assert [a for a, _ in due(gb, "brief")] == [own_id]


BAD = [
    ({"summaries": "no"}, "summaries"),
    ({"summaries": 0}, "summaries"),
    ({"text_ttl_days": 0}, "text_ttl_days"),
    ({"text_ttl_days": 1.5}, "text_ttl_days"),
    ({"text_ttl_days": True}, "text_ttl_days"),
    ({"text_ttl_days": "7"}, "text_ttl_days"),
    ({"summaries": False, "colour": "red"}, "colour"),
    ([], "object"),
]


def test_bad_settings_are_400_and_write_nothing(served: Harness) -> None:  # noqa: F811
    gb = served
    gb.remember("A note.", extract=False)
    assert put(gb, {"summaries": True, "text_ttl_days": 3}).status == 200
    stored = options()
    for body, named in BAD:
        r = put(gb, body)
        assert r.status == 400, (body, r.body)
        assert named in r.body["error"], (body, r.body)
        assert options() == stored
    assert gb.client.request("PUT", URL.format("main", "u1"), raw=b"{not json").status == 400
    assert options() == stored


@pytest.mark.parametrize("method", ["GET", "PUT"])
def test_an_unknown_or_another_user_s_dataset_is_404_and_writes_nothing(
    served: Harness,  # noqa: F811
    method: str,
) -> None:
    gb = served
    gb.remember("A note.", extract=False)
    body = {"summaries": False} if method == "PUT" else None
    for name, user in (("nowhere", "u1"), ("main", "u2")):
        r = gb.client.request(method, URL.format(name, user), body)
        assert r.status == 404, r.body
        assert options(user, name) == {}
        assert gb.graph.get_dataset(DatasetKey(user, name)) is None
    assert options() == {}


def test_the_python_client_reads_and_replaces_settings(served: Harness) -> None:  # noqa: F811
    from gligabao.client import ApiError
    from gligabao.client import Client as GbClient

    if not hasattr(served.client, "base"):
        pytest.skip("the DynamoDB harness answers in process: no URL for the client")
    served.remember("A note.", dataset="kept", extract=False)
    client = GbClient(served.client.base, user_id="u1")
    assert client.settings("kept").text_ttl_days is None
    out = client.put_settings("kept", {"summaries": False, "text_ttl_days": 30.0})  # an integer
    assert (out.summaries, out.text_ttl_days) == (False, 30)
    with pytest.raises(ApiError) as err:
        client.put_settings("kept", {"text_ttl_days": -1})
    assert err.value.status == 400
    assert client.settings("kept") == out
