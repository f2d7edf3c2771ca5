"""What the models cost: USD per million tokens (input, output), and the price
of a model name as a provider takes it. GB_PRICES (config) is merged over the
built-in table."""

from __future__ import annotations

from .models import LOCAL_EMBEDDING_MODEL, TITAN_EMBEDDING_MODEL

# Thinking tokens are billed as output.
# Sources: anthropic.com/pricing, openai.com/api/pricing and, for Bedrock's
# on-demand prices (us-east-1), aws.amazon.com/bedrock/pricing. A Bedrock
# model is priced under its model ID; an inference profile ("us.", "eu.",
# "apac.", "global." or an ARN) is priced as the model it names (see price_of).
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "claude-haiku-5-5": (1.0, 5.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-opus-4-1": (15.0, 75.0),
    "text-embedding-3-small": (0.02, 0.0),
    "text-embedding-3-large": (0.13, 0.0),
    LOCAL_EMBEDDING_MODEL: (0.0, 0.0),
    # Bedrock, on-demand, us-east-1 (aws.amazon.com/bedrock/pricing).
    "anthropic.claude-haiku-4-5-20251001-v1:0": (1.0, 5.0),
    "anthropic.claude-sonnet-4-5-20250929-v1:0": (3.0, 15.0),
    "anthropic.claude-opus-4-1-20250805-v1:0": (15.0, 75.0),
    "anthropic.claude-3-5-haiku-20241022-v1:0": (0.8, 4.0),
    TITAN_EMBEDDING_MODEL: (0.02, 0.0),
    "cohere.embed-english-v3": (0.10, 0.0),
    "cohere.embed-multilingual-v3": (0.10, 0.0),
    "cohere.embed-v4:0": (0.12, 0.0),
}
INFERENCE_PROFILE_PREFIXES = ("us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global.")


def price_of(prices: dict[str, tuple[float, float]], model: str) -> tuple[float, float]:
    """The (input, output) price of a model name as a provider takes it: an
    exact entry wins (GB_PRICES can price a profile or ARN itself), else a
    Bedrock inference profile is priced as its model. Unknown: free."""
    if model in prices:
        return prices[model]
    name = model.rsplit("/", 1)[-1] if model.startswith("arn:") else model
    for prefix in INFERENCE_PROFILE_PREFIXES:
        if name.startswith(prefix) and name[len(prefix) :] in prices:
            return prices[name[len(prefix) :]]
    return prices.get(name, (0.0, 0.0))


# Rerankers: USD per 1,000 search units (a rerank of up to 100 documents),
# Bedrock on-demand (aws.amazon.com/bedrock/pricing). GB_RERANK_PRICES adds or
# overrides models; an unknown one (a self-hosted server) is free.
DEFAULT_RERANK_PRICES: dict[str, float] = {
    "cohere.rerank-v3-5:0": 2.0,
    "amazon.rerank-v1:0": 1.0,
}


def rerank_price_of(prices: dict[str, float], model: str) -> float:
    """USD per 1,000 search units of a reranker model: an exact entry, else
    the model a Bedrock foundation-model ARN names. Unknown: free."""
    if model in prices:
        return prices[model]
    return prices.get(model.rsplit("/", 1)[-1], 0.0)
