"""Retention, on both stores (DynamoDB on moto, and the local server's SQLite
file): a text remembered with ``expires_at`` is forgotten by the sweep once
its time has come, through the forget path: what it superseded is live
again; a sweep before its time, or of a text forgotten by hand, does nothing."""

from __future__ import annotations

import pytest
from remember_helpers import ent, extraction, fact
from test_sqlite_server import db_path, gb_sqlite  # noqa: F401  (the SQLite fixture)

from conftest import Harness
from gligabao.models import DatasetKey

KEY = DatasetKey("u1", "main")
LATER = "2030-01-01T00:00:00Z"


@pytest.fixture(params=["dynamodb", "sqlite"])
def mem(request: pytest.FixtureRequest) -> Harness:
    harness: Harness = request.getfixturevalue("gb" if request.param == "dynamodb" else "gb_sqlite")
    return harness


def _sweep(at: str) -> dict[str, int]:
    from gligabao import wiring
    from gligabao.memory.retention import sweep

    return sweep(wiring.graph_store(), wiring.vector_index(), at)


def _moved(mem: Harness) -> None:
    """Alice works at Acme (edge 1, text 1); "moved to Globex" (text 2,
    expiring LATER) supersedes it."""
    for text, org, extra in (("Alice works at Acme.", "Acme", {}), ("Alice moved.", "Globex", {})):
        mem.llm.script(
            "extract",
            extraction(
                [ent("Alice", "person"), ent(org, "organization")],
                [fact("Alice", org, "works_at")],
            ),
        )
        if org == "Globex":
            mem.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
            extra = {"expires_at": LATER}
        mem.remember(text, **extra)
    assert [e.id for e in mem.graph.live_edges_around(KEY, [1], 10)] == [2]


def test_an_expired_text_is_forgotten_and_what_it_superseded_is_live_again(mem: Harness) -> None:
    _moved(mem)
    assert _sweep("2029-12-31T23:59:59Z") == {"forgotten": 0, "gone": 0, "failed": 0}
    assert sorted(a.id for a in mem.graph.iter_artifacts(KEY)) == [1, 2]
    assert _sweep("2030-01-01T00:00:01Z") == {"forgotten": 1, "gone": 0, "failed": 0}
    assert sorted(a.id for a in mem.graph.iter_artifacts(KEY)) == [1]
    assert [e.id for e in mem.graph.live_edges_around(KEY, [1], 10)] == [1]
    assert _sweep("2031-01-01T00:00:00Z") == {"forgotten": 0, "gone": 0, "failed": 0}


def test_a_text_forgotten_by_hand_is_dropped_from_the_sweep(mem: Harness) -> None:
    _moved(mem)
    assert mem.client.delete("/v1/gb/artifacts/2?user_id=u1").status == 200
    got = _sweep("2031-01-01T00:00:00Z")
    assert got["forgotten"] == 0 and got["failed"] == 0
    assert _sweep("2031-01-01T00:00:00Z") == {"forgotten": 0, "gone": 0, "failed": 0}


def test_a_bad_expires_at_is_refused(mem: Harness) -> None:
    mem.remember("Alice.", extract=False, expires_at="soon", status=400)


def test_the_local_servers_sweeper_forgets_an_expired_text(
    gb_sqlite: Harness,  # noqa: F811
) -> None:
    import time

    from gligabao.local.retention import Sweeper

    gb_sqlite.remember("Gone soon.", extract=False, expires_at="2020-01-01T00:00:00Z")
    assert [a.id for a in gb_sqlite.graph.iter_artifacts(KEY)] == [1]
    sweeper = Sweeper(period_s=0.05)
    sweeper.start()
    try:
        deadline = time.monotonic() + 30
        while list(gb_sqlite.graph.iter_artifacts(KEY)):
            assert time.monotonic() < deadline, "the sweeper never forgot the text"
            time.sleep(0.05)
    finally:
        sweeper.stop()
