"""Conversations remembered turn by turn, retrieved as passages (no fact is
extracted: the fake's extraction is empty): a turn keeps its speaker, is
embedded and indexed with it, and the context says who said it."""

from __future__ import annotations

from typing import Any

from query_helpers import ask, passage_blocks, prompt, section

from conftest import Harness


def say(gb: Harness, speaker: str, text: str, session: str = "s1", **extra: Any) -> int:
    body = gb.remember(text, speaker=speaker, session_id=session,
                       reference_time="2023-05-08T13:56:00Z", **extra)
    return int(body["artifact_id"])


def search(gb: Harness, question: str, **extra: Any) -> dict[str, Any]:
    r = gb.client.post("/v1/gb/search", {"user_id": "u1", "query": question, **extra})
    assert r.status == 200, r.body
    return dict(r.body)


def test_a_turn_keeps_its_speaker_in_the_store_the_index_and_the_context(gb: Harness) -> None:
    tid = say(gb, "Melanie", "I painted a sunset last week.")
    say(gb, "Caroline", "The weather was lovely on Sunday.")
    # The passage's vector holds the speaker's name with the text.
    assert "Melanie: I painted a sunset last week." in gb.emb.inputs()
    assert gb.graph.get_artifacts(gb_key(), [tid])[tid].speaker == "Melanie"
    # The question names Melanie only: her turn has her name in its words.
    found = search(gb, ask(gb, "Which thing did Melanie do?"))
    by_id = {p["artifact_id"]: p for p in found["passages"]}
    assert by_id[tid]["speaker"] == "Melanie"
    assert by_id[tid]["text"] == "I painted a sunset last week."  # the text as given
    gb.query("Which thing did Melanie do?")
    block = passage_blocks(prompt(gb))[tid]
    assert "text: Melanie: I painted a sunset last week." in block


def test_a_text_without_speaker_is_embedded_and_shown_as_given(gb: Harness) -> None:
    tid = gb.remember("The library opens at nine.")["artifact_id"]
    assert "The library opens at nine." in gb.emb.inputs()
    gb.query(ask(gb, "When does the library open?"))
    text = section(prompt(gb), "passages") or ""
    assert f"[passage {tid}]" in text and "text: The library opens at nine." in text
    found = search(gb, "When does the library open?")
    assert "speaker" not in found["passages"][0]


def gb_key() -> Any:
    from gligabao.models import DatasetKey

    return DatasetKey("u1", "main")
