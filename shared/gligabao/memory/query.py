"""query: answer a question with one LLM call on the context retrieve gives,
and return the entities, edges and passages the answer relied on."""

from __future__ import annotations

from typing import Any

from .. import clock
from ..ai import prompts
from ..ai.jsonreply import as_id, parse_json_object
from ..ai.port import LLMRequest
from ..config import Settings
from ..errors import UpstreamError
from ..graph.port import GraphStore
from ..models import DatasetKey
from ..notes.port import NotesStore
from ..records.meter import Meter
from ..vectors.port import VectorIndex
from .explain import annotate
from .retrieve import Context, QueryInput, Retriever

__all__ = ["NO_INFORMATION", "Query", "QueryInput"]

QUERY_MAX_TOKENS = 2048
NO_INFORMATION = "I don't have any information in memory to answer that."


def _ids(value: Any) -> list[int]:
    if not isinstance(value, list):
        return []
    return [i for i in map(as_id, value) if i is not None]


def _explain(ctx: Context, out: dict[str, Any]) -> None:
    """With explain: the evidence's items say why they were in the context,
    and the whole context (as search gives it) and the best left out join."""
    annotate(ctx, out["evidence"])
    names = {i: e.name for i, e in ctx.entities.items()}
    body = {
        "entities": [e.public() for e in ctx.entities.values()],
        "edges": [e.public(names) for e in ctx.edges.values()],
        "passages": [p.public() for p in ctx.passages.values()],
    }
    annotate(ctx, body)
    out["context"] = body
    out["left_out"] = ctx.explained or []


class Query:
    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorIndex,
        settings: Settings,
        nearby: Any = None,
        notes: NotesStore | None = None,
    ) -> None:
        self.retriever = Retriever(graph, vectors, settings, nearby, notes=notes)

    @staticmethod
    def _answer(ctx: Context, inp: QueryInput, meter: Meter) -> tuple[dict[str, Any], str]:
        """The one LLM call on the context: its parsed reply and its answer
        (UpstreamError, recorded as a rejection, on a reply without one)."""
        with meter.call.step("llm") as c:
            opts = inp.options
            reply = meter.complete(
                LLMRequest(
                    "query",
                    prompts.QUERY_SYSTEM,
                    ctx.render(inp.query, clock.now_str()),
                    opts.model("query"),
                    opts.level("query"),
                    QUERY_MAX_TOKENS,
                    prompts.QUERY_SCHEMA,
                )
            )
            try:
                data = parse_json_object(reply.text)
            except UpstreamError:
                meter.reject("query", "unparsable reply")
                raise
            answer = data.get("answer")
            if not isinstance(answer, str) or not answer.strip():
                meter.reject("query", "reply has no answer")
                raise UpstreamError("LLM reply has no answer")
            c["input_tokens"] = reply.input_tokens
            c["output_tokens"] = reply.output_tokens
        return data, answer

    def run(self, inp: QueryInput, meter: Meter) -> dict[str, Any]:
        key = DatasetKey(inp.user_id, inp.dataset)
        # The dataset is checked while the question is embedded (NotFound).
        ctx = self.retriever.retrieve(key, inp, meter, check_dataset=True)
        out: dict[str, Any] = {}
        if inp.session_id is not None:
            out["session_id"] = inp.session_id
        if ctx.empty:
            out["answer"] = NO_INFORMATION
            out["evidence"] = {"entities": [], "edges": [], "passages": []}
            if ctx.nearby:
                out["nearby"] = ctx.nearby
            if inp.explain:
                _explain(ctx, out)
            return out

        data, answer = self._answer(ctx, inp, meter)
        with meter.call.step("evidence") as c:
            # Only what was in the context: hallucinated IDs are dropped.
            edge_ids = sorted({i for i in _ids(data.get("edges")) if i in ctx.edges})
            entity_ids = {i for i in _ids(data.get("entities")) if i in ctx.entities}
            for i in edge_ids:
                entity_ids.update((ctx.edges[i].source_id, ctx.edges[i].target_id))
            passage_ids = sorted({i for i in _ids(data.get("passages")) if i in ctx.passages})
            names = {i: e.name for i, e in ctx.entities.items()}
            out["answer"] = answer
            out["evidence"] = {
                "entities": [ctx.entities[i].public() for i in sorted(entity_ids)],
                "edges": [ctx.edges[i].public(names) for i in edge_ids],
                "passages": [ctx.passages[i].public() for i in passage_ids],
            }
            c["entities"] = len(entity_ids)
            c["edges"] = len(edge_ids)
            c["passages"] = len(passage_ids)
        if ctx.nearby:
            out["nearby"] = ctx.nearby
        if inp.explain:
            _explain(ctx, out)
        return out
