"""Passages of a conversation (issue 25): what a turn's vector embeds, a
session-sized text searched by windows of its lines, and the turn next to a
matched one brought into the context."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import Harness
from gligabao.models import DatasetKey


def key() -> DatasetKey:
    return DatasetKey("u1", "main")


def remember(gb: Harness, text: str, **extra: Any) -> dict[str, Any]:
    body = {"user_id": "u1", "text": text, "extract": False, **extra}
    r = gb.client.post("/v1/gb/remember", body)
    assert r.status == 200, r.body
    return r.body


def search(gb: Harness, question: str, **extra: Any) -> dict[str, Any]:
    r = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": question, **extra})
    assert r.status == 200, r.body
    return r.body


def test_a_turn_is_embedded_after_its_speaker_and_the_turn_before(gb: Harness) -> None:
    remember(gb, "What did you paint last week?", speaker="Caroline", session_id="s1")
    remember(gb, "A sunset over the lake.", speaker="Melanie", session_id="s1")
    remember(gb, "Hello there.", speaker="Melanie", session_id="s2")
    first, second, other = gb.emb.inputs()
    assert first == "Caroline: What did you paint last week?"
    assert second == "Caroline: What did you paint last week?\nMelanie: A sunset over the lake."
    assert other == "Melanie: Hello there."  # another session: nothing before it


def test_messages_are_embedded_after_the_message_before(gb: Harness) -> None:
    r = gb.client.post(
        "/v1/gb/remember",
        {
            "user_id": "u1",
            "session_id": "s1",
            "extract": False,
            "messages": [
                {"role": "user", "name": "Dana", "content": "Where should I go in May?"},
                {"role": "assistant", "content": "Lisbon is lovely then."},
            ],
        },
    )
    assert r.status == 200, r.body
    assert gb.emb.inputs() == [
        "Dana: Where should I go in May?",
        "Dana: Where should I go in May?\nassistant: Lisbon is lovely then.",
    ]


def test_a_session_sized_text_is_searched_by_windows_of_its_lines(gb: Harness) -> None:
    lines = [f"line {i} about the weather and nothing much." for i in range(60)]
    lines[41] = "I finally finished the pottery bowl for my daughter."
    out = remember(gb, "\n".join(lines), session_id="s1")
    assert out["chunks"] == 0  # windows are passages, not chunks (no summaries)
    got = search(gb, "What did Melanie make for her daughter?")
    texts = [p["text"] for p in got["passages"]]
    assert texts and "pottery bowl" in texts[0]
    assert "\n" in texts[0]  # a window of several lines,
    assert len(texts[0]) < len("\n".join(lines)) / 3  # not the session
    assert got["passages"][0]["parent_id"] == out["artifact_id"]


def test_a_transcript_remembered_whole_is_searched_by_its_turns(
    gb: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    from gligabao import wiring
    from gligabao.local.cli import main

    lines = [f"Caroline: line {i} about the weather and nothing much." for i in range(60)]
    lines[41] = "Melanie: I finally finished the pottery bowl for my daughter."
    lines.insert(42, "[shares a photo: a blue bowl on a kitchen table]")  # said by no one
    out = remember(gb, "\n".join(lines), session_id="s1")
    assert out["chunks"] == 0
    turn = f"{lines[41]}\n{lines[42]}"
    # Each turn is embedded (and its words held) after the turn before, as
    # the same turn remembered alone would be.
    embedded = f"{lines[40]}\n{turn}"
    assert embedded in gb.emb.inputs()
    got = search(gb, "What did Melanie make for her daughter?")
    by_text = {p["text"]: p for p in got["passages"]}
    assert turn in by_text  # the turn with its photo, no more
    assert by_text[turn]["parent_id"] == out["artifact_id"]
    assert lines[40] in by_text  # the turn before it comes along, as a turn's does

    # reindex embeds it as remember did: the same vector.
    vector = [h.id for h in _hits(gb, embedded)]
    wiring.vector_index.cache_clear()
    assert main(["reindex", "--user", "u1", "--dataset", "main"]) == 0
    capsys.readouterr()
    assert [h.id for h in _hits(gb, embedded)] == vector == [by_text[turn]["artifact_id"]]


def _hits(gb: Harness, embedded: str) -> list[Any]:
    """The passages whose stored vector is the blend remember makes of
    ``embedded`` and the sentences of its last turn (its speaker's line and
    the photo's caption, after the speaker)."""
    from gligabao.memory.passage_vectors import blend
    from gligabao.vectors.port import SearchRequest

    said = ["Melanie: I finally finished the pottery bowl for my daughter."]
    said.append("Melanie: [shares a photo: a blue bowl on a kitchen table]")
    vector = blend(gb.emb.vector(embedded), [gb.emb.vector(t) for t in said])
    (hits,) = gb.vectors.search(key(), [SearchRequest("chunks", vector, 5, 0.9999)])
    return hits


def test_the_turn_next_to_a_matched_one_comes_with_it(gb: Harness) -> None:
    remember(gb, "Guess what arrived this morning!", session_id="s1")
    remember(gb, "A violin for my boy, he practises every evening.", session_id="s1")
    remember(gb, "We should meet for lunch soon.", session_id="s2")
    got = search(gb, "Which instrument did the boy get?")
    texts = [p["text"] for p in got["passages"]]
    assert "A violin for my boy, he practises every evening." in texts
    assert "Guess what arrived this morning!" in texts  # no word of the question: beside it
    assert "We should meet for lunch soon." not in texts  # another session


def _search_vector(gb: Harness, vector: list[float]) -> list[int]:
    """The turns whose stored vector is this one (cosine above 0.9999)."""
    from gligabao.vectors.port import SearchRequest

    (hits,) = gb.vectors.search(key(), [SearchRequest("chunks", vector, 5, 0.9999)])
    return [h.id for h in hits]


def test_a_turn_of_several_sentences_is_embedded_by_them_too(
    gb: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    from gligabao import wiring
    from gligabao.local.cli import main
    from gligabao.memory.passage_vectors import blend

    remember(gb, "How was your week?", speaker="Maria", session_id="s1")
    turn = "Let's keep making memories. I'm off to do some taekwondo!"
    out = remember(gb, turn, speaker="John", session_id="s1")
    whole = "Maria: How was your week?\nJohn: " + turn
    parts = ["John: Let's keep making memories.", "John: I'm off to do some taekwondo!"]
    # One request: the whole (after the turn before) and the sentences, after their speaker.
    assert gb.emb.inputs() == ["Maria: How was your week?", whole, *parts]
    assert gb.emb.calls() == 2
    expected = blend(gb.emb.vector(whole), [gb.emb.vector(p) for p in parts])
    assert _search_vector(gb, expected) == [out["artifact_id"]]
    # The one-sentence turn keeps the whole's vector.
    assert _search_vector(gb, gb.emb.vector("Maria: How was your week?")) != []

    # reindex embeds the passages as remember did: the same vector.
    wiring.vector_index.cache_clear()

    assert _search_vector(gb, expected) == []
    assert main(["reindex", "--user", "u1", "--dataset", "main"]) == 0
    assert "chunks=2" in capsys.readouterr().out
    assert _search_vector(gb, expected) == [out["artifact_id"]]
