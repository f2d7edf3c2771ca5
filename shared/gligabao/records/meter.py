"""Every LLM, embeddings and rerank request of a call goes through the Meter,
which times it, prices it and appends its inference row to the call's
record, also when the request fails."""

from __future__ import annotations

import time
import uuid

from .. import clock, deadline
from ..ai import port as ai_port
from ..ai.port import LLM, Embedder, Embeddings, EmbedKind, LLMReply, LLMRequest
from ..ai.prices import price_of, rerank_price_of
from ..ai.rerank.port import Reranker, RerankReply, RerankRequest
from ..errors import GbError, UpstreamError
from .model import CallRecord, Inference


def inference_id() -> str:
    """32 hex digits that sort in creation order (nanoseconds, then random):
    the rows' sort key is f"{created_at}#{id}", and created_at has only
    second precision, so the ID keeps "newest first" exact within a second."""
    return f"{time.time_ns():016x}{uuid.uuid4().hex[:16]}"


class Meter:
    def __init__(
        self,
        call: CallRecord,
        llm: LLM,
        embedder: Embedder,
        prices: dict[str, tuple[float, float]],
        reranker: Reranker | None = None,
        rerank_prices: dict[str, float] | None = None,
    ) -> None:
        self.call = call
        self._llm = llm
        self._embedder = embedder
        self._prices = prices
        self._reranker = reranker  # None: reranking is off (GB_RERANK_PROVIDER=none)
        self._rerank_prices = rerank_prices or {}

    def _cost(self, model: str, input_tokens: int, output_tokens: int) -> float:
        price_in, price_out = price_of(self._prices, model)
        return round((input_tokens * price_in + output_tokens * price_out) / 1_000_000, 8)

    def _record(
        self,
        provider: str,
        stage: str,
        model: str,
        reasoning: str,
        t0: float,
        status: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        thinking_tokens: int | None = None,
        cost_usd: float | None = None,
    ) -> None:
        c = self.call
        if cost_usd is None:
            cost_usd = self._cost(model, input_tokens, output_tokens)
        c.inferences.append(
            Inference(
                id=inference_id(),
                user_id=c.user_id,
                dataset=c.dataset,
                session_id=c.session_id,
                call_id=c.call_id,
                type=c.type,
                stage=stage,
                provider=provider,
                model=model,
                reasoning=reasoning,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                thinking_tokens=thinking_tokens,
                cost_usd=cost_usd,
                latency_ms=int((time.perf_counter() - t0) * 1000),
                status=status,
                created_at=clock.now_str(),
            )
        )

    def complete(self, request: LLMRequest) -> LLMReply:
        t0 = time.perf_counter()

        def record(status: str, usage: LLMReply | None = None) -> None:
            tokens = (
                (usage.input_tokens, usage.output_tokens, usage.thinking_tokens) if usage else ()
            )
            self._record(
                self._llm.provider,
                request.stage,
                request.model,
                request.reasoning,
                t0,
                status,
                *tokens,
            )

        try:
            reply = deadline.within(
                f"the {request.stage} LLM call", lambda: self._llm.complete(request)
            )
        except GbError as exc:
            usage = exc.usage if isinstance(exc, UpstreamError) else None
            record(exc.message, usage if isinstance(usage, LLMReply) else None)
            raise
        except Exception as exc:  # not mapped by the adapter: still one row
            record(_internal(exc))
            raise
        record("ok", reply)
        return reply

    def reject(self, stage: str, reason: str) -> None:
        """Mark the last inference of a stage as failed (its reply was unusable)."""
        for inf in reversed(self.call.inferences):
            if inf.stage == stage:
                inf.status = reason
                return

    def embed(self, texts: list[str], kind: EmbedKind) -> Embeddings:
        """One embedder call, and one inference row, per batch the embedder
        sends as one request."""
        if not texts:
            return Embeddings([], self._embedder.model, 0, 0)
        size = max(1, ai_port.EMBED_BATCH)
        parts = [self._embed_one(texts[i : i + size], kind) for i in range(0, len(texts), size)]
        return Embeddings(
            [v for p in parts for v in p.vectors],
            parts[0].model,
            sum(p.input_tokens for p in parts),
            sum(p.requests for p in parts),
        )

    def _embed_one(self, texts: list[str], kind: EmbedKind) -> Embeddings:
        t0 = time.perf_counter()
        try:
            result = deadline.within(
                "an embeddings call", lambda: self._embedder.embed(texts, kind)
            )
        except GbError as exc:
            self._record(
                self._embedder.provider, "embed", self._embedder.model, "none", t0, exc.message
            )
            raise
        except Exception as exc:
            self._record(
                self._embedder.provider, "embed", self._embedder.model, "none", t0, _internal(exc)
            )
            raise
        self._record(
            self._embedder.provider, "embed", result.model, "none", t0, "ok", result.input_tokens, 0
        )
        return result

    @property
    def reranks(self) -> bool:
        """Whether this call has a reranker (the server's setting)."""
        return self._reranker is not None

    def rerank(self, request: RerankRequest) -> RerankReply:
        """One rerank request, one inference row (stage ``rerank``), priced by
        search units rather than tokens."""
        reranker = self._reranker
        if reranker is None:
            raise RuntimeError("rerank called on a meter without a reranker")
        t0 = time.perf_counter()

        def record(status: str, reply: RerankReply | None = None) -> None:
            model = reply.model if reply is not None and reply.model else reranker.model
            price = rerank_price_of(self._rerank_prices, model)
            self._record(
                reranker.provider,
                "rerank",
                model,
                "none",
                t0,
                status,
                reply.input_tokens if reply is not None else 0,
                cost_usd=round(reply.search_units * price / 1000, 8) if reply is not None else 0.0,
            )

        try:
            reply = deadline.within("the rerank call", lambda: reranker.rerank(request))
        except GbError as exc:
            record(exc.message)
            raise
        except Exception as exc:
            record(_internal(exc))
            raise
        record("ok", reply)
        return reply


def _internal(exc: Exception) -> str:
    return f"internal error: {type(exc).__name__}"
