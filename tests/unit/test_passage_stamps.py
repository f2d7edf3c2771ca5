"""memory/context.py's passage blocks: the date and session are said once for
a run of passages that share them (the turns of one session), a turn's text
follows its speaker (under its head, unlabelled, where a chunk's parts are
labelled), and the fill charges exactly what a passage adds to the
rendered blocks, including the stamp it makes the block below it repeat or
drop, so the rendered context never exceeds the budget."""

from __future__ import annotations

import random

from gligabao.memory.context import Context, Passage, Scored, fill, render_passages
from gligabao.models import Artifact
from gligabao.text import estimate_tokens

MAY = "2023-05-08T13:56:00Z"
JUNE = "2023-06-01T09:00:00Z"
QUESTION = "What did Melanie paint?"


def turn(i: int, at: str = MAY, session: str | None = "s3", speaker: str | None = None) -> Passage:
    text = f"Turn {i}: I painted a lake at sunrise."
    a = Artifact(i, text, at, at, session_id=session, speaker=speaker)
    return Passage(a, None, a.text)


def test_a_run_of_one_session_says_its_stamp_once() -> None:
    out = render_passages({i: turn(i) for i in (3, 1, 2)})
    assert out.split("\n\n") == [
        f"[passage 1] {MAY} session s3\nTurn 1: I painted a lake at sunrise.",
        "[passage 2]\nTurn 2: I painted a lake at sunrise.",
        "[passage 3]\nTurn 3: I painted a lake at sunrise.",
    ]


def test_a_chunk_is_labelled_and_a_transcripts_turn_is_shown_as_a_turn() -> None:
    def part(i: int, text: str, summary: str | None = None) -> Passage:
        a = Artifact(i, text, MAY, MAY, "s3", parent_id=40, index=i - 41, summary=summary)
        return Passage(a, summary, a.text)

    chunk = part(41, "Alice joined Acme.\nShe left in 2024.", "Alice's years at Acme.")
    window = part(42, "Mel: I painted a lake.\nCaroline: Lovely!")  # two turns
    said = part(43, "Mel: I painted a lake.\n[shares a photo: a lake at dawn]")  # one turn
    assert chunk.render() == (
        f"[passage 41] {MAY} session s3 (chunk 0 of text 40)\n"
        "summary: Alice's years at Acme.\ntext: Alice joined Acme.\nShe left in 2024."
    )
    assert window.render().endswith(
        "(chunk 1 of text 40)\ntext: Mel: I painted a lake.\nCaroline: Lovely!"
    )
    assert said.render() == (
        f"[passage 43] {MAY} session s3\nMel: I painted a lake.\n[shares a photo: a lake at dawn]"
    )


def test_another_stamp_between_breaks_the_run() -> None:
    out = render_passages({1: turn(1), 2: turn(2, JUNE, "s4"), 3: turn(3)})
    heads = [block.split("\n")[0] for block in out.split("\n\n")]
    assert heads == [
        f"[passage 1] {MAY} session s3",
        f"[passage 2] {JUNE} session s4",
        f"[passage 3] {MAY} session s3",  # said again: the one above is not of its run
    ]
    # A text without a session: its date alone is its stamp.
    assert render_passages({7: turn(7, session=None)}).startswith(f"[passage 7] {MAY}\n")


def test_a_turn_follows_its_speaker() -> None:
    out = render_passages({1: turn(1, speaker="Melanie")})
    assert out.endswith("\nMelanie: Turn 1: I painted a lake at sunrise.")


def test_a_run_fits_more_turns_than_stamped_blocks_would() -> None:
    turns = [Scored(1.0 - i / 100, passage=turn(i)) for i in range(1, 41)]
    ctx = fill(turns, {}, QUESTION, MAY, 700)
    stamped = sum(estimate_tokens(turn(i).render()) + 1 for i in sorted(ctx.passages))
    # Every one of them headed with the stamp would not have fitted.
    assert stamped + estimate_tokens(Context({}, {}, {}).render(QUESTION, MAY)) > 700
    assert len(ctx.passages) >= 15
    assert ctx.token_estimate(QUESTION, MAY) <= 700


def test_the_fill_stays_within_the_budget_whatever_the_order() -> None:
    """Passages of three sessions taken in random score order, so that a new
    one often lands inside a run and makes the block below it say its stamp
    again: the rendered context stays within every budget."""
    rng = random.Random(7)
    for budget in (150, 300, 600, 1200):
        for _ in range(40):
            ps = [turn(i, [MAY, JUNE, MAY][i % 3], f"s{i % 3}") for i in range(1, 60)]
            rng.shuffle(ps)
            cands = [Scored(rng.uniform(0.5, 1.0), passage=p) for p in ps]
            ctx = fill(cands, {}, QUESTION, MAY, budget)
            assert ctx.passages
            assert ctx.token_estimate(QUESTION, MAY) <= budget
