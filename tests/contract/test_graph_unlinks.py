"""The GraphStore contract for a split's write, on every adapter (the
``store`` fixture of test_graph_store): links removed with the commit, a new
entity that takes over facts, the originals expired and their claims freed."""

from __future__ import annotations

from typing import Any

import pytest
from test_graph_store import A, edge, ent, seed, store  # noqa: F401  (the fixture)

from gligabao.errors import UpstreamError
from gligabao.models import EdgeUpdate, GraphWrite


def test_a_commit_removes_the_entity_links_it_names(store: Any) -> None:  # noqa: F811
    seed(store, A)  # Bob(2) -works_at-> Acme(3), all three mentioned in artifact 1
    store.allocate_ids(A, 1, 1, 0)  # entity 4, edge 3
    txn = "split-1"
    assert store.claim_facts(A, txn, {"4#works_at#3": 3}) == {"4#works_at#3": 3}
    store.commit(
        A,
        GraphWrite(
            txn=txn,
            now="2024-02-01T00:00:00Z",
            new_entities=[ent(4, "Bobby")],
            new_edges=[edge(3, 4, 3, "works_at", artifact_id=1)],
            edge_updates=[EdgeUpdate(2, expired_at="2024-02-01T00:00:00Z")],
            entity_links=[(4, 1)],
            edge_links=[(3, 1)],
            entity_unlinks=[(2, 1), (2, 99)],  # a link that is not there: nothing to remove
        ),
    )
    assert store.entity_artifacts(A, 2) == []
    assert store.entity_artifacts(A, 4) == [1]
    assert store.entity_artifacts(A, 1) == [1]  # the others' links stay
    assert store.edge_artifacts(A, 3) == [1]
    old = store.get_edges(A, [2])[2]
    assert old.expired_at == "2024-02-01T00:00:00Z" and old.invalid_at is None
    # The original's claim was freed, the copy's taken.
    assert store.claim_facts(A, "again", {"2#works_at#3": 9}) == {"2#works_at#3": 9}
    assert store.claim_facts(A, "again", {"4#works_at#3": 10}) == {"4#works_at#3": 3}
    ds = store.get_dataset(A)
    assert ds is not None and (ds.entities, ds.edges) == (4, 3)


def test_a_failed_commit_removes_no_link(store: Any) -> None:  # noqa: F811
    seed(store, A)
    gone = GraphWrite(
        txn="t",
        now="2024-02-01T00:00:00Z",
        edge_updates=[EdgeUpdate(77, expired_at="2024-02-01T00:00:00Z")],  # no edge 77
        entity_unlinks=[(2, 1)],
    )
    with pytest.raises(UpstreamError):
        store.commit(A, gone)
    assert store.entity_artifacts(A, 2) == [1]
