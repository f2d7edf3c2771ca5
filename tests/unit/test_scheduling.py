"""The suite's own scheduling (tests/scheduling.py): a SPLIT file's tests are
cut into consecutive runs of equal length, every other file stays whole."""

from __future__ import annotations

from itertools import pairwise

from scheduling import SPLIT, groups


def test_a_split_file_is_cut_into_consecutive_runs_and_the_rest_stay_whole() -> None:
    path = "integration/test_isolation.py"
    parts = SPLIT[path]
    ids = [f"tests/{path}::test_{i}" for i in range(4 * parts + 1)]
    other = ["tests/unit/test_other.py::test_a", "tests/unit/test_other.py::test_b"]
    got = groups([other[0], *ids, other[1]])
    assert all(n not in got for n in other)  # their file is their group
    labels = [got[n] for n in ids]
    assert len(set(labels)) == parts
    # consecutive: each part's tests follow one another, the sizes differ by one at most
    runs = [labels[0]] + [b for a, b in pairwise(labels) if a != b]
    assert runs == sorted(set(labels), key=labels.index)
    sizes = [labels.count(g) for g in runs]
    assert max(sizes) - min(sizes) <= 1
