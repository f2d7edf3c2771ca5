"""The notes store port: entity summaries, their stale marks, the user's
standing preferences and instructions, and a dataset's note settings.

Every method is scoped by a DatasetKey; each is a bounded number of round
trips (none grows with the dataset). Kept beside the graph rows, not in
them: a summary is rewritten by a background job, and the commit protocol
(which rewrites entity rows whole) never has to carry it. A dataset's delete
removes its notes with its rows.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..models import DatasetKey

KINDS = ("preference", "instruction")


@dataclass
class Summary:
    """An entity's summary: what the model wrote, the facts (edge IDs) and
    texts (artifact IDs) it rests on, and when. ``stale_since``: the
    entity's facts changed at that instant, after the summary was written
    (None: current)."""

    entity_id: int
    text: str = ""
    edges: list[int] = field(default_factory=list)
    artifacts: list[int] = field(default_factory=list)
    updated_at: str | None = None
    stale_since: str | None = None

    def public(self) -> dict[str, Any]:
        return {
            "summary": self.text or None,
            "summary_updated_at": self.updated_at,
            "summary_stale": self.stale_since is not None or not self.text,
            "summary_edges": self.edges,
            "summary_artifacts": self.artifacts,
        }


@dataclass
class Standing:
    """A preference or standing instruction of the user: a fact the
    extraction marked (``source`` "edge", ``id`` the edge) or a text a rule
    recognised (``source`` "text", ``id`` the artifact). ``vector``: its
    statement's embedding, to rank it against a question's topic."""

    id: int
    source: str  # "edge" | "text"
    kind: str  # "preference" | "instruction"
    topic: str
    text: str
    artifact_id: int | None
    created_at: str
    vector: list[float] = field(default_factory=list)
    # The vector's length (vector_norm), when the store kept it with the
    # parsed vector: a query weighs up to 50 statements, and their lengths
    # were half of that cost. None: computed when needed.
    norm: float | None = None


def vector_norm(v: Sequence[float]) -> float:
    """A vector's length, the products summed by ``map`` (as the cosines of
    memory/standing.py sum theirs): the same float wherever it is taken."""
    return math.sqrt(sum(map(operator.mul, v, v)))


@dataclass
class SessionMark:
    """A session's notes: the time of its last text, whether it is open,
    when it ended (its summary is due; None: written or not due) and the
    artifact its summary is stored as (None: none yet)."""

    session_id: str
    last_at: str | None = None
    open: bool = True
    ended_at: str | None = None
    artifact_id: int | None = None


class NotesStore(Protocol):
    def mark_stale(self, key: DatasetKey, entity_ids: list[int], now: str) -> None:
        """Mark the entities' summaries stale as of ``now`` (one write;
        batched writes of at most 25 on DynamoDB)."""

    def take_stale(self, key: DatasetKey, limit: int, now_s: float, lease_s: float) -> list[int]:
        """Up to ``limit`` stale entities no other job holds, each leased to
        the caller until ``now_s + lease_s`` (epoch seconds): two jobs never
        summarize the same entity at once. Oldest marks first."""

    def stale_count(self, key: DatasetKey, limit: int) -> int:
        """How many entities are stale, counting up to ``limit``."""

    def get_summaries(self, key: DatasetKey, ids: list[int]) -> dict[int, Summary]:
        """The summaries (and stale marks) of these entities (batch get)."""

    def put_summaries(self, key: DatasetKey, summaries: list[Summary], taken_at: str) -> None:
        """Write the summaries; each entity's stale mark is cleared unless it
        was marked again after ``taken_at`` (its facts changed while the
        model wrote: it stays stale for the next job). The lease is released."""

    def add_standing(self, key: DatasetKey, items: list[Standing]) -> None:
        """Keep these preferences and instructions (a new one with the key of
        a kept one replaces it)."""

    def standing(self, key: DatasetKey, limit: int) -> list[Standing]:
        """The newest ``limit`` preferences and instructions (one query)."""

    def get_options(self, key: DatasetKey) -> dict[str, Any]:
        """The dataset's note settings ({} when none were set)."""

    def set_options(self, key: DatasetKey, options: dict[str, Any]) -> None:
        """Replace the dataset's note settings."""

    # --- session summaries (memory/sessions.py) ---------------------------
    def open_sessions(self, key: DatasetKey, limit: int) -> dict[str, str]:
        """The dataset's open sessions and the time of each one's last text
        (at most ``limit``; a user has a few open at once)."""

    def touch_session(self, key: DatasetKey, session_id: str, at: str, open_: bool) -> None:
        """A text of the session at ``at``: its last time (the later of the
        two), open again, or closed (``open_`` False)."""

    def end_sessions(self, key: DatasetKey, session_ids: list[str], now: str) -> None:
        """Mark the sessions ended as of ``now``: their summaries are due."""

    def take_ended(self, key: DatasetKey, limit: int, now_s: float, lease_s: float) -> list[str]:
        """Up to ``limit`` ended sessions no other job holds, each leased to
        the caller until ``now_s + lease_s``."""

    def ended_count(self, key: DatasetKey, limit: int) -> int:
        """How many sessions' summaries are due, counting up to ``limit``."""

    def get_session(self, key: DatasetKey, session_id: str) -> SessionMark | None:
        """The session's notes (None: the memory never saw it)."""

    def put_session_summary(
        self, key: DatasetKey, session_id: str, artifact_id: int | None, taken_at: str
    ) -> None:
        """The session's summary is stored as ``artifact_id`` (None: kept as
        it was); its ended mark
        is cleared unless it was ended again after ``taken_at``."""

    def drop_session(self, key: DatasetKey, session_id: str) -> None:
        """Forget the session's notes (its texts are all forgotten)."""

    # --- relations the model marked exclusive (memory/conflicts.py) --------
    def mark_exclusive(self, key: DatasetKey, relations: list[str]) -> None:
        """The model marked these relations exclusive (one target at a time)."""

    def exclusive_relations(self, key: DatasetKey) -> set[str]:
        """The relations the model marked exclusive in this dataset."""
