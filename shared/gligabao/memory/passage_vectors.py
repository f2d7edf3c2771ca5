"""What a passage's vector is: the text it embeds (after the turn before it),
blended with the sentences a speaker said in it.

A chat turn often says several things at once ("Let's keep making great
memories with our loved ones. I'm off to do some taekwondo!"), and a small
embedding model gives the whole the meaning of its longest part: "What
martial arts has John done?" does not find it. So a passage said by someone
(a turn with a ``speaker``, or the ``Name: ...`` lines of a session's window)
is also embedded sentence by sentence, each after its speaker, and its vector
is the sum of the whole's and of the sentences' mean, normalized: the whole
keeps the context a reply needs, the sentences keep each thing said.

On LoCoMo (bench/locomo.py, the local model, cosine alone) the evidence of
multi-hop questions among the 60 best turns goes from 0.54 to 0.75 of it, and
of all questions from 0.68 to 0.81. Text with no speaker (a document, a
paragraph) keeps its single vector: its sentences lean on a subject named once
("He was born ..."), and alone they lose it (HotpotQA's chains among the 8 best
paragraphs: 0.82 whole, 0.76 blended).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..models import Artifact
from ..text import is_turn, passage_text, plain_turn, said_line, turns

BEFORE_CHARS = 400  # of the turn before, its end, embedded with a turn
MAX_SENTENCES = 12  # a longer passage's sentences are embedded in this many runs

# A sentence ends at . ! or ? followed by space and a capital, a quote or a
# bracket (a shared photo's caption: "[shares a photo: ...]").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'“\[])")


def embedded_text(text: str, speaker: str | None, before: Artifact | None) -> str:
    """What a passage's vector embeds and its words hold: ``Speaker: text``,
    after the end of the session's turn before it, when there is one. A
    reply means what it answers: "I took Luna from the shelter." is found by
    "Where did Deborah get her cats?" only with the question it replies to
    (on LoCoMo, the evidence the local model ranks within 2,000 tokens goes
    from 0.75 to 0.82 with the turn before: bench/locomo.py)."""
    line = _said(text, speaker)
    if before is None:
        return line
    return f"{_said(before.text, before.speaker)[-BEFORE_CHARS:]}\n{line}"


def _said(text: str, speaker: str | None) -> str:
    """``Speaker: text``; a transcript's turn (its name in its line) as
    ``Name: text`` whatever its client wrote around the name (a time, an id,
    markup, a header over the text), so that every export of a conversation
    is embedded as its plain lines are (shown as written)."""
    if speaker is None and is_turn(text):
        return plain_turn(text)
    return passage_text(text, speaker)


def sentences(text: str, speaker: str | None) -> list[str]:
    """The sentences a speaker said in a passage, each after its speaker's
    name, in at most :data:`MAX_SENTENCES` runs; empty when the passage has no
    speaker or says one sentence only (its whole vector is then the same
    thing). Without ``speaker``, each ``Name: ...`` line of the text is a
    turn, and the lines after it that no one says are part of it (a shared
    photo's caption); a line said by no one before any turn adds nothing."""
    said: list[tuple[str, str]] = []
    if speaker:
        said = [(speaker, text)]
    else:
        for first, *rest in turns([ln for ln in text.splitlines() if ln.strip()]):
            if (turn := said_line(first)) is not None:
                said.append((turn[0], " ".join([turn[1], *(r.strip() for r in rest)])))
    out = [
        passage_text(s.strip(), who)
        for who, said_text in said
        for s in _SENTENCE_END.split(said_text.strip())
        if s.strip()
    ]
    if len(out) < 2:
        return []
    if len(out) > MAX_SENTENCES:  # consecutive runs of about equal size
        step = len(out) / MAX_SENTENCES
        out = [" ".join(out[round(i * step) : round((i + 1) * step)]) for i in range(MAX_SENTENCES)]
    return out


def _unit(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v] if n > 0 else v


def blend(whole: list[float], parts: list[list[float]]) -> list[float]:
    """The whole's unit vector plus the unit mean of the parts', as a unit
    vector; the whole's own when there are no parts."""
    if not parts:
        return whole
    mean = _unit([sum(col) for col in zip(*parts, strict=True)])
    return _unit([a + b for a, b in zip(_unit(whole), mean, strict=True)])


@dataclass(frozen=True)
class PassageInput:
    embedded: str  # what the whole's vector embeds (:func:`embedded_text`)
    text: str  # the passage's own text
    speaker: str | None
    split: bool = True  # also embedded sentence by sentence (:func:`sentences`)


def part_inputs(parts: list[str], speaker: str | None) -> list[PassageInput]:
    """The chunks or windows of one text, in order: each after the text's
    speaker, and a window that is one turn of a transcript after the end of
    the window before it, as the same turn remembered alone is after the
    turn before it.

    A window of one speaker's long text (an assistant's reply of 700 words)
    is not also embedded sentence by sentence: its window is already a
    part of what was said, of one subject (a section, a list), and its
    sentences doubled the tokens the embedder reads (BEAM: 1.65 embedding
    tokens per stored token, and the embedder is most of `remember`'s time
    with ``extract: false``). A turn of a transcript keeps its sentences (a
    chat line says several things at once)."""
    out: list[PassageInput] = []
    before: Artifact | None = None
    # The windows are turns when most are (a transcript's); a reply's window
    # opened by a bold "**Step 1**: ..." does not make the reply one.
    transcript = 2 * sum(is_turn(p) for p in parts) > len(parts)
    for p in parts:
        turn = transcript and is_turn(p)
        whole = embedded_text(p, speaker, before if turn else None)
        out.append(PassageInput(whole, p, speaker, split=turn or speaker is None))
        before = Artifact(0, p, "", "", speaker=speaker)
    return out


def passage_vectors(
    embed: Callable[[list[str]], list[list[float]]], passages: list[PassageInput]
) -> list[list[float]]:
    """One vector per passage, in one call of ``embed`` (the wholes, then
    every passage's sentences)."""
    parts = [sentences(p.text, p.speaker) if p.split else [] for p in passages]
    vectors = embed([p.embedded for p in passages] + [s for ps in parts for s in ps])
    out: list[list[float]] = []
    at = len(passages)
    for whole, ps in zip(vectors, parts, strict=False):
        out.append(blend(whole, vectors[at : at + len(ps)]))
        at += len(ps)
    return out
