"""Dense texts: an extraction whose reply stops at its output limit
(``stop_reason: max_tokens``) is not a 502: the text is split in two and
each half extracted."""

from __future__ import annotations

from remember_helpers import ent, extraction, fact, works_at

from conftest import Harness

FIRST = "Alice works at Acme, the rocket company in the desert, since the spring of last year."
SECOND = "Bob lives in Paris, in a small flat near the river, with his two cats and a piano."
TEXT = f"{FIRST} {SECOND} " * 2


def _content(req: dict[str, object]) -> str:
    msg = req["messages"][0]["content"]  # type: ignore[index]
    return msg if isinstance(msg, str) else "".join(b["text"] for b in msg)


def test_an_extraction_cut_at_its_limit_is_split_and_extracted_in_parts(gb: Harness) -> None:
    gb.llm.truncate_next("extract")
    gb.llm.script("extract", works_at())  # the reply that is cut
    gb.llm.script("extract", works_at())
    gb.llm.script(
        "extract",
        extraction(
            [ent("Bob", "person"), ent("Paris", "city")], [fact("Bob", "Paris", "lives_in")]
        ),
    )
    out = gb.remember(TEXT)
    assert sorted(e["name"] for e in out["entities"]) == ["Acme", "Alice", "Bob", "Paris"]
    assert sorted(e["relation"] for e in out["edges"]) == ["lives_in", "works_at"]
    sent = [_content(r) for r in gb.llm.requests_for("extract")]
    assert len(sent) == 3  # the whole text (cut), then each half
    first_half, second_half = sent[1], sent[2]
    assert f"{FIRST} {SECOND}" in first_half and f"{FIRST} {SECOND}" in second_half
    assert TEXT.strip() in sent[0] and TEXT.strip() not in first_half
    # one text, one artifact
    assert len(gb.scan("artifacts")) == 1


def test_a_short_text_cut_at_its_limit_is_still_a_502_and_writes_nothing(gb: Harness) -> None:
    gb.llm.truncate_next("extract")
    r = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."})
    assert r.status == 502, r.body
    assert r.body == {"error": "LLM reply was cut at the token limit"}
    assert gb.llm.calls("extract") == 1
    assert gb.scan("artifacts") == [] and gb.scan("entities") == []
