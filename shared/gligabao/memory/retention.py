"""Retention: a text remembered with ``expires_at`` is forgotten then,
through the forget path (its facts and entities that nothing else supports
go, what it superseded comes back: memory/forget.py). The sweep runs on a
schedule (a Lambda on AWS: template.yaml's RetentionFunction; a thread of
`gligabao serve`, at its start and periodically).

Cost per swept text: the forget's (a few reads per linked row, one write
transaction) plus one read of the due list per ``BATCH`` texts and one
delete. ``bench/retention.py`` prints it at 100k texts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from .. import clock
from ..errors import NotFound
from ..graph.port import GraphStore
from ..models import DatasetKey
from ..notes.port import NotesStore
from ..vectors.port import VectorIndex
from .forget import Forget

log = logging.getLogger(__name__)

BATCH = 100  # due texts read at once
MAX_ROUNDS = 50  # per sweep: what is left waits for the next one


def sweep(
    graph: GraphStore,
    vectors: VectorIndex,
    now: str | None = None,
    notes: NotesStore | None = None,
    schedule: Callable[[DatasetKey], None] | None = None,
) -> dict[str, Any]:
    """Forget every text whose time has come (at most ``BATCH * MAX_ROUNDS``);
    with ``notes``, a session's summary goes with its last text."""
    at = now or clock.now_str()
    # The events a dead process left where no commit finds them (a dataset's
    # delete) go out with each sweep: on AWS it is what runs on a schedule.
    try:
        graph.deliver_waiting()
    except Exception:  # the sweep's own work goes on; the next sweep tries again
        log.warning("could not deliver the waiting events", exc_info=True)
    forget = Forget(graph, vectors, notes, schedule)
    done = {"forgotten": 0, "gone": 0, "failed": 0}
    for _ in range(MAX_ROUNDS):
        due = graph.due_expiries(at, BATCH)
        for key, artifact_id, expires_at in due:
            try:
                forget.run(key, artifact_id)
                done["forgotten"] += 1
            except NotFound:  # forgotten by hand, or its dataset deleted
                done["gone"] += 1
            except Exception:  # the next sweep tries again
                log.warning("could not forget expired text %s", artifact_id, exc_info=True)
                done["failed"] += 1
                continue
            graph.drop_expiry(key, artifact_id, expires_at)
        if len(due) < BATCH or done["failed"]:
            break
    return done
