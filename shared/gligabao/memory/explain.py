"""explain: why each item of a query's context is there, and why the best
candidates left out are not (a request's ``"explain": true``).

Nothing here computes a score: an item's explanation is the
:class:`~.scoring.Score` its candidate was given (the parts in the order they
were added, and the figures they came from), so it cannot drift from the
arithmetic. The call record keeps it too (``result.explain``), for the UI."""

from __future__ import annotations

from typing import Any

from ..text import passage_text
from .context import Context, Scored
from .scoring import Score

LABEL_CHARS = 200  # of a left-out passage's text, shown to say which one it is


def why(ctx: Context, kind: str, i: int) -> dict[str, Any]:
    """An item's explanation (an end of a fact says which fact brought it)."""
    s = ctx.why.get((kind, i))
    return s.public() if s is not None else Score([]).public()


def _label(c: Scored, entities: dict[int, Any]) -> str:
    if c.entity is not None:
        return c.entity.name
    if c.edge is not None:
        e = c.edge
        src = entities[e.source_id].name if e.source_id in entities else ""
        dst = entities[e.target_id].name if e.target_id in entities else ""
        return f"{src} {e.relation} {dst}: {e.description}".strip()
    assert c.passage is not None
    p = c.passage
    body = passage_text(p.text, p.chunk.speaker) if p.text is not None else (p.summary or "")
    return body[:LABEL_CHARS]


def left_out(ctx: Context, entities: dict[int, Any], limit: int) -> list[dict[str, Any]]:
    """The best ``limit`` candidates that did not make it, best first, each
    with the reason (under the relevance floor, past the budget) and its
    explanation."""
    best = sorted(ctx.dropped, key=lambda d: -d[0].score)[:limit]
    out = []
    for c, reason in best:
        kind, i = c.kind
        s = c.why if c.why is not None else Score([("score", c.score)])
        out.append(
            {
                "kind": kind,
                "id": i,
                "reason": reason,
                "label": _label(c, entities),
                "explain": s.public(),
            }
        )
    return out


def annotate(ctx: Context, body: dict[str, Any]) -> None:
    """Give each entity, edge and passage of ``body`` (as search renders
    them) its ``explain``."""
    for kind, items in (("entity", "entities"), ("edge", "edges"), ("passage", "passages")):
        for item in body.get(items, []):
            i = item["artifact_id"] if kind == "passage" else item["id"]
            item["explain"] = why(ctx, kind, i)


def record(ctx: Context, left: list[dict[str, Any]]) -> dict[str, Any]:
    """What the call record keeps: each item's explanation by kind and ID,
    and the left-out candidates."""
    out: dict[str, Any] = {"entities": {}, "edges": {}, "passages": {}}
    names = {"entity": "entities", "edge": "edges", "passage": "passages"}
    for (kind, i), s in ctx.why.items():
        out[names[kind]][str(i)] = s.public()
    out["left_out"] = left
    return out
