"""Per-call LLM options: the reasoning level and the model of each stage."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class StageOptions:
    default_model: str
    reasoning: dict[str, str] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)

    def level(self, stage: str) -> str:
        # A stage left out runs without thinking, so no thinking is paid for.
        return self.reasoning.get(stage, "none")

    def model(self, stage: str) -> str:
        return self.models.get(stage, self.default_model)
