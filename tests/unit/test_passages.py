"""The passage rules of issue 25: windows of a session-sized text, what a
turn embeds, the rows next to a match and the second search round that the
names of the best match lead to."""

from __future__ import annotations

from gligabao.memory.passage_vectors import BEFORE_CHARS, embedded_text, part_inputs
from gligabao.memory.passages import (
    adjacent,
    beside_scores,
    neighbour_ids,
    second_round_ranks,
    second_round_text,
)
from gligabao.memory.scoring import Score
from gligabao.models import Artifact
from gligabao.retrieval_profile import DEFAULT
from gligabao.text import estimate_tokens, is_turn, passage_windows
from gligabao.vectors.port import Hit


def turn(
    i: int,
    text: str = "hi",
    session: str | None = "s1",
    parent: int | None = None,
    speaker: str | None = None,
) -> Artifact:
    return Artifact(i, text, "t", "t", session, parent, speaker=speaker)


def test_windows_cut_a_text_on_its_lines_in_order() -> None:
    lines = [
        f"Item {i}: x" if i % 3 == 0 else f"line number {i} of the notes, a few words more."
        for i in range(40)
    ]
    text = "\n".join(lines)
    windows = passage_windows(text, 100)
    assert 3 < len(windows) < 20  # runs of lines: a third are "Item i: ..."
    assert "\n".join(windows) == text  # every line once, in order, none cut
    assert all(estimate_tokens(w) <= 110 for w in windows)


def test_a_transcript_is_cut_by_its_turns() -> None:
    # Most lines said by someone: each turn is a window, as a turn remembered
    # alone would be; a line no one says belongs to the turn above it.
    lines = [f"Speaker{i % 2}: line number {i} of the session, a few words." for i in range(40)]
    lines.insert(10, " [shares a photo: a sunset over the lake]")
    text = "\n".join(lines)
    windows = passage_windows(text, 100)
    assert len(windows) == 40 and "\n".join(windows) == text
    assert windows[9] == lines[9] + "\n" + lines[10]
    assert all(is_turn(w) for w in windows)
    assert not is_turn(lines[10]) and not is_turn("\n".join(lines[:2]))


def test_a_chat_log_with_lower_case_roles_is_a_transcript() -> None:
    lines = [
        f"{'user' if i % 2 else 'assistant'}: message {i} about the trip, a few words."
        for i in range(40)
    ]
    assert passage_windows("\n".join(lines), 100) == lines
    assert not is_turn("note: a line of a document") and not is_turn("see https://x.org")


def test_a_window_of_one_turn_embeds_the_end_of_the_window_before() -> None:
    parts = ["Caroline: " + "x" * 1000 + " What did you paint?", "Melanie: A sunset."]
    first, second = part_inputs(parts, None)
    assert first.embedded == parts[0]  # nothing before the first
    before, line = second.embedded.split("\n")
    assert line == "Melanie: A sunset." and second.text == "Melanie: A sunset."
    assert len(before) == BEFORE_CHARS and before.endswith("What did you paint?")
    # Windows of several lines (and chunks) embed themselves alone.
    runs = part_inputs(["A: one\nB: two", "A: three\nB: four"], None)
    assert [p.embedded for p in runs] == ["A: one\nB: two", "A: three\nB: four"]


def test_a_text_that_fits_or_has_one_line_is_not_cut() -> None:
    assert passage_windows("A: short\nB: short too", 100) == []
    assert passage_windows("One long paragraph. " * 200, 100) == []  # a line is never cut
    assert passage_windows("A: x\n" * 500, 0) == []  # GB_PASSAGE_TOKENS=0: whole texts only


def test_a_turn_embeds_its_speaker_after_the_end_of_the_turn_before() -> None:
    before = turn(1, "x" * 1000 + " What did you paint?", speaker="Caroline")
    out = embedded_text("A sunset.", "Melanie", before)
    first, second = out.split("\n")
    assert second == "Melanie: A sunset."
    assert len(first) == BEFORE_CHARS and first.endswith("What did you paint?")
    assert embedded_text("A sunset.", None, None) == "A sunset."


def test_neighbour_ids_are_one_off_the_best_matches_not_matched() -> None:
    assert neighbour_ids([10, 11, 30, 50], limit=3) == [9, 12, 29, 31]
    assert neighbour_ids([1], limit=5) == [2]  # no ID 0


