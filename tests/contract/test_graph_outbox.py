"""The graph stores' outbox for the changes that remove a dataset's rows (a
dataset's delete, a user's erase), on both adapters: the events go with the
change, are delivered after it, wait when the sink is down (the same IDs go
again later), and a change that did not happen (a second delete) has none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_graph_store import A, B

from gligabao.events.model import dataset_deleted, user_erased
from gligabao.graph.dynamodb.store import DynamoGraphStore
from gligabao.graph.sqlite.store import SqliteGraphStore
from gligabao.sqlite.db import Database


class Sink:
    """The publisher's ``deliver_bodies``: records each delivery; down when told."""

    def __init__(self) -> None:
        self.up = True
        self.got: list[dict[str, Any]] = []

    def __call__(self, bodies: list[dict[str, Any]]) -> bool:
        if self.up:
            self.got += bodies
        return self.up


@pytest.fixture(params=["sqlite", "dynamodb"])
def stored(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, Sink]]:
    sink = Sink()
    if request.param == "sqlite":
        db = Database(tmp_path / "gligabao.db")
        yield SqliteGraphStore(db, outbox=sink), sink
        db.close()
        return
    request.getfixturevalue("dynamo")
    # lease 0: what waits is taken at once (a live call's events are younger than a lease)
    s = DynamoGraphStore(lease_s=0, outbox=sink)
    yield s, sink
    s.close()


def test_a_delete_has_its_event_once_and_a_second_delete_none(stored: Any) -> None:
    store, sink = stored
    store.ensure_dataset(A)
    event = dataset_deleted(A.user_id, A.dataset).public()
    assert store.delete_dataset(A, [event]) is True
    assert sink.got == [event]
    again = dataset_deleted(A.user_id, A.dataset).public()
    assert store.delete_dataset(A, [again]) is False  # nothing deleted: no event
    store.deliver_waiting()
    assert sink.got == [event]


def test_an_undelivered_delete_event_waits_and_goes_with_its_id(stored: Any) -> None:
    store, sink = stored
    store.ensure_dataset(B)
    sink.up = False
    event = dataset_deleted(B.user_id, B.dataset).public()
    assert store.delete_dataset(B, [event]) is True
    assert sink.got == []
    sink.up = True
    store.deliver_waiting()
    store.deliver_waiting()
    assert sink.got == [event]


def test_an_undelivered_erase_event_goes_with_the_rerun_same_id(stored: Any) -> None:
    store, sink = stored
    store.ensure_dataset(A)
    store.begin_erase(A.user_id, "call-1")
    store.delete_dataset(A)
    sink.up = False
    first = user_erased(A.user_id, "call-1").public()
    store.end_erase(A.user_id, [first])
    assert sink.got == [] and store.dataset_names(A.user_id) == []
    sink.up = True
    # the rerun (the next DELETE of the user, or a server's start) makes the
    # same event again: the same ID, delivered once
    rerun = user_erased(A.user_id, "call-1").public()
    assert rerun["id"] == first["id"]
    for pending_user, call_id in store.pending_erasures():
        assert (pending_user, call_id) == (A.user_id, "call-1")
        store.end_erase(pending_user, [rerun])
    store.deliver_waiting()
    assert [e["id"] for e in sink.got] == [first["id"]]
    assert store.pending_erasures() == []
