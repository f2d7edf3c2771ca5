"""memory/rerank.py: the reranker's order over the best facts and passages,
the old scores kept among them (so the floor and the budget cut as many),
a seed's own line and the candidates past GB_RERANK_CANDIDATES untouched.
Through the real HTTP adapter to the loopback fake."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from fakes.rerank_server import FakeRerank
from gligabao.ai.rerank.http_api import HttpReranker
from gligabao.config import Settings
from gligabao.memory.context import Passage, Scored
from gligabao.memory.rerank import document, rerank
from gligabao.models import Artifact, Edge, Entity
from gligabao.records.meter import Meter
from gligabao.records.model import new_call

ALICE, ACME, LYON = Entity(1, "Alice"), Entity(2, "Acme"), Entity(3, "Lyon")
ENTITIES = {e.id: e for e in (ALICE, ACME, LYON)}
WORKS = Edge(501, 1, 2, "works_at", "Alice works at Acme.")
LIVES = Edge(502, 1, 3, "lives_in", "Alice lives in Lyon.")
TEXT = Artifact(901, "Alice moved to Lyon in 2019.", "2025-01-01T00:00:00Z", "2024-03-05T10:00:00Z")


class _Unused:
    provider = "none"
    model = "none"


@pytest.fixture
def fake() -> Iterator[FakeRerank]:
    with FakeRerank() as f:
        yield f


def meter(fake: FakeRerank | None) -> Meter:
    call = new_call("c1", "query", "u1", "default", None)
    reranker = HttpReranker(fake.base_url, "m", fake.api_key, max_retries=0) if fake else None
    return Meter(call, _Unused(), _Unused(), {}, reranker)  # type: ignore[arg-type]


def candidates() -> list[Scored]:
    return [
        Scored(3.0, entity=ALICE),
        Scored(2.0, edge=WORKS),
        Scored(1.0, edge=LIVES),
        Scored(0.5, passage=Passage(TEXT, None, TEXT.text)),
    ]


def test_the_reranker_orders_the_best_and_keeps_their_scores(fake: FakeRerank) -> None:
    fake.prefer("lives in", 0.9).prefer("works at", 0.2)
    out = rerank(
        meter(fake), Settings(rerank_candidates=2), "Where does Alice live?", candidates(), ENTITIES
    )
    [sent] = fake.reranks()
    assert sent["documents"] == [
        "Alice works at Acme: Alice works at Acme.",
        "Alice lives in Lyon: Alice lives in Lyon.",
    ]
    by_id = {(c.edge or c.entity or c.passage.chunk).id: c.score for c in out}  # type: ignore[union-attr]
    assert by_id == {1: 3.0, 502: 2.0, 501: 1.0, 901: 0.5}


def test_equal_old_scores_still_follow_the_reranker(fake: FakeRerank) -> None:
    fake.prefer("lives in", 0.9)
    tied = [Scored(1.0, edge=WORKS), Scored(1.0, edge=LIVES)]
    out = rerank(meter(fake), Settings(), "q", tied, ENTITIES)
    assert out[1].score > out[0].score


def test_without_a_reranker_or_with_one_candidate_nothing_is_sent(fake: FakeRerank) -> None:
    cands = candidates()
    assert rerank(meter(None), Settings(), "q", cands, ENTITIES) is cands
    one = [Scored(3.0, entity=ALICE), Scored(1.0, edge=WORKS)]
    assert rerank(meter(fake), Settings(), "q", one, ENTITIES) is one
    assert fake.reranks() == []


def test_a_passage_is_read_with_its_date() -> None:
    assert document(Scored(1.0, passage=Passage(TEXT, "a move", None)), ENTITIES) == (
        "2024-03-05: a move"
    )
    assert document(Scored(1.0, passage=Passage(TEXT, None, TEXT.text)), ENTITIES) == (
        "2024-03-05: Alice moved to Lyon in 2019."
    )
    # A turn is read after its speaker, as the context shows it.
    said = replace(TEXT, text="I moved to Lyon in 2019.", speaker="Alice")
    assert document(Scored(1.0, passage=Passage(said, None, said.text)), ENTITIES) == (
        "2024-03-05: Alice: I moved to Lyon in 2019."
    )
