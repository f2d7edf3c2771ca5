"""Percentiles, stopwatches and a quiet stdout."""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass


def pct(values: Sequence[float], p: float) -> float:
    """The nearest-rank percentile (p50 of 1..10 is 5, p95 is 10); nan for none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


@dataclass
class Stopwatch:
    """Seconds summed over the spans added: ``t0 = perf_counter(); ...; w.add(t0)``."""

    seconds: float = 0.0

    def add(self, t0: float) -> None:
        self.seconds += time.perf_counter() - t0


def ms_since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


@contextmanager
def quiet_stdout() -> Iterator[Callable[..., None]]:
    """The server logs a JSON line and a metrics line (CloudWatch EMF) per call
    on stdout: send them to /dev/null for the block, and yield a ``say`` that
    still prints to the real stdout."""
    real = sys.stdout

    def say(text: str = "") -> None:
        print(text, file=real, flush=True)

    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - closed below
    try:
        yield say
    finally:
        sys.stdout.close()
        sys.stdout = real


def say(text: str = "") -> None:
    print(text, flush=True)


def load_average() -> str:
    """The machine's load, printed beside a timing (2 shared cores: it moves them)."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"
