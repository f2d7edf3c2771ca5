"""The benchmarks' deterministic vectors (numpy only, so that a benchmark's
child process in another venv, bench/peers_sides.py, computes the same)."""

from __future__ import annotations

import hashlib

import numpy as np


def vec_of(text: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    out: np.ndarray = v / np.linalg.norm(v)
    return out


def near(target: np.ndarray, label: str, sim: float) -> np.ndarray:
    """A unit vector at cosine ``sim`` from the unit vector ``target``."""
    u = vec_of("noise:" + label, target.shape[0])
    u = u - float(u @ target) * target
    u /= np.linalg.norm(u)
    out: np.ndarray = sim * target + np.sqrt(1 - sim * sim) * u
    return out
