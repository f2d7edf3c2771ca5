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


def _covered(p: RetrievalProfile, question: str, *, speaker: str = "user") -> Score:
    """memory/coverage.py's rules over three windows of one reply (session s1):
    the last one's explanation."""
    from gligabao.memory.context import Passage, Scored
    from gligabao.memory.coverage import cover
    from gligabao.models import Artifact

    t = "2024-03-15T00:00:00Z"
    cs = []
    for i, score in ((11, 1.0), (12, 0.9), (13, 0.8)):
        a = Artifact(i, f"window {i}", t, t, "s1", 10, None, None, None, speaker)
        cs.append(Scored(score, passage=Passage(a, None, a.text), why=Score([("match", score)])))
    cover(question, cs, p)
    assert cs[-1].why is not None
    return cs[-1].why


def _prompted(p: RetrievalProfile) -> Score:
    from gligabao.memory.context import Passage, Scored
    from gligabao.memory.coverage import prompt_ids, prompts_of
    from gligabao.models import Artifact

    t = "2024-03-15T00:00:00Z"
    w = Artifact(12, "a reply's window", t, t, "s1", 11, None, None, None, "assistant")
    turn = Artifact(10, "what I asked", t, t, "s1", speaker="user")
    cs = [Scored(2.0, passage=Passage(w, None, w.text), why=Score([("match", 2.0)]))]
    (new,) = prompts_of(cs, prompt_ids(cs, 10), {10: turn}, p)
    assert new.why is not None
    return new.why


# Shares in 0..1 of memory/coverage.py: each adds its part (a cut, or the
# prompt's share), the same arithmetic, checked with the share halved.
COVERAGE: dict[str, tuple[Any, str]] = {
    "w_same_text": (lambda p: _covered(p, "What is the plan?"), "same_text"),
    "w_not_user": (lambda p: _covered(p, "What did I plan?", speaker="assistant"), "not_user"),
    "w_user_said": (
        lambda p: _covered(p, "Which plans have I mentioned?", speaker="assistant"),
        "not_user",
    ),
    "session_share": (lambda p: _covered(p, "Give me a summary of the plan."), "session_cover"),
    "w_prompt": (_prompted, "prompt"),
}
# Not weights of a score: where the fill cuts, and how many it shows.
NOT_SCORES = {"relevance_floor", "passages_only_floor", "many_floor"}


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


@pytest.mark.parametrize("field", sorted(COVERAGE))
def test_a_coverage_share_moves_its_part(field: str) -> None:
    score, part = COVERAGE[field]
    half = DEFAULT.model_copy(update={field: getattr(DEFAULT, field) / 2})
    before, after = score(DEFAULT), score(half)
    _adds_up(before)
    _adds_up(after)
    assert dict(after.parts)[part] != dict(before.parts)[part]


def test_every_float_weight_is_explained() -> None:
    floats = {name for name, f in RetrievalProfile.model_fields.items() if f.annotation is float}
    assert floats == set(PARTS) | set(INPUTS) | set(COVERAGE) | NOT_SCORES


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