def test_adjacent_rows_share_a_session_or_a_text() -> None:
    assert adjacent(turn(4), turn(5))
    assert not adjacent(turn(4), turn(5, session="s2"))
    assert not adjacent(turn(4, session=None), turn(5, session=None))
    assert not adjacent(turn(4), turn(6))
    assert adjacent(turn(4, parent=1), turn(5, parent=1))  # two windows of one text
    assert not adjacent(turn(4, parent=1), turn(5, parent=2))
    chunk = Artifact(5, "x", "t", "t", "s1", 1, 1, summary="a long text's chunk")
    assert not adjacent(turn(4, parent=1), chunk)


HALF = DEFAULT.model_copy(update={"w_beside": 0.5})


def totals(scores: dict[int, Score]) -> dict[int, float]:
    return {i: s.total for i, s in scores.items()}


def test_a_match_lends_its_neighbours_a_share_of_its_score() -> None:
    rows = {5: turn(5), 9: turn(9)}
    beside = {4: turn(4), 6: turn(6, session="s2"), 8: turn(8), 10: turn(10)}
    got = totals(beside_scores({5: 2.0, 9: 1.0}, rows, beside, HALF))
    assert got == {4: 1.0, 8: 0.5, 10: 0.5}  # 6 is of another session
    # a match next to a better one is raised to its share, never lowered
    rows[6] = turn(6)
    got = totals(beside_scores({5: 2.0, 6: 0.2}, rows, {}, HALF))
    assert got == {6: 1.0}
    assert beside_scores({5: 2.0, 6: 1.5}, rows, {}, HALF) == {}


def test_the_second_round_looks_for_the_names_the_best_match_adds() -> None:
    q = "What government position was held by the woman who portrayed Corliss Archer?"
    rows = {
        7: turn(7, "Shirley Temple portrayed Corliss Archer in the film Kiss and Tell."),
        8: turn(8, "Mary Astor starred in other films."),
    }
    # Only the best match (7) seeds it; the question's own names are not repeated.
    text = second_round_text(q, [7, 8], rows)
    assert text is not None and text.startswith(q + " ")
    added = text[len(q) + 1 :].split()
    assert {"shirley", "temple", "kiss"} <= set(added)
    assert "corliss" not in added and "archer" not in added
    assert "mary" not in added and "astor" not in added
    # A best match that names nothing new: no second round.
    assert second_round_text(q, [9], {9: turn(9, "portrayed by Corliss Archer")}) is None
    assert second_round_text(q, [], rows) is None


def test_the_second_round_ranks_only_what_the_first_missed_after_its_best() -> None:
    first = {3: (0, True), 5: (1, True)}
    hits = [Hit(5, 0.9), Hit(11, 0.8), Hit(3, 0.7), Hit(12, 0.6)]
    assert second_round_ranks(hits, first) == {11: (10, True), 12: (11, True)}
    assert second_round_ranks([], first) == {}


def test_the_second_round_lifts_a_documents_passage_the_first_ranked_low() -> None:
    first = {3: (0, True), 5: (40, True), 7: (50, True)}
    hits = [Hit(5, 0.9), Hit(11, 0.8), Hit(3, 0.7), Hit(7, 0.6)]
    # 5 and 7 may be lifted (a document's): 5 from 40 to 10, 7 from 50 to 12;
    # 3 ranked better in the first round than the second would put it.
    got = second_round_ranks(hits, first, 10, frozenset({3, 5, 7}))
    assert got == {5: (10, True), 11: (11, True), 7: (12, True)}
    # Not liftable (a conversation's turns): only the new one.
    assert second_round_ranks(hits, first, 10) == {11: (10, True)}


def test_only_a_documents_passages_may_be_lifted() -> None:
    from gligabao.memory.gather import _documents

    rows = {
        # A whole text, though it opens like a chat line; a document's window.
        1: turn(1, "Shirley Temple: an American actress and diplomat.", speaker=None),
        2: turn(2, "The film was released in 1947 and starred her.", parent=9, speaker=None),
        3: turn(3, "Caroline: I went to the support group.", parent=8, speaker=None),  # a turn
        4: turn(4, "I took Luna from the shelter.", speaker="Deborah"),
        5: turn(5, "Here are three options for your budget.", parent=7, speaker="assistant"),
    }
    assert _documents(rows, DEFAULT) == {1, 2}
    assert _documents(rows, DEFAULT.with_overrides({"second_round_lift": 0})) == frozenset()
