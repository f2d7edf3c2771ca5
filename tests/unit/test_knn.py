"""The in-memory vector table: exact search up to EXACT_UP_TO rows, and above
it a one-bit-code first pass whose candidates are scored exactly."""

from __future__ import annotations

import numpy as np
import pytest

from gligabao.vectors import knn


def unit_rows(rng: np.random.Generator, n: int, dim: int, shared: float = 0.0) -> np.ndarray:
    """Random unit vectors; ``shared`` adds a common direction (as a sentence
    model's vectors have: every cosine well above 0)."""
    m = rng.standard_normal((n, dim)).astype(np.float32)
    m += shared * rng.standard_normal(dim).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def near(rng: np.random.Generator, target: np.ndarray, cos: float) -> np.ndarray:
    u = rng.standard_normal(target.shape[0]).astype(np.float32)
    u -= (u @ target) * target
    u /= np.linalg.norm(u)
    return (cos * target + np.sqrt(1 - cos * cos) * u).astype(np.float32)


def exact(m: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    return [int(i) + 1 for i in np.argsort(-(m @ q), kind="stable")[:k]]


@pytest.mark.parametrize("shared", [0.0, 3.0])
def test_above_the_threshold_the_vectors_near_the_question_are_kept(
    monkeypatch: pytest.MonkeyPatch, shared: float
) -> None:
    """The exact top 5 of each question (five rows planted at cosines 0.55
    to 0.8 of it; with a shared direction, other questions' rows too) come
    back first, in order, with their exact cosines (the rest of the top 10 are
    near-ties among random rows: their order is what the first pass may
    change, bench/vector_recall.py measures it)."""
    monkeypatch.setattr(knn, "EXACT_UP_TO", 1000)
    rng = np.random.default_rng(7)
    m = unit_rows(rng, 6000, 384, shared)  # 384 dimensions, as the default model's
    questions = unit_rows(rng, 20, 384, shared)
    for j, q in enumerate(questions):
        for r, cos in enumerate((0.8, 0.75, 0.7, 0.6, 0.55)):
            m[j * 100 + r] = near(rng, q, cos)
    table = knn.VectorTable()
    table.set_many(list(range(1, 6001)), m)
    for j, q in enumerate(questions):
        got = table.search(q, 10, -1.0)
        assert j * 100 + 1 in [i for i, _ in got[:5]]
        assert [i for i, _ in got[:5]] == exact(m, q, 5)
        assert got[0][1] == pytest.approx(float(m[j * 100] @ q), abs=1e-5)  # exact cosines


def test_below_the_threshold_it_is_the_exact_search() -> None:
    rng = np.random.default_rng(3)
    m = unit_rows(rng, 500, 32)
    table = knn.VectorTable()
    table.set_many(list(range(1, 501)), m)
    q = unit_rows(rng, 1, 32)[0]
    assert [i for i, _ in table.search(q, 20, -1.0)] == exact(m, q, 20)
    assert all(s >= 0.1 for _, s in table.search(q, 20, 0.1))


def test_rows_replaced_and_added_after_the_codes_are_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(knn, "EXACT_UP_TO", 100)
    rng = np.random.default_rng(5)
    m = unit_rows(rng, 300, 32)
    table = knn.VectorTable()
    table.set_many(list(range(1, 301)), m)
    table.search(m[0], 5, -1.0)  # builds the codes
    moved = unit_rows(rng, 1, 32)[0]
    table.set(7, moved)  # replaced
    table.set_many([1000, 1001], unit_rows(rng, 2, 32))  # added
    assert table.search(moved, 1, -1.0)[0][0] == 7
    assert len(table) == 302


def test_vectors_of_two_dimensions_are_not_searched() -> None:
    table = knn.VectorTable()
    table.set(1, np.ones(4, dtype=np.float32) / 2)
    table.set(2, np.ones(8, dtype=np.float32) / np.sqrt(8))
    assert table.search(np.ones(4, dtype=np.float32) / 2, 5, -1.0) == []


@pytest.mark.parametrize("singles_first", [True, False])
def test_rows_added_past_the_capacity_after_the_codes_are_built(
    monkeypatch: pytest.MonkeyPatch, singles_first: bool
) -> None:
    """The codes grow with the matrix, by a row and by a block: every added
    row is found through the code written for it. (More rows than the first
    pass's candidates, so a wrong code is not rescored; fewer than twice the
    rows the codes were built from, which would rebuild them all.)"""
    monkeypatch.setattr(knn, "EXACT_UP_TO", 50)
    rng = np.random.default_rng(11)
    m = unit_rows(rng, 700, 64)
    table = knn.VectorTable()
    table.set_many(list(range(700)), m)
    table.search(m[0], 5, -1.0)  # builds the codes, at the matrix's capacity (700)
    singles = (list(range(1000, 1100)), unit_rows(rng, 100, 64))
    block = (list(range(2000, 2550)), unit_rows(rng, 550, 64))
    for ids, vecs in (singles, block) if singles_first else (block, singles):
        if ids[0] < 2000:
            for row_id, v in zip(ids, vecs, strict=True):
                table.set(row_id, v)
        else:
            table.set_many(ids, vecs)
    assert len(table) == 1350
    for ids, vecs in (singles, block):
        for row_id, v in zip(ids, vecs, strict=True):
            assert table.search(v, 1, -1.0)[0][0] == row_id


def test_one_blas_thread_inside_the_block_and_as_it_was_after() -> None:
    """The search's products run on one BLAS thread (a woken helper thread
    waits for a time slice on a busy machine); the setting is restored."""
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas_threads()
    with knn.one_blas_thread():
        assert blas_threads() == [1] * len(before)
    assert blas_threads() == before


def test_one_thread_gives_the_same_scores_to_the_bit() -> None:
    """What the limit must not change: the rows found and their cosines."""
    rng = np.random.default_rng(3)
    m = unit_rows(rng, 5000, 384, shared=3.0)
    table = knn.VectorTable()
    table.set_many(list(range(1, 5001)), m)
    for q in unit_rows(rng, 5, 384):
        free = table.search(q, 20, -1.0)
        with knn.one_blas_thread():
            assert table.search(q, 20, -1.0) == free
