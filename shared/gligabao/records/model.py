"""Inference rows, trajectory steps and call records."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import clock

# Inference stages answered by another model than the LLM.
NOT_LLM_STAGES = frozenset({"embed", "rerank"})


@dataclass
class Inference:
    id: str
    user_id: str
    dataset: str
    session_id: str | None
    call_id: str
    type: str  # remember | query
    stage: str
    model: str
    reasoning: str
    input_tokens: int
    output_tokens: int
    thinking_tokens: int | None
    cost_usd: float
    latency_ms: int
    status: str  # "ok" or the error
    created_at: str
    # Who answered: "anthropic", "bedrock", "openai" or "local" ("" on rows
    # written before providers were recorded).
    provider: str = ""

    def public(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Step:
    name: str
    ms: float
    counts: dict[str, int] = field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        return {"name": self.name, "ms": round(self.ms, 2), **self.counts}


@dataclass
class CallRecord:
    call_id: str
    type: str
    user_id: str
    dataset: str
    session_id: str | None
    started_at: str
    status: str = "ok"
    duration_ms: float = 0.0
    steps: list[Step] = field(default_factory=list)
    inferences: list[Inference] = field(default_factory=list)
    result: dict[str, Any] | None = None  # a queued call's response, once done
    _t0: float = field(default_factory=time.perf_counter, repr=False)

    @contextmanager
    def step(self, name: str, **counts: int) -> Iterator[dict[str, int]]:
        """Time a step; the caller fills the yielded dict with its counts."""
        c: dict[str, int] = dict(counts)
        t0 = time.perf_counter()
        try:
            yield c
        finally:
            self.steps.append(Step(name, (time.perf_counter() - t0) * 1000, c))

    def finish(self, status: str) -> None:
        self.status = status
        # Rounded once, here, as the API shows it: a stored record then reads
        # back exactly as the live one (rounding to 3 places on save and to 2
        # on show could differ by 0.01).
        self.duration_ms = round((time.perf_counter() - self._t0) * 1000, 2)

    @property
    def llm_calls(self) -> int:
        return sum(1 for i in self.inferences if i.stage not in NOT_LLM_STAGES)

    def totals(self) -> dict[str, float]:
        return {
            "llm_calls": self.llm_calls,
            "embed_calls": sum(1 for i in self.inferences if i.stage == "embed"),
            "rerank_calls": sum(1 for i in self.inferences if i.stage == "rerank"),
            "input_tokens": sum(i.input_tokens for i in self.inferences),
            "output_tokens": sum(i.output_tokens for i in self.inferences),
            "cost_usd": round(sum(i.cost_usd for i in self.inferences), 8),
        }

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "call_id": self.call_id,
            "type": self.type,
            "status": self.status,
            "dataset": self.dataset,
            "started_at": self.started_at,
            "duration_ms": round(self.duration_ms, 2),
            "steps": [s.public() for s in self.steps],
        }
        if self.session_id is not None:
            out["session_id"] = self.session_id
        if self.result is not None:
            out["result"] = self.result
        return out


def new_call(
    call_id: str, type_: str, user_id: str, dataset: str, session_id: str | None
) -> CallRecord:
    return CallRecord(call_id, type_, user_id, dataset, session_id, clock.now_str())
