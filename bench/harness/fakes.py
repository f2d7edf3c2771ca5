"""The fake LLM and embeddings servers of tests/fakes, for the benchmarks.

tests/fakes is a regular package inside the `tests` folder (a namespace
package from the repository root), imported as ``tests.fakes`` when a bench
runs as ``python -m bench.NAME`` from the root: no path edits. The fakes
import only the standard library.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tests.fakes
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.latency import HeldOpenAI, LatencyProxy
from tests.fakes.openai_server import FakeOpenAI

from . import ROOT

# A `tests` package installed elsewhere would shadow the folder: say so.
if not Path(tests.fakes.__file__).resolve().is_relative_to(ROOT / "tests"):
    raise ImportError(f"tests.fakes is {tests.fakes.__file__}, not this repository's")

__all__ = [
    "ANSWER",
    "EMBED_DIM",
    "FakeAnthropic",
    "FakeOpenAI",
    "HeldOpenAI",
    "LatencyProxy",
    "start_fakes",
]

EMBED_DIM = 64
ANSWER = {"answer": "From memory.", "entities": [], "edges": [], "passages": []}


def start_fakes(
    replies: dict[str, Any] | None = None, dim: int = EMBED_DIM, *, keep_alive: bool = False
) -> tuple[FakeAnthropic, FakeOpenAI]:
    """The fake Anthropic (``replies``: a reply or a function of the request
    body, per stage; `query` answers ``ANSWER`` unless given) and the fake
    OpenAI embeddings, started on loopback. Stop both when done.
    ``keep_alive``: persistent connections, as a provider's API keeps them
    (the latency benchmarks: a request pays no connect)."""
    llm, emb = FakeAnthropic(), FakeOpenAI(dim=dim)
    llm.keep_alive = emb.keep_alive = keep_alive
    llm.start()
    emb.start()
    for stage, reply in {"query": ANSWER, **(replies or {})}.items():
        llm.default(stage, reply)
    return llm, emb
