"""The second search round of a query, over HTTP: the names the best matched
passage adds to the question find a passage that shares neither a word nor a
vector with the question (the second paragraph of a bridge question)."""

from __future__ import annotations

from typing import Any

import pytest
from query_helpers import ask, graph_snapshot, passage_blocks, prompt

from conftest import Harness
from gligabao.errors import UpstreamError
from gligabao.memory.gather import Gatherer

QUESTION = "What government position was held by the woman who portrayed Corliss Archer?"
CAREER = "Shirley Temple later served as United States ambassador to Ghana."
AT = "2025-03-04T10:00:00Z"


def remember(gb: Harness, text: str) -> int:
    gb.llm.script("extract", {"entities": [], "edges": []})
    out: dict[str, Any] = gb.remember(text, reference_time=AT)
    return int(out["artifact_id"])


def ask_counted(gb: Harness) -> tuple[dict[str, Any], dict[str, Any]]:
    """The reply, and the counts of its "entities" step (wave 4, where the
    second round's passages are read)."""
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": ask(gb, QUESTION)})
    assert r.status == 200, r.body
    steps = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1").body["steps"]
    [wave4] = [s.get("counts", s) for s in steps if s["name"] == "entities"]
    return r.body, wave4


def test_the_names_of_the_best_passage_find_the_second_hop(gb: Harness) -> None:
    film = remember(
        gb, "Kiss and Tell is a 1945 film in which Shirley Temple plays Corliss Archer."
    )
    career = remember(gb, CAREER)
    remember(gb, "Lovely weather in the harbour today.")
    gb.llm.script("query", {"answer": "Ambassador to Ghana.", "passages": [film, career]})
    reply, wave4 = ask_counted(gb)
    assert set(passage_blocks(prompt(gb))) == {film, career}
    assert wave4["second_round"] == 1
    cited = [p["artifact_id"] for p in reply["evidence"]["passages"]]
    assert sorted(cited) == sorted([film, career])


def test_without_a_new_name_there_is_no_second_hop(gb: Harness) -> None:
    film = remember(
        gb, "Kiss and Tell is a 1945 film in which a young actress plays Corliss Archer."
    )
    remember(gb, CAREER)
    gb.llm.script("query", {"answer": "I don't know.", "passages": [film]})
    _, wave4 = ask_counted(gb)
    # "Kiss and Tell" is new, but no other passage holds it: the career stays out.
    assert set(passage_blocks(prompt(gb))) == {film}
    assert wave4["second_round"] == 0


def test_a_second_round_that_fails_is_a_502_and_writes_nothing(
    gb: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vector store fails on the second search only (the first answered):
    the query fails as a first search failing would, with its call recorded
    as failed, and no graph row is written."""
    remember(gb, "Kiss and Tell is a 1945 film in which Shirley Temple plays Corliss Archer.")
    remember(gb, CAREER)

    def down(self: Gatherer, key: Any, text: str, *_: Any) -> Any:
        raise UpstreamError("vector index search: unavailable")

    monkeypatch.setattr(Gatherer, "_search_again", down)
    before = graph_snapshot(gb)
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": ask(gb, QUESTION)})
    assert r.status == 502, r.body
    assert "vector index search" in r.body["error"]
    assert gb.llm.calls("query") == 0
    assert graph_snapshot(gb) == before
    call = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1")
    assert call.status == 200 and call.body["status"] != "ok", call.body
