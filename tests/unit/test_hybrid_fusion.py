"""The hybrid search's fusion (vectors/port.py: hybrid), which the four
vector stores share: the k-NN ranking weighs more than the BM25 ranking."""

from __future__ import annotations

import pytest

from gligabao.vectors.port import RRF_K, VECTOR_WEIGHT, hybrid


def test_a_second_by_vector_comes_before_a_first_by_words_alone() -> None:
    # With equal weights the words' first (1/61) would beat the vectors'
    # second (1/62): the order would be [1, 3, 2].
    hits = hybrid([1, 2], [3], 3)
    assert [h.id for h in hits] == [1, 2, 3]
    assert hits[1].score == pytest.approx(VECTOR_WEIGHT / (RRF_K + 2))
    assert hits[2].score == pytest.approx(1 / (RRF_K + 1))


def test_both_rankings_add_up_and_k_cuts() -> None:
    hits = hybrid([4, 5], [5, 4, 6], 2)
    assert [h.id for h in hits] == [4, 5]  # 4: first by vector, second by words
    assert hits[0].score == pytest.approx(VECTOR_WEIGHT / (RRF_K + 1) + 1 / (RRF_K + 2))
    assert hybrid([], [], 3) == []
