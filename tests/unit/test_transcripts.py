"""A transcript recognised by its structure, whatever the chat client that
exported it: each turn a window of its own (with its speaker and, when the
line carries one, its time); texts that are not conversations stay windows
of lines."""

from __future__ import annotations

import pytest

from gligabao.memory.passage_vectors import part_inputs
from gligabao.text import is_transcript, is_turn, parse_said, passage_windows, turns

WORDS = "about the trip to the lake and the boat we hired for the weekend"

FORMATS = {
    "plain": lambda who, t, i: f"{who}: {t}",
    "time": lambda who, t, i: f"[10:{i:02d}] {who}: {t}",
    "whatsapp": lambda who, t, i: f"12/29/23, 10:{i:02d} PM - {who}: {t}",
    "slack": lambda who, t, i: f"{who} [10:{i:02d} AM]\n{t}",
    "markdown": lambda who, t, i: f"**{who}**: {t}",
    "markdown_colon_inside": lambda who, t, i: f"**{who}:** {t}",
    "irc": lambda who, t, i: f"<{who.lower()}> {t}",
    "irc_with_time": lambda who, t, i: f"[10:{i:02d}] <{who}> {t}",
    "id": lambda who, t, i: f"[D1:{i}] {who}: {t}",
    "iso": lambda who, t, i: f"2023-05-08 10:{i:02d} - {who}: {t}",
    "whatsapp_ios": lambda who, t, i: f"[12/29/23, 10:{i:02d}:13 PM] {who}: {t}",
    "discord": lambda who, t, i: f"{who} — Today at 10:{i:02d} AM\n{t}",
    "discord_dated": lambda who, t, i: (
        f"{who.lower().replace(' ', '_')} — 01/12/2024 10:{i:02d} AM\n{t}"
    ),
    "teams": lambda who, t, i: f"[10:{i:02d} AM] {who}\n{t}",
    "telegram": lambda who, t, i: f"{who}, [12.01.24 10:{i:02d}]\n{t}",
    "sms": lambda who, t, i: f"{who} (10:{i:02d} AM): {t}",
    "handles": lambda who, t, i: f"@{who.lower().replace(' ', '_')}: {t}",
}


def session(fmt: str, n: int = 12) -> tuple[str, list[str]]:
    """A two-person chat in ``fmt``, and each turn's text."""
    said = [f"message {i} {WORDS}." for i in range(n)]
    render = FORMATS[fmt]
    lines = [render("Kate" if i % 2 else "Omar Said", t, i) for i, t in enumerate(said)]
    return "\n".join(lines), said


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_each_chat_format_is_cut_by_its_turns(fmt: str) -> None:
    text, said = session(fmt)
    windows = passage_windows(text, 60)
    assert len(windows) == len(said)
    assert all(is_turn(w) for w in windows)
    for i, (w, t) in enumerate(zip(windows, said, strict=True)):
        first = parse_said(w.splitlines()[0])
        assert first is not None
        assert first.speaker.casefold().replace("_", " ") == ("kate" if i % 2 else "omar said")
        assert t in w  # the turn's own text, under its header for Slack


@pytest.mark.parametrize(
    ("line", "speaker", "text", "time"),
    [
        ("[10:42] Kate: on my way", "Kate", "on my way", "10:42"),
        ("12/29/23, 10:42 PM - Kate: on my way", "Kate", "on my way", "12/29/23, 10:42 PM"),
        ("Kate [10:42 AM]", "Kate", "", "10:42 AM"),
        ("**Kate**: on my way", "Kate", "on my way", None),
        ("<kate> on my way", "kate", "on my way", None),
        ("[D1:3] Caroline: on my way", "Caroline", "on my way", "D1:3"),
        ("Caroline: on my way", "Caroline", "on my way", None),
        ("assistant: on my way", "assistant", "on my way", None),
        ("Kate (10:42 AM): on my way", "Kate", "on my way", "10:42 AM"),
        ("[10:42] kate: on my way", "kate", "on my way", "10:42"),
        ("12/29/23, 10:42 PM - kate: on my way", "kate", "on my way", "12/29/23, 10:42 PM"),
        ("kate_99: on my way", "kate_99", "on my way", None),
        ("@kate: on my way", "kate", "on my way", None),
        ("Kate — Today at 10:42 AM", "Kate", "", "Today at 10:42 AM"),
        ("kate_99 — 01/12/2024 10:42 AM", "kate_99", "", "01/12/2024 10:42 AM"),
        ("[10:42 AM] Kate Smith", "Kate Smith", "", "10:42 AM"),
        ("Kate, [12.01.24 10:42]", "Kate", "", "12.01.24 10:42"),
    ],
)
def test_a_line_keeps_its_speaker_and_its_time(
    line: str, speaker: str, text: str, time: str | None
) -> None:
    said = parse_said(line)
    assert said is not None
    assert (said.speaker, said.text, said.time) == (speaker, text, time)


