"""The notes a query's context carries besides the graph and the passages:
the summaries of its seed entities, and the user's live preferences and
standing instructions, which govern a question whatever its words.

Under a bounded share of the budget (``GB_STANDING_SHARE`` of it), best
first: a preference or instruction by the similarity of its statement to
the question (the question's own vector, no extra call), a summary by its
seed's strength (the seeds' order: the keyword and vector scores that rank
everything else). Whatever the notes do not use goes back to the rest of
the context (:func:`~.context.fill` is given the budget less the notes).

Reads: the user's kept statements (one query) and, when there are any, the
rows they rest on (one batch get each for facts and texts, so a fact that
was superseded or forgotten, or a forgotten text, is never given); the seeds'
summaries (one batch get)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..graph.port import GraphStore
from ..models import DatasetKey
from ..notes.port import NotesStore, Standing, Summary
from ..text import estimate_tokens
from .standing import KEPT, ranked


@dataclass
class Note:
    kind: str  # "summary" | "preference" | "instruction"
    text: str
    ref: str  # what it rests on: "entity 3", "edge 12", "passage 40"
    artifact_id: int | None = None
    topic: str = ""

    def line(self) -> str:
        head = (
            f"[{self.kind} of {self.ref}]"
            if self.kind == "summary"
            else f"[{self.kind}, {self.ref}]"
        )
        if self.topic:
            head += f" ({self.topic})"
        return f"{head} {self.text}"

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "text": self.text, "ref": self.ref}
        if self.artifact_id is not None:
            out["artifact_id"] = self.artifact_id
        if self.topic:
            out["topic"] = self.topic
        return out


def _live(graph: GraphStore, key: DatasetKey, items: list[Standing]) -> list[Standing]:
    """The statements whose fact is live and not ended, or whose text is kept."""
    edges = graph.get_edges(key, [s.id for s in items if s.source == "edge"])
    texts = graph.get_artifacts(key, [s.id for s in items if s.source == "text"])
    out = []
    for s in items:
        if s.source == "edge":
            e = edges.get(s.id)
            if e is not None and e.expired_at is None and e.invalid_at is None:
                out.append(s)
        elif s.id in texts:
            out.append(s)
    return out


def _standing_note(s: Standing) -> Note:
    ref = f"edge {s.id}" if s.source == "edge" else f"passage {s.id}"
    return Note(s.kind, s.text, ref, s.artifact_id, s.topic)


def _summary_note(s: Summary, name: str) -> Note:
    return Note("summary", s.text, f"entity {s.entity_id} {name}".strip())


def notes_for(
    notes: NotesStore,
    graph: GraphStore,
    key: DatasetKey,
    question: list[float],
    seeds: list[tuple[int, str]],
    share: int,
    summaries_of: int,
    standing_of: int = KEPT,
) -> list[Note]:
    """The notes that fit in ``share`` tokens, best first (``seeds``: the
    strongest seeds, strongest first, with their names; the summaries of the
    ``summaries_of`` strongest compete for the share: the profile's
    ``notes_summaries``; of the user's newest ``standing_of`` preferences and
    instructions: its ``notes_standing``)."""
    if share <= 0:
        return []
    kept = notes.standing(key, standing_of) if standing_of else []
    ordered: list[Note] = []
    if kept:
        ordered += [_standing_note(s) for _, s in ranked(_live(graph, key, kept), question)]
    ids = [i for i, _ in seeds[:summaries_of]]
    found = notes.get_summaries(key, ids) if ids else {}
    names = dict(seeds)
    summaries = [_summary_note(found[i], names[i]) for i in ids if i in found and found[i].text]
    # A summary of the strongest seed before the statements that are least
    # like the question: interleaved, the first of each kind first.
    out: list[Note] = []
    used = estimate_tokens("<notes>") + estimate_tokens("</notes>") + 2  # as the context counts
    for note in _interleave(ordered, summaries):
        cost = estimate_tokens(note.line()) + 1
        if used + cost <= share:
            out.append(note)
            used += cost
    return out


def _interleave(a: list[Note], b: list[Note]) -> list[Note]:
    out: list[Note] = []
    for i in range(max(len(a), len(b))):
        out += [x[i] for x in (a, b) if i < len(x)]
    return out


def render(notes: list[Note]) -> list[str]:
    """The context's ``<notes>`` block (nothing when there are none)."""
    if not notes:
        return []
    return ["<notes>", *(n.line() for n in notes), "</notes>"]
