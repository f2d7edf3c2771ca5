"""The graph store's part of an erase, on every adapter (the fixture of
test_graph_store.py): the mark of an erase begun (one per user, its first
call ID, listed until the end), and the end, which removes the user's dataset
rows and keeps their ID counters under a one-way hash: the same user's
dataset of the same name goes on from them; another user, or another name,
starts at 1; nothing kept names the user."""

from __future__ import annotations

from typing import Any

from test_graph_store import A2, A, B, store

__all__ = ["store"]


def test_the_mark_is_one_per_user_and_goes_at_the_end(store: Any) -> None:
    for key in (A, A2, B):
        store.ensure_dataset(key)
    assert store.dataset_names(A.user_id) == ["main", "other"]
    assert store.begin_erase(A.user_id, "call-1") == "call-1"
    assert store.begin_erase(A.user_id, "call-2") == "call-1"  # a rerun resumes the first
    assert store.pending_erasures() == [(A.user_id, "call-1")]
    store.delete_dataset(A)
    store.delete_dataset(A2)
    assert store.dataset_names(A.user_id) == ["main", "other"]  # deleted rows, still there
    assert store.end_erase(A.user_id) == 2
    assert store.pending_erasures() == []
    assert store.dataset_names(A.user_id) == []
    assert store.list_datasets(A.user_id) == []
    assert store.end_erase(A.user_id) == 0  # a rerun after a crash: nothing left
    assert [d.name for d in store.list_datasets(B.user_id)] == ["main"]  # the other user's


def test_ids_go_on_after_an_erase(store: Any) -> None:
    for key in (A, B):
        store.ensure_dataset(key)
    assert store.allocate_ids(A, 3, 2, 5) == (1, 1, 1)
    store.begin_erase(A.user_id, "call-1")
    store.delete_dataset(A)
    store.end_erase(A.user_id)
    store.ensure_dataset(A)
    assert store.allocate_ids(A, 1, 1, 1) == (4, 3, 6)  # never reused
    store.ensure_dataset(A2)
    assert store.allocate_ids(A2, 1, 1, 1) == (1, 1, 1)  # another name: its own counters
    assert store.allocate_ids(B, 1, 1, 1) == (1, 1, 1)  # another user: untouched
    # erased twice: the counters are the highest either erase kept
    store.begin_erase(A.user_id, "call-2")
    store.delete_dataset(A)
    store.delete_dataset(A2)
    store.end_erase(A.user_id)
    store.ensure_dataset(A)
    assert store.allocate_ids(A, 1, 1, 1) == (5, 4, 7)
