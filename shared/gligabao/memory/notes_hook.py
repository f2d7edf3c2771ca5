"""What a remember leaves for the notes once its commit landed: the
preferences and instructions it stated (:mod:`.standing`), and its changed
entities marked stale with the summary job queued (:mod:`.summaries`).

After the commit, never before: what the notes say rests on committed rows.
A failure here is logged and the remember still answers (its texts and
facts are written; a summary is a convenience, and the entity's next change
marks it again)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from .. import clock
from ..errors import GbError
from ..models import Artifact, DatasetKey
from ..notes.port import NotesStore
from . import sessions, standing
from .extract import Fact
from .summaries import Schedule, changed, enabled, touched
from .window import Said

log = logging.getLogger(__name__)


class NotesHook:
    def __init__(
        self,
        notes: NotesStore,
        summaries_on: bool,
        schedule: Schedule | None,
        session_gap_s: float,  # GB_SESSION_GAP_MINUTES, its default in config.py only
    ) -> None:
        self.notes = notes
        self.summaries_on = summaries_on
        self.schedule = schedule
        self.session_gap_s = session_gap_s

    def after_session(
        self,
        key: DatasetKey,
        said: Sequence[Said],
        session_id: str | None,
        close: bool,
        schedule: bool = True,
    ) -> None:
        """The sessions the texts end (a gap, or ``close_session``), their
        summaries queued (memory/sessions.py); each session's texts in time
        order, the request's own session closed last."""
        try:
            if not enabled(self.notes, key, self.summaries_on):
                return
            last: dict[str | None, str] = {}
            for m in said:
                sid = m.session_id or session_id
                last[sid] = max(last.get(sid, m.reference_time), m.reference_time)
            ended = 0
            for sid, at in sorted(last.items(), key=lambda kv: kv[1]):
                ends = close and sid == session_id
                ended += sessions.seen(self.notes, key, sid, at, self.session_gap_s, ends)
            if ended and schedule and self.schedule is not None:
                self.schedule(key)
        except GbError as exc:
            log.warning("sessions not updated after a remember: %s", exc.message)

    def after_write(
        self,
        key: DatasetKey,
        result: dict[str, Any],
        stated: Sequence[tuple[Fact, list[float]]],
        *,
        schedule: bool = True,
    ) -> None:
        """A remember with extraction: its marked facts kept, its entities'
        summaries marked stale (and the job queued unless ``schedule`` is
        False: a batch queues it once, at its end)."""
        try:
            items = standing.from_facts(result, stated, clock.now_str())
            if items:
                self.notes.add_standing(key, items)
            exclusive = sorted({f.relation for f, _ in stated if f.exclusive})
            if exclusive:  # two live ones of a source are a conflict (conflicts.py)
                self.notes.mark_exclusive(key, exclusive)
            if enabled(self.notes, key, self.summaries_on):
                changed(self.notes, key, touched(result), self.schedule if schedule else None)
        except GbError as exc:
            log.warning("notes not updated after a remember: %s", exc.message)

    def after_passages(
        self, key: DatasetKey, artifacts: Sequence[Artifact], vectors: Sequence[list[float]]
    ) -> None:
        """A remember without extraction: the user's standing statements the
        rule recognises, kept as passages every query considers."""
        try:
            items = standing.from_texts(artifacts, vectors, clock.now_str())
            if items:
                self.notes.add_standing(key, items)
        except GbError as exc:
            log.warning("standing statements not kept: %s", exc.message)

    def flush(self, key: DatasetKey) -> None:
        """Queue the summary job (a batch's end)."""
        try:
            if self.schedule is None or not enabled(self.notes, key, self.summaries_on):
                return
            if self.notes.stale_count(key, 1) or self.notes.ended_count(key, 1):
                self.schedule(key)
        except GbError as exc:
            log.warning("summary job not queued: %s", exc.message)
