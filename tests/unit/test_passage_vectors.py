"""A passage said by someone is embedded whole and sentence by sentence
(memory/passage_vectors.py); a text with no speaker keeps one vector."""

from __future__ import annotations

import math

import pytest

from gligabao.memory.passage_vectors import (
    MAX_SENTENCES,
    PassageInput,
    blend,
    passage_vectors,
    sentences,
)


def test_a_turn_of_several_sentences_is_split_after_its_speaker() -> None:
    text = "Let's keep making great memories. I'm off to do some taekwondo!"
    assert sentences(text, "John") == [
        "John: Let's keep making great memories.",
        "John: I'm off to do some taekwondo!",
    ]


def test_a_shared_photo_is_a_sentence_of_its_own() -> None:
    text = "Look at this. [shares a photo: a painting of a sunset]"
    assert sentences(text, "Mel")[-1] == "Mel: [shares a photo: a painting of a sunset]"


def test_one_sentence_or_no_speaker_gives_no_sentences() -> None:
    assert sentences("I painted a sunset yesterday.", "Melanie") == []
    # A document's sentences lean on its subject: it keeps its one vector.
    assert sentences("Shirley Temple was an actress. She was born in 1928.", None) == []


def test_a_window_is_split_by_the_lines_its_speakers_said() -> None:
    window = (
        "not said by anyone\nCaroline: I went to a support group. It was powerful.\n"
        "Melanie: Wow!\n[shares a photo: a rainbow flag]"
    )
    # A line no one says is part of the turn above it (a photo's caption);
    # before any turn it adds nothing.
    assert sentences(window, None) == [
        "Caroline: I went to a support group.",
        "Caroline: It was powerful.",
        "Melanie: Wow!",
        "Melanie: [shares a photo: a rainbow flag]",
    ]


def test_a_long_passage_is_embedded_in_a_bounded_number_of_runs() -> None:
    text = " ".join(f"Sentence number {i}." for i in range(40))
    runs = sentences(text, "Ann")
    assert len(runs) == MAX_SENTENCES
    # Every sentence is in one run, in order.
    assert " ".join(runs).count("Sentence number") == 40
    assert runs[0].startswith("Ann: Sentence number 0.") and runs[-1].endswith("number 39.")


def _norm(v: list[float]) -> float:
    return math.sqrt(sum(x * x for x in v))


def test_blend_is_the_unit_sum_of_the_whole_and_the_mean_of_the_parts() -> None:
    out = blend([2.0, 0.0], [[0.0, 1.0], [0.0, 3.0]])
    assert out == pytest.approx([math.sqrt(0.5), math.sqrt(0.5)])
    assert _norm(out) == pytest.approx(1.0)
    assert blend([3.0, 4.0], []) == [3.0, 4.0]


def test_passage_vectors_embeds_wholes_and_sentences_in_one_call() -> None:
    calls: list[list[str]] = []
    table = {
        "whole 1": [1.0, 0.0],
        "whole 2": [0.0, 1.0],
        "Jo: One.": [0.0, 1.0],
        "Jo: Two.": [0.0, 1.0],
    }

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return [table[t] for t in texts]

    out = passage_vectors(
        embed,
        [PassageInput("whole 1", "One. Two.", "Jo"), PassageInput("whole 2", "Alone.", "Jo")],
    )
    assert calls == [["whole 1", "whole 2", "Jo: One.", "Jo: Two."]]
    assert out[0] == pytest.approx([math.sqrt(0.5), math.sqrt(0.5)])
    assert out[1] == [0.0, 1.0]  # one sentence: the whole's vector as it was


def test_the_windows_of_a_long_reply_are_embedded_once_each() -> None:
    # Each token read once: a window of one speaker's long text is not also
    # embedded sentence by sentence; a transcript's turns still are.
    from gligabao.memory.passage_vectors import part_inputs
    from gligabao.text import passage_windows

    reply = "\n\n".join(
        f"**Step {i}**: Open the file. Check the totals. Save it again." for i in range(30)
    )
    windows = passage_windows(reply, 60)
    assert len(windows) > 2
    seen: list[str] = []

    def embed(texts: list[str]) -> list[list[float]]:
        seen.extend(texts)
        return [[1.0, 0.0] for _ in texts]

    passage_vectors(embed, part_inputs(windows, "assistant"))
    assert len(seen) == len(windows)
    chat = [f"{'Ann' if i % 2 else 'Bob'}: Hi there. How are you {i}?" for i in range(6)]
    seen.clear()
    passage_vectors(embed, part_inputs(chat, None))
    assert len(seen) == len(chat) * 3  # each turn, and its two sentences
