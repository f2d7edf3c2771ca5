"""search: the query's retrieval without its answer. The context the LLM
would be given (entities, facts and passages, best first), for agents that
reason over it themselves, and its size in tokens. No LLM call (except the
nearby search's place detection, when the caller asks for it)."""

from __future__ import annotations

from typing import Any

from .. import clock
from ..models import DatasetKey
from ..records.meter import Meter
from .explain import annotate
from .retrieve import Context, QueryInput, Retriever


def public(ctx: Context, inp: QueryInput, tokens: int) -> dict[str, Any]:
    names = {i: e.name for i, e in ctx.entities.items()}
    out: dict[str, Any] = {}
    if inp.session_id is not None:
        out["session_id"] = inp.session_id
    out["entities"] = [e.public() for e in ctx.entities.values()]
    out["edges"] = [e.public(names) for e in ctx.edges.values()]
    out["passages"] = [p.public() for p in ctx.passages.values()]
    if ctx.notes:
        out["notes"] = [n.public() for n in ctx.notes]
    if ctx.nearby:
        out["nearby"] = ctx.nearby
    out["context_tokens"] = tokens
    if inp.explain:
        annotate(ctx, out)
        out["left_out"] = ctx.explained or []
    return out


class Search:
    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever

    def run(self, inp: QueryInput, meter: Meter) -> dict[str, Any]:
        key = DatasetKey(inp.user_id, inp.dataset)
        ctx = self.retriever.retrieve(key, inp, meter, check_dataset=True)
        # An empty context is never sent (query answers without the LLM).
        tokens = 0 if ctx.empty else ctx.token_estimate(inp.query, clock.now_str())
        return public(ctx, inp, tokens)
