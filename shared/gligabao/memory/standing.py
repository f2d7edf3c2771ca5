"""Preferences and standing instructions: what a user tells the memory to
keep ("always include encryption details when I ask about privacy", "I
prefer a balanced approach", "from now on, metric units").

Kept two ways. With extraction, the model marks such a fact (``kind``
"preference" or "instruction", and the ``topic`` it governs): the fact is
an edge like any other, and it is also kept in the notes store with its
vector. Without extraction (``extract: false``), :func:`recognise` is a
cheap rule over a user's first-person turn ("always", "never", "I prefer",
"from now on", "please remember", ...): the text is kept as a passage the
query always considers.

A query by the user is given their live preferences and instructions
whatever its words (:func:`choose`): ranked by the similarity of their
vector to the question's, under a bounded share of the budget."""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..models import Artifact
from ..notes.port import Standing, vector_norm

if TYPE_CHECKING:  # a type only: extraction (and its prompts) stays out of browse's cold import
    from .extract import Fact

KEPT = 50  # the newest preferences and instructions a query weighs
# First-person standing statements: a rule, not a model (extract: false).
_RULE = re.compile(
    r"\b(?:always|never|from now on|going forward|in the future|please remember|"
    r"remember that|keep in mind|make sure (?:to|you)|i(?:'d| would)? prefer|i like|"
    r"i don't like|i do not like|i want you to|don't ever|do not ever)\b",
    re.IGNORECASE,
)
# A marker the user narrates rather than states: an experience ("I've never met
# Kelly"), an option ("I can always look for another"), their own plan or memory
# ("I'll make sure to ask", "I'll keep in mind", "I remember that"). The words
# just before the marker, in its clause. A plan: the user's subject before it ("I'll
# reach out to them and make sure to ask"), the assistant not addressed in between
# ("I want you to make sure" is an instruction).
_OWN_PLAN = re.compile(
    r"\b(?:i|we)(?:(?:['’]ll|['’]d| will| would| should| am going to| need to| have to)\s+"
    r"(?:(?!you\b)[\w'’]+\s+){0,10}|\s+)$",
    re.IGNORECASE,
)
_NARRATED = {
    "never": re.compile(r"(?:['’]ve|\bhave|\bhas|\bhad|['’]d)\s+$", re.IGNORECASE),
    "always": re.compile(r"(?:\bcan|\bcould|\bmight|\bmay|\bwill|['’]ll)\s+$", re.IGNORECASE),
    "make sure": _OWN_PLAN,
    "keep in mind": _OWN_PLAN,
    "remember that": _OWN_PLAN,
}
# Markers of time ("in the future, what can I do?"): in a question, they are the question's.
_WHEN = ("in the future", "going forward", "from now on")
# A clause that asks but opens as a request or an imperative still states the rule
# ("Will you keep in mind that I'm vegan?", "Never suggest paid tools, ok?").
_REQUEST = re.compile(r"\s*(?:please|always|never|(?:can|could|will|would) you)\b", re.IGNORECASE)
# A clause: up to a comma, a semicolon or a sentence's end ("I prefer e-books, can
# you help me choose?" states a preference in its first clause and asks in its second).
_CLAUSE = re.compile(r"[^.!?;,\n]*(?:[.!?;,]+|\n|$)")
_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?]+|\n|$)")
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|i'm|i'd|i've)\b", re.IGNORECASE)
_PREFER = re.compile(r"\b(?:prefer|like|love|hate|favou?rite)\b", re.IGNORECASE)
RULE_MAX_CHARS = 600  # a standing statement is a sentence or two, not a report
NOT_USER = frozenset({"assistant", "system", "tool", "ai", "bot"})


def from_facts(
    result: dict[str, Any], stated: Sequence[tuple[Fact, list[float]]], now: str
) -> list[Standing]:
    """The marked facts of a remember, by the edges its answer gives (the
    new fact, or the live one it restated)."""
    marked = {(f.relation, f.description): (f, vec) for f, vec in stated if f.kind}
    out: list[Standing] = []
    for e in result.get("edges", []):
        got = marked.get((e.get("relation"), e.get("description", "")))
        if got is None:
            continue
        fact, vec = got
        out.append(
            Standing(
                int(e["id"]),
                "edge",
                fact.kind,
                fact.topic,
                fact.description or fact.relation.replace("_", " "),
                e.get("artifact_id"),
                now,
                vec,
            )
        )
    return out


def recognise(text: str, speaker: str | None) -> str:
    """The kind of a turn that states a standing preference or instruction
    (the rule), "" for any other: said by the user (not an assistant), in the
    first person or as an imperative, short, with a standing marker."""
    if (speaker or "").strip().lower() in NOT_USER:
        return ""
    if len(text) > RULE_MAX_CHARS or not _stated(text):
        return ""
    if not _FIRST_PERSON.search(text) and not re.match(r"\s*(?:always|never|please)\b", text, re.I):
        return ""
    return "preference" if _PREFER.search(text) else "instruction"


def _stated(text: str) -> bool:
    """A standing marker the user states: not in a clause that asks ("what
    can I do to avoid this?") unless it opens as a request, a marker of time
    not in a sentence that asks ("in the future, what can I do?"), and not
    narrated (:data:`_NARRATED`)."""
    for sentence in _SENTENCE.finditer(text):
        asks = sentence.group(0).rstrip().endswith("?")
        for clause in _CLAUSE.finditer(sentence.group(0)):
            said = clause.group(0)
            if said.rstrip().endswith("?") and not _REQUEST.match(said):
                continue
            for m in _RULE.finditer(said):
                word = m.group(0).lower()
                if asks and word in _WHEN and not _REQUEST.match(said):
                    continue
                narrated = next((r for w, r in _NARRATED.items() if word.startswith(w)), None)
                if narrated is None or not narrated.search(said[: m.start()]):
                    return True
    return False


def from_texts(
    artifacts: Sequence[Artifact], vectors: Sequence[list[float]], now: str
) -> list[Standing]:
    """The turns of an ``extract: false`` remember that the rule recognises."""
    out: list[Standing] = []
    for a, vec in zip(artifacts, vectors, strict=False):
        kind = recognise(a.text, a.speaker)
        if kind:
            out.append(Standing(a.id, "text", kind, "", a.text, a.id, now, list(vec)))
    return out


def _cosine(a: Sequence[float], b: Sequence[float], nb: float, na: float | None = None) -> float:
    """``nb``: the norm of ``b`` (the question's, once for every statement);
    ``na``: ``a``'s when the store kept it (the same float: ``vector_norm``).
    ``map(operator.mul)`` adds the same products in the same order as a
    generator would, at a third of its cost: up to ``KEPT`` statements of
    hundreds of dimensions each, in every query."""
    if not a or not b or len(a) != len(b):
        return 0.0
    dot = sum(map(operator.mul, a, b))
    if na is None:
        na = vector_norm(a)
    return dot / (na * nb) if na and nb else 0.0


def ranked(items: list[Standing], question: Sequence[float]) -> list[tuple[float, Standing]]:
    """Best first by the similarity of each statement to the question (ties:
    the newest first, as ``items`` come)."""
    nq = vector_norm(question)
    scored = [(_cosine(s.vector, question, nq, s.norm), s) for s in items]
    return sorted(scored, key=lambda p: -p[0])
