"""memory/scoring.py's scores are the sum of named parts: an explanation is
the arithmetic itself. Each weight of the retrieval profile moves exactly
the part it names, and the total follows: a weight applied outside the
parts (the explanation no longer saying what made the score) fails here."""

from __future__ import annotations

from typing import Any

import pytest

from gligabao.memory.scoring import (
    Score,
    beside_score,
    fact_score,
    lent,
    passage_score,
    seed_line_score,
    seed_strength,
    source_score,
    stems,
)
from gligabao.retrieval_profile import DEFAULT, RetrievalProfile

QUESTION = set(stems("Where does Alice work now?"))


def _fact(p: RetrievalProfile) -> Score:
    return fact_score(
        0.8,
        0.4,
        QUESTION,
        "Alice works_at Acme: Alice works at Acme.",
        p,
        age=(3, 7),
        provenance=True,
        when=True,
    )


def _passage(p: RetrievalProfile) -> Score:
    return passage_score(4, QUESTION, "Alice: I work at Acme now.", p, source=0.3, when=True)


# weight -> (the score it enters, the part it moves)
PARTS: dict[str, tuple[Any, str]] = {
    "hop1": (_fact, "reach"),
    "w_edge_sim": (_fact, "similarity"),
    "w_lexical": (_fact, "lexical"),
    "w_recency": (_fact, "recency"),
    "w_provenance": (_fact, "provenance"),
    "w_when": (_fact, "when"),
    "w_passage": (_passage, "match"),
    "passage_decay": (_passage, "match"),
    "passage_base": (_passage, "match"),
    "w_seed_line": (lambda p: seed_line_score(1.2, p), "seed_line"),
    "w_beside": (lambda p: beside_score(2.0, 7, p), "beside"),
}
# Weights that make an input of a part (shown beside it), not a part.
INPUTS: dict[str, Any] = {
    "hop2": lambda p: lent(2.0, p),  # what a two-hop entity passes: a fact's ``reach``
    "w_keyword": lambda p: seed_strength(4, None, p),  # a seed's ``strength``
    "w_entity_sim": lambda p: seed_strength(None, 0.9, p),
    "w_source": lambda p: source_score(2.0, p),  # a passage's ``source`` part
}
# Not weights of a score: where the fill cuts, and how many it shows.
NOT_SCORES = {"relevance_floor", "passages_only_floor"}


def _changed(field: str) -> RetrievalProfile:
    value = getattr(DEFAULT, field)
    return DEFAULT.model_copy(update={field: value * 2 if value else 1.0})


def _adds_up(s: Score) -> None:
    total = 0.0
    for _, v in s.parts:
        total += v
    assert s.total == total
    assert s.public()["score"] == sum(s.public()["parts"].values())


@pytest.mark.parametrize("field", sorted(PARTS))
def test_a_weight_moves_its_part_and_the_score_with_it(field: str) -> None:
    score, part = PARTS[field]
    before, after = score(DEFAULT), score(_changed(field))
    _adds_up(before)
    _adds_up(after)
    was, now = dict(before.parts), dict(after.parts)
    assert now[part] != was[part], f"{field} does not move the part {part!r}"
    assert after.total - before.total == pytest.approx(now[part] - was[part])
    assert {k: v for k, v in now.items() if k != part} == {
        k: v for k, v in was.items() if k != part
    }


@pytest.mark.parametrize("field", sorted(INPUTS))
def test_a_weight_of_an_input_moves_it(field: str) -> None:
    assert INPUTS[field](_changed(field)) != INPUTS[field](DEFAULT)


def test_every_float_weight_is_explained() -> None:
    floats = {name for name, f in RetrievalProfile.model_fields.items() if f.annotation is float}
    assert floats == set(PARTS) | set(INPUTS) | NOT_SCORES


def test_the_fact_parts_come_in_the_order_they_are_added() -> None:
    s = _fact(DEFAULT)
    assert [k for k, _ in s.parts] == [
        "reach",
        "similarity",
        "lexical",
        "recency",
        "provenance",
        "when",
    ]
    assert s.inputs["age"] == 3 / 7
    assert dict(s.parts)["recency"] == DEFAULT.w_recency * 3 / 7
