"""The context of a query: its rendering for the answer call, and the
best-first fill of the scored candidates (entities, facts, passages) under a
token budget.

The budget is a cap, not a target: facts and passages scoring under
the profile's ``relevance_floor`` of the best candidate are left out even
when they would fit (a seed's own line, one short line the question named or
resembles, competes for the budget only). With no fact among the candidates
(texts remembered without extraction) the share is the lower
``passages_only_floor`` for short texts (a turn, a paragraph):
the passages are then all the evidence. A window or chunk of a longer text
keeps the facts' share: it costs as much as a handful of facts.

The budget counts the whole rendered context (current time, graph, passages,
question) with :func:`gligabao.text.estimate_tokens`: each line is charged
its own estimate plus one token for the line break, which is never less than
the estimate of the whole, so the filled context stays within the budget.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from ..ai import prompts
from ..models import SESSION_KIND, SESSION_SPEAKER, Artifact, Edge, Entity
from ..retrieval_profile import DEFAULT, RetrievalProfile
from ..text import estimate_tokens, is_turn, passage_text
from .notes_context import Note
from .notes_context import render as render_notes
from .scoring import Score

# Why a candidate is not in the context (an explain's ``left_out``).
UNDER_FLOOR = "under_floor"  # under the relevance floor: left out, room or not
PAST_BUDGET = "past_budget"  # it did not fit in what was left of the budget


@dataclass
class Passage:
    chunk: Artifact  # a chunk of a long text, or a short text whole
    summary: str | None  # given when the summary index found it
    text: str | None

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"artifact_id": self.chunk.id}
        if self.chunk.parent_id is not None:
            out["parent_id"] = self.chunk.parent_id
        if self.chunk.index is not None:
            out["index"] = self.chunk.index
        if self.summary is not None:
            out["summary"] = self.summary
        if self.text is not None:
            out["text"] = self.text
        if self.chunk.speaker == SESSION_SPEAKER:
            out["kind"] = SESSION_KIND
        return out

    def stamp(self) -> str:
        """When it was said (its text's reference time), and in which session."""
        out = self.chunk.reference_time
        if self.chunk.session_id is not None:
            out += f" session {self.chunk.session_id}"
        return out

    def render(self, above: Passage | None = None) -> str:
        """Its block in the context. The date and the session, so that "when
        did ..." can be answered, once for a run of passages: a passage with
        the stamp of the one ``above`` it leaves them out (the answer prompt
        says so). Turns of one session share one stamp, and repeating it cost
        a fifth of the context on real conversations (docs/retrieval.md). A
        turn's text follows its speaker, as a transcript does.

        A chunk or window says which text it is part of, and its parts are
        labelled (``summary:``, ``text:``). A turn (a short text, or a
        window that is one turn of a transcript, whose stamp says the
        session) is shown as a transcript's line under its ID: the note and
        the label were a fifth of its tokens, and on LoCoMo the same budget
        then holds more of the evidence (docs/retrieval.md)."""
        head = f"[passage {self.chunk.id}]"
        if above is None or above.stamp() != self.stamp():
            head += f" {self.stamp()}"
        part = self.chunk.parent_id is not None and not is_turn(self.chunk.text)
        if part:
            head += f" (chunk {self.chunk.index} of text {self.chunk.parent_id})"
        lines = [head]
        if self.summary is not None:
            lines.append(f"summary: {self.summary}")
        if self.text is not None:
            label = "text: " if part or self.summary is not None else ""
            lines.append(f"{label}{passage_text(self.text, self.chunk.speaker)}")
        return "\n".join(lines)


def render_passages(passages: dict[int, Passage]) -> str:
    """The passages in the order they were remembered (by ID), a blank line
    between two."""
    blocks: list[str] = []
    above: Passage | None = None
    for i in sorted(passages):
        blocks.append(passages[i].render(above))
        above = passages[i]
    return "\n\n".join(blocks)


@dataclass
class Context:
    entities: dict[int, Entity]
    edges: dict[int, Edge]
    passages: dict[int, Passage]
    nearby: dict[str, Any] | None = None
    budget: int | None = None  # the token budget it was filled under
    left_out: int = 0  # candidates that did not fit
    below_floor: int = 0  # candidates left out as not relevant enough, room or not
    as_of: str | None = None  # the instant the question is about (query's as_of)
    # Why each item is in ((kind, ID) -> its candidate's score, or the fact
    # it is an end of), and the candidates left out with the reason: what an
    # explain shows (kept for every query: a reference each, no arithmetic).
    why: dict[tuple[str, int], Score] = field(default_factory=dict)
    dropped: list[tuple[Scored, str]] = field(default_factory=list)
    explained: list[dict[str, Any]] | None = None  # with explain: the best left out
    # Summaries, preferences and instructions (memory/notes_context.py).
    notes: list[Note] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.entities and not self.edges and not self.passages and not self.notes

    def render(self, question: str, now: str) -> str:
        """The user message of the answer call: the graph, the passages and
        the question."""
        names = {i: e.name for i, e in self.entities.items()}
        graph_lines = [prompts.entity_line(self.entities[i]) for i in sorted(self.entities)]
        graph_lines += [prompts.edge_line(self.edges[i], names) for i in sorted(self.edges)]
        parts = [f"<current_time>{now}</current_time>"]
        if self.as_of is not None:
            parts.append(f"<as_of>{self.as_of}</as_of>")
        parts += ["<graph>", *graph_lines, "</graph>"]
        parts += render_notes(self.notes)
        if self.passages:
            parts += [
                "<passages>",
                render_passages(self.passages),
                "</passages>",
            ]
        parts.append(f"<question>{question}</question>")
        return "\n".join(parts)

    def token_estimate(self, question: str, now: str) -> int:
        return estimate_tokens(self.render(question, now))


@dataclass(slots=True)  # a hundred or so a query, built and read once each
class Scored:
    """One candidate: an entity (its own line), a fact (with its two ends), or
    a passage (and, when it does not fit whole, its summary alone). ``why``:
    the score's parts (:mod:`.scoring`), the pool that found it."""

    score: float
    entity: Entity | None = None
    edge: Edge | None = None
    passage: Passage | None = None
    alternatives: list[Passage] = field(default_factory=list)
    why: Score | None = None

    @property
    def kind(self) -> tuple[str, int]:
        if self.entity is not None:
            return ("entity", self.entity.id)
        if self.edge is not None:
            return ("edge", self.edge.id)
        assert self.passage is not None
        return ("passage", self.passage.chunk.id)


def _cost(line: str) -> int:
    return estimate_tokens(line) + 1  # the line break


def _added_cost(passages: dict[int, Passage], order: list[int], p: Passage) -> int:
    """What ``p`` adds to the passages, placed by its ID in ``order`` (the
    IDs taken, sorted): its own block under the one above it, and the change
    to the block below it, whose stamp ``p`` may now repeat or interrupt."""
    at = bisect.bisect(order, p.chunk.id)
    above = passages[order[at - 1]] if at else None
    cost = _cost(p.render(above))
    if at < len(order):
        below = passages[order[at]]
        cost += _cost(below.render(p)) - _cost(below.render(above))
    return cost


@dataclass
class _Fill:
    """The state of one fill: the context, the tokens used, the passages
    taken (sorted IDs) and the ends' costs priced so far."""

    ctx: Context
    entities: dict[int, Entity]
    budget: int
    used: int
    passage_tags: int
    taken: list[int] = field(default_factory=list)
    # An end's own line's cost, by its key in ``entities``: a fact's ends are
    # priced each time one of its facts is weighed while the end is not in
    # yet (an entity ends many of the candidate facts).
    end_costs: dict[int, int] = field(default_factory=dict)

    def entity(self, c: Scored, n: Entity) -> None:
        if n.id in self.ctx.entities:
            return
        cost = _cost(prompts.entity_line(n))
        if self.used + cost <= self.budget:
            self.ctx.entities[n.id] = n
            self.ctx.why[("entity", n.id)] = c.why or Score([])
            self.used += cost
        else:
            self.ctx.dropped.append((c, PAST_BUDGET))

    def edge(self, c: Scored, e: Edge) -> None:
        ctx = self.ctx
        if e.id in ctx.edges:
            return
        src, dst = self.entities[e.source_id], self.entities[e.target_id]
        ends = [(e.source_id, src)]
        if e.target_id != e.source_id:
            ends.append((e.target_id, dst))
        cost = _cost(prompts.edge_line(e, {src.id: src.name, dst.id: dst.name}))
        new_ends: list[Entity] = []
        for j, n in ends:
            if n.id not in ctx.entities:
                new_ends.append(n)
                if j not in self.end_costs:
                    self.end_costs[j] = _cost(prompts.entity_line(n))
                cost += self.end_costs[j]
        if self.used + cost <= self.budget:
            ctx.edges[e.id] = e
            ctx.why[("edge", e.id)] = c.why or Score([])
            for n in new_ends:
                ctx.entities[n.id] = n
                ctx.why[("entity", n.id)] = Score([], {"pool": "fact_end", "end_of": e.id})
            self.used += cost
        else:
            ctx.dropped.append((c, PAST_BUDGET))

    def passage(self, c: Scored, first: Passage) -> None:
        ctx = self.ctx
        if first.chunk.id in ctx.passages:
            return
        tags = 0 if ctx.passages else self.passage_tags
        for p in [first, *c.alternatives]:
            cost = tags + _added_cost(ctx.passages, self.taken, p)
            if self.used + cost <= self.budget:
                ctx.passages[p.chunk.id] = p
                ctx.why[("passage", p.chunk.id)] = c.why or Score([])
                bisect.insort(self.taken, p.chunk.id)
                self.used += cost
                return
        ctx.dropped.append((c, PAST_BUDGET))


def _is_part(c: Scored) -> bool:
    """A window or chunk of a longer text (not a transcript's turn)."""
    return (
        c.passage is not None
        and c.passage.chunk.parent_id is not None
        and not is_turn(c.passage.chunk.text)
    )


def fill(
    candidates: list[Scored],
    entities: dict[int, Entity],
    question: str,
    now: str,
    budget: int,
    nearby: dict[str, Any] | None = None,
    as_of: str | None = None,
    p: RetrievalProfile = DEFAULT,
) -> Context:
    """Take the candidates best first while they fit in ``budget`` tokens; a
    fact brings its two ends (``entities`` holds every end). A candidate
    that does not fit is skipped, and smaller ones after it may still fit.
    Facts and passages under the relevance floor (a share of the best
    score, lower when no fact is a candidate) are not taken at all."""
    best = max((c.score for c in candidates), default=0.0)
    with_facts = any(c.edge is not None for c in candidates)
    floor = (p.relevance_floor if with_facts else p.passages_only_floor) * best
    # A window or chunk of a longer text (some 200 tokens, a few lines of which
    # answer) is held to the facts' floor even when no fact is a candidate: on
    # LoCoMo remembered session by session the same evidence (0.881) then fits
    # in 12.1% of the conversation instead of 13.0% (docs/retrieval.md). A
    # window that is one turn of a transcript is as short as a turn, and
    # held to the turns' floor.
    part_floor = p.relevance_floor * best
    skeleton = Context({}, {}, {}, as_of=as_of)
    state = _Fill(
        Context({}, {}, {}, nearby, budget, as_of=as_of),
        entities,
        budget,
        estimate_tokens(skeleton.render(question, now)),
        _cost("<passages>") + _cost("</passages>"),
    )
    ctx = state.ctx
    # Best first, ties in the candidates' order (a stable sort keeps it when
    # reversed): no key tuple per candidate.
    scores = [c.score for c in candidates]
    order = sorted(range(len(candidates)), key=scores.__getitem__, reverse=True)
    for i in order:
        c = candidates[i]
        # A seed's own line is short: it competes for the budget only.
        if c.entity is None and c.score < (part_floor if _is_part(c) else floor):
            ctx.dropped.append((c, UNDER_FLOOR))
        elif c.entity is not None:
            state.entity(c, c.entity)
        elif c.edge is not None:
            state.edge(c, c.edge)
        elif c.passage is not None:
            state.passage(c, c.passage)
    ctx.left_out = sum(1 for _, why in ctx.dropped if why == PAST_BUDGET)
    ctx.below_floor = len(ctx.dropped) - ctx.left_out
    return ctx
