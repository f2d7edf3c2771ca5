"""An erase is a fence (issue 46): a remember that started before an erase
(``DELETE /v1/gb/users/{id}``) or a dataset delete and commits after it
leaves no duplicate entity and no fact of the erased memory, on DynamoDB
(moto) and on SQLite (the local server).

The race, run ``RUNS`` times on each store: ``REMEMBERS`` remembers (half
extracting "Alice works at Acme", half passages only) at ``WORKERS`` at a
time, while the user is erased and the dataset deleted in turns, ``GAP_S``
apart. After each run: every live entity's normalized name is
unique, and every fact's ends are live entities of the dataset. Before the
fence, the commits of calls planned against the erased life of the dataset
left ``Alice`` and ``Acme`` two or three times each.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

from remember_helpers import works_at
from test_sqlite_server import db_path, gb_sqlite

from conftest import Harness
from gligabao.models import DatasetKey
from gligabao.text import normalize_name

__all__ = ["db_path", "gb_sqlite"]  # the SQLite server's fixtures, shared

RUNS = 20  # races per store
REMEMBERS = 16  # remembers per race, half of them extracting
WORKERS = 6  # remembers at a time
GAP_S = 0.1  # between two erases (or dataset deletes), while the remembers run
USER = "fence racer"
KEY = DatasetKey(USER, "main")


def _remember(gb: Harness, i: int) -> int:
    body: dict[str, Any] = {"user_id": USER, "text": f"Alice works at Acme, note {i}."}
    if i % 2:
        body["extract"] = False
    return gb.client.post("/v1/gb/remember", body).status


def _erase(gb: Harness, stop: threading.Event, statuses: list[int]) -> None:
    """The user erased and the dataset deleted, in turns, ``GAP_S`` apart,
    until the remembers are done."""
    user = quote(USER, safe="")
    while not stop.wait(GAP_S):
        if len(statuses) % 2 == 0:
            r = gb.client.delete(f"/v1/gb/users/{user}")
        else:
            r = gb.client.delete(f"/v1/gb/datasets/main?user_id={user}")
        statuses.append(r.status)


def _faults(gb: Harness) -> tuple[int, int]:
    """(duplicate live entities by normalized name, facts whose ends are not
    live entities of the dataset) as the race left them."""
    entities = list(gb.graph.iter_entities(KEY))
    by_name = Counter(normalize_name(e.name) for e in entities)
    duplicates = sum(n - 1 for n in by_name.values())
    ids = {e.id for e in entities}
    dangling = sum(
        1 for e in gb.graph.iter_edges(KEY) if e.source_id not in ids or e.target_id not in ids
    )
    return duplicates, dangling


def _race(gb: Harness) -> dict[str, Any]:
    stop, erased = threading.Event(), []
    eraser = threading.Thread(target=_erase, args=(gb, stop, erased))
    with ThreadPoolExecutor(WORKERS) as pool:
        eraser.start()
        statuses = list(pool.map(lambda i: _remember(gb, i), range(REMEMBERS)))
    stop.set()
    eraser.join(timeout=60)
    duplicates, dangling = _faults(gb)
    return {
        "duplicates": duplicates,
        "dangling": dangling,
        "remembers": Counter(statuses),
        "erases": Counter(erased),
    }


def _runs(gb: Harness, store: str) -> None:
    gb.llm.default("extract", works_at())
    started = time.monotonic()
    outs = [_race(gb) for _ in range(RUNS)]
    figure = {
        "store": store,
        "runs": RUNS,
        "runs_with_duplicates": sum(1 for o in outs if o["duplicates"]),
        "duplicates": sum(o["duplicates"] for o in outs),
        "dangling_facts": sum(o["dangling"] for o in outs),
        "remember_statuses": dict(sum((o["remembers"] for o in outs), Counter())),
        "erase_statuses": dict(sum((o["erases"] for o in outs), Counter())),
        "seconds": round(time.monotonic() - started, 1),
    }
    shown = json.dumps(figure)  # the figure, whole, in a failure's message
    print(f"\nerase fence: {shown}")  # (and with pytest -s)
    assert figure["duplicates"] == 0 and figure["dangling_facts"] == 0, shown
    # no server error: a remember the fence stopped is a 409 (sent again, it
    # starts over) or a 404 (the dataset is gone)
    assert all(s < 500 for s in figure["remember_statuses"]), shown


def test_the_erase_race_leaves_no_duplicate_on_dynamodb(gb: Harness) -> None:
    _runs(gb, "dynamodb")


def test_the_erase_race_leaves_no_duplicate_on_sqlite(gb_sqlite: Harness) -> None:
    _runs(gb_sqlite, "sqlite")
