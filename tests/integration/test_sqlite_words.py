"""The SQLite index's search by words leaves out the question's common terms
(``sqlite.words.informative``): a term held by more than ``COMMON_SHARE`` of
the dataset's passages is not in the MATCH while a rarer term remains, so
the passages that hold only the common term are neither read nor scored
(FTS5's BM25 gives such a term an IDF of about nothing). A question of common
terms only is still searched by them, and so is a small dataset (under
``COMMON_MIN_PASSAGES``; lowered here so that ten passages show the rule).
Real SQLite files; the counts follow the dataset's writes and deletes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gligabao.models import DatasetKey
from gligabao.sqlite import words
from gligabao.sqlite.db import Database
from gligabao.sqlite.words import COMMON_SHARE, informative
from gligabao.vectors.port import SearchRequest, VectorItem
from gligabao.vectors.sqlite.store import SqliteVectorIndex

DIM = 8
KEY = DatasetKey("u1", "main")


def e(i: int) -> list[float]:
    return [1.0 if j == i else 0.0 for j in range(DIM)]


def by_words(index: SqliteVectorIndex, text: str, k: int = 50) -> list[int]:
    [hits] = index.search(KEY, [SearchRequest("chunks", [], k, 0.0, text=text)])
    return [h.id for h in hits]


@pytest.fixture(autouse=True)
def small_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(words, "COMMON_MIN_PASSAGES", 8)


@pytest.fixture
def index(tmp_path: Path) -> SqliteVectorIndex:
    """Ten passages: "budget" in eight of them (80%, above the share), "tofu"
    in two, "lantern" in one of those eight."""
    assert COMMON_SHARE < 0.8
    idx = SqliteVectorIndex(Database(tmp_path / "gligabao.db"))
    texts = {i: f"the budget review number {i}" for i in range(1, 9)}
    texts[3] = "the budget review mentions a lantern"
    texts[9] = "tofu for dinner"
    texts[10] = "tofu and rice again"
    idx.upsert(KEY, "chunks", [VectorItem(i, e(i % DIM), text=t) for i, t in texts.items()])
    return idx


def test_the_rule_keeps_the_rare_terms_or_all() -> None:
    rows = {"budget": 8, "tofu": 2, "lantern": 1, "absent": 0}
    assert informative(["budget", "tofu"], rows, 10) == ["tofu"]
    assert informative(["budget", "lantern", "tofu"], rows, 10) == ["lantern", "tofu"]
    # Only common terms, or common and absent ones: searched by all of them.
    assert informative(["budget"], rows, 10) == ["budget"]
    assert informative(["budget", "absent"], rows, 10) == ["budget", "absent"]
    # At the share exactly, a term is kept (half of the rows: 5 of 10).
    assert informative(["budget", "half"], {**rows, "half": 5}, 10) == ["half"]


def test_a_small_dataset_is_searched_by_all_its_terms(
    index: SqliteVectorIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = {"budget": 8, "tofu": 2}
    assert informative(["budget", "tofu"], rows, 7) == ["budget", "tofu"]
    monkeypatch.setattr(words, "COMMON_MIN_PASSAGES", 11)  # ten passages: small
    assert sorted(by_words(index, "budget tofu")) == list(range(1, 11))


def test_a_common_term_leaves_the_match_while_a_rare_one_remains(
    index: SqliteVectorIndex,
) -> None:
    # Without the rule, the eight "budget" passages would come too (after
    # the tofu ones): the OR of the two terms matches all ten.
    assert sorted(by_words(index, "budget tofu")) == [9, 10]
    # A rare term inside the common ones: that passage alone.
    assert by_words(index, "budget lantern") == [3]


def test_a_question_of_common_terms_only_is_still_searched(index: SqliteVectorIndex) -> None:
    assert sorted(by_words(index, "budget")) == list(range(1, 9))
    assert sorted(by_words(index, "budget review")) == list(range(1, 9))


def test_the_counts_follow_the_writes_and_the_deletes(index: SqliteVectorIndex) -> None:
    assert sorted(by_words(index, "budget tofu")) == [9, 10]  # counted: 8 of 10
    # Twenty more passages without "budget": 8 of 30, no longer common.
    more = [VectorItem(i, e(0), text=f"a walk in the park {i}") for i in range(11, 31)]
    index.upsert(KEY, "chunks", more)
    assert sorted(by_words(index, "budget tofu")) == [*range(1, 9), 9, 10]
    # The tofu passages and the walks deleted: 8 of 8 again, and "lantern"
    # the rare one.
    index.delete(KEY, "chunks", [9, 10, *range(11, 31)])
    assert by_words(index, "budget lantern") == [3]


def test_the_hybrid_request_fuses_the_informative_words(index: SqliteVectorIndex) -> None:
    [hits] = index.search(KEY, [SearchRequest("chunks", e(1), 50, 0.5, text="budget tofu")])
    # The vector finds passage 1 (and 9: 9 % 8 == 1); the words the tofu ones.
    assert sorted(h.id for h in hits) == [1, 9, 10]


def test_the_same_words_again_give_the_first_ranking_cut(index: SqliteVectorIndex) -> None:
    """A second search by the same terms (a query's second round when the
    question's own terms fill the cap) is answered from the first's ranking:
    the same IDs a search of its own gives, without FTS5; a write in between
    searches again."""
    matches: list[str] = []
    for conn in index.db._all:  # the pool's connections: count the MATCHes run
        conn.set_trace_callback(lambda sql: matches.append(sql) if "bm25" in sql else None)
    first = by_words(index, "budget lantern review number", k=50)
    assert len(matches) == 1
    again = by_words(index, "budget lantern review number", k=3)
    assert again == first[:3] and len(matches) == 1
    fresh = SqliteVectorIndex(index.db)  # no rankings kept: FTS5's own answer
    assert by_words(fresh, "budget lantern review number", k=3) == again
    index.upsert(KEY, "chunks", [VectorItem(40, e(0), text="lantern lantern lantern")])
    assert by_words(index, "budget lantern review number", k=3)[0] == 40
