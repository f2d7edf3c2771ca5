"""memory/context.py's relevance floor: a share of the best candidate's score
under which a fact or passage stays out though it fits. With a fact among
the candidates the share is the profile's relevance_floor (0.25); with passages
alone (a dataset remembered without extraction) passages_only_floor (0.1), since
the passages are then the only evidence and their scores fall off slowly.
A window or chunk of a longer text keeps the facts' share either way, but a
window that is one turn of a transcript is held to the turns' floor."""

from __future__ import annotations

from gligabao.memory.context import Passage, Scored, fill
from gligabao.models import Artifact, Edge, Entity
from gligabao.retrieval_profile import DEFAULT

NOW = "2025-01-01T00:00:00Z"
ALICE, ACME = Entity(1, "Alice"), Entity(2, "Acme")
ENTITIES = {e.id: e for e in (ALICE, ACME)}
WORKS = Edge(501, 1, 2, "works_at", "Alice works at Acme.")


def passage(i: int, score: float) -> Scored:
    a = Artifact(900 + i, f"Turn {i}: Alice talked about her week.", NOW, NOW, session_id="s1")
    return Scored(score, passage=Passage(a, None, a.text))


def ids(candidates: list[Scored]) -> set[int]:
    ctx = fill(candidates, ENTITIES, "What did Alice do?", NOW, 3000)
    return set(ctx.passages)


def test_the_floors_are_ordered() -> None:
    assert 0 < DEFAULT.passages_only_floor < DEFAULT.relevance_floor < 1


def test_passages_alone_are_kept_down_to_the_lower_floor() -> None:
    # 1.0 is the best; 0.2 is under a quarter of it but over a tenth.
    got = ids([passage(1, 1.0), passage(2, 0.2), passage(3, 0.05)])
    assert got == {901, 902}


def test_a_fact_among_the_candidates_keeps_the_fact_floor() -> None:
    cands = [Scored(1.0, edge=WORKS), passage(1, 0.9), passage(2, 0.2), passage(3, 0.05)]
    ctx = fill(cands, ENTITIES, "What did Alice do?", NOW, 3000)
    assert set(ctx.edges) == {501}
    assert set(ctx.passages) == {901}
    assert ctx.below_floor == 2


def test_a_seed_line_alone_does_not_raise_the_floor() -> None:
    # An entity's own line is not a fact: passages keep the lower floor.
    cands = [Scored(1.0, entity=ALICE), passage(1, 1.0), passage(2, 0.2)]
    ctx = fill(cands, ENTITIES, "What did Alice do?", NOW, 3000)
    assert set(ctx.passages) == {901, 902}
    assert set(ctx.entities) == {1}


def window(i: int, score: float, parent: int = 800, lines: int = 2) -> Scored:
    """A window of a text remembered whole (a child of its text) of
    ``lines`` lines ``Alice: ...``: one is a turn of a transcript."""
    text = "\n".join(f"Alice: line {i}.{n} of the session." for n in range(lines))
    a = Artifact(900 + i, text, NOW, NOW, parent_id=parent)
    return Scored(score, passage=Passage(a, None, a.text))


def test_a_window_of_a_longer_text_keeps_the_fact_floor_with_passages_alone() -> None:
    # 0.2 of the best: over the lower floor, under the facts' one.
    cands = [window(1, 1.0), window(2, 0.3), window(3, 0.2), passage(4, 0.2)]
    ctx = fill(cands, ENTITIES, "What did Alice do?", NOW, 3000)
    assert set(ctx.passages) == {901, 902, 904}  # the short text at 0.2 stays
    assert ctx.below_floor == 1


def test_a_window_of_one_turn_is_held_to_the_turns_floor() -> None:
    # The same scores as above, the windows one turn each: 0.2 of the best
    # is over the turns' floor, so all four are taken.
    cands = [window(1, 1.0, lines=1), window(2, 0.3, lines=1), window(3, 0.2, lines=1)]
    cands.append(window(5, 0.2, lines=2))  # a window of two turns still is not
    ctx = fill(cands, ENTITIES, "What did Alice do?", NOW, 3000)
    assert set(ctx.passages) == {901, 902, 903}
    assert ctx.below_floor == 1