@pytest.mark.parametrize("fmt", ["slack", "discord", "teams", "telegram"])
def test_the_text_under_a_header_is_the_turn(fmt: str) -> None:
    text, _ = session(fmt, 4)
    groups = turns(text.splitlines())
    assert [len(g) for g in groups] == [2, 2, 2, 2]


@pytest.mark.parametrize(
    "line",
    [
        "Version 1.2.3",
        "Release 2024-01-12",
        "Release — 2024-01-12",  # a header needs a clock time, not a date alone
        "[2024-01-12] Backup done",
        "Kate, [2024-01-12]",
        "opens 9:00",
        "see http://x.org: a",
        "Kate",
    ],
)
def test_a_number_or_a_date_after_a_word_is_no_header(line: str) -> None:
    assert parse_said(line) is None


def test_a_lowercase_word_is_a_name_only_after_a_time_or_an_id() -> None:
    assert parse_said("note: a line of a document") is None
    lines = [f"{'kate' if i % 2 else 'omar'}: message {i} {WORDS}." for i in range(6)]
    assert not is_transcript(lines)
    assert is_transcript([f"[10:{i:02d}] {ln}" for i, ln in enumerate(lines)])


NOT_TRANSCRIPTS = {
    "notes": "\n".join(
        (
            f"Note: check step {i} before the release."
            if i % 4 == 0
            else f"Step {i} builds the package and runs the checks on it, in order."
        )
        for i in range(24)
    ),
    "key_values": "\n".join(
        f"{k}: {v} and some more words to make it long"
        for k, v in [
            ("Name", "Gligabao"),
            ("Version", "1.2"),
            ("License", "MIT"),
            ("Author", "the team"),
            ("Homepage", "none"),
            ("Language", "Python"),
            ("Storage", "SQLite"),
            ("Cloud", "AWS Lambda"),
            ("Queue", "SQS"),
            ("Search", "vectors and words"),
            ("Cost", "pay per call"),
            ("Region", "any"),
        ]
    ),
    "poem": "\n".join(
        [
            "The sea is calm tonight, the tide is full, the moon lies fair",
            "Upon the straits; on the French coast the light",
            "Gleams and is gone; the cliffs of England stand,",
            "Glimmering and vast, out in the tranquil bay.",
            "Come to the window, sweet is the night-air!",
            "Only, from the long line of spray",
            "Where the sea meets the moon-blanched land,",
            "Listen! you hear the grating roar",
            "Of pebbles which the waves draw back, and fling,",
            "At their return, up the high strand,",
        ]
    ),
}


@pytest.mark.parametrize("name", sorted(NOT_TRANSCRIPTS))
def test_texts_that_are_not_conversations_stay_windows_of_lines(name: str) -> None:
    text = NOT_TRANSCRIPTS[name]
    lines = text.splitlines()
    assert not is_transcript(lines)
    windows = passage_windows(text, 60)
    assert 1 < len(windows) < len(lines)  # runs of several lines, not a line a turn
    assert "\n".join(windows) == text


def test_a_transcript_needs_two_speakers_who_recur() -> None:
    assert is_transcript(["A: hi", "B: hello", "A: how are you?"])
    assert not is_transcript(["Note: one", "Note: two", "Note: three"])  # one name
    assert not is_transcript(["Name: x", "Version: y", "Author: z", "Year: w"])  # each once


def test_the_line_under_a_slack_header_is_its_text_whatever_it_looks_like() -> None:
    lines = [
        "Nate [7:37 PM]",
        "The game was called Counter-Strike: Global Offensive, and we had a blast!",
        "Joanna [7:38 PM]",
        "Nice!",
    ]
    assert [len(g) for g in turns(lines)] == [2, 2]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_export_of_a_conversation_is_embedded_as_its_plain_lines(fmt: str) -> None:
    def embedded(text: str) -> list[str]:
        inputs = part_inputs(passage_windows(text, 60), None)
        return [p.embedded.casefold().replace("_", " ") for p in inputs]

    text, _ = session(fmt)
    assert embedded(text) == embedded(session("plain")[0])
    assert all(w in text for w in passage_windows(text, 60))  # shown as written
