"""Session summaries: when a session ends, the model writes its summary,
stored as a passage that ``search`` and ``query`` find like any text.

A session ends (:func:`seen`, after a remember's commit):
- by a gap: a text of the same user and dataset said more than
  ``GB_SESSION_GAP_MINUTES`` after the session's last text (its
  ``reference_time``, so a conversation loaded afterwards ends its sessions
  at the gaps it had) ends it; the session's own next text after such a gap
  ends it too, and opens it again;
- by an explicit close: ``close_session: true`` on the remember of its last
  text.
Only texts with a ``session_id`` belong to a session.

An ended session is marked (one write) and the entity summaries' job
(handlers/summarize.py; the SQS worker deployed, a thread locally) takes up
to ``GB_SUMMARY_BATCH`` ended sessions at a time, leased, and writes their
summaries with ONE ``summarize_session`` call, at most ``GB_SUMMARY_CALLS``
calls a job: never on the request path. A summary is remembered as a text
without extraction (``speaker`` :data:`SPEAKER`, no session of its own), so
it has passage vectors and words; a session summarized again (it went on
after the gap) replaces its old summary. Turned off with the entity
summaries (``GB_SUMMARIES``, or the dataset's setting).

Forgetting a session's last remaining text forgets its summary too
(:func:`after_forget`); forgetting one of several marks it ended again, so
the next job rewrites it without what was forgotten."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from .. import clock
from ..ai import prompts
from ..errors import GbError
from ..graph.port import GraphStore
from ..models import SESSION_KIND, SESSION_SPEAKER, Artifact, DatasetKey
from ..notes.port import NotesStore
from ..records.meter import Meter
from .llm_json import llm_json
from .options import StageOptions
from .summaries import LEASE_S, run_batches, stamp

log = logging.getLogger(__name__)

STAGE = "summarize_session"
KIND, SPEAKER = SESSION_KIND, SESSION_SPEAKER  # a summary's passage kind, its text's speaker
TEXTS_PER_SESSION = 40  # a session's newest texts the model reads
TEXT_CHARS = 600
MAX_TOKENS_PER_SESSION = 300
OPEN_READ = 100  # a dataset's open sessions read at once

WriteText = Callable[[DatasetKey, str, str, Meter], int]  # (key, text, time) -> artifact
ForgetText = Callable[[DatasetKey, int], object]


def seen(
    notes: NotesStore,
    key: DatasetKey,
    session_id: str | None,
    at: str,
    gap_s: float,
    close: bool,
) -> int:
    """A text at ``at`` (of ``session_id``, or of none): the open sessions
    whose last text is more than ``gap_s`` before it end, and the text's own
    session ends when ``close``. The number of sessions ended."""
    when = clock.parse(at)
    ended = [
        sid
        for sid, last in notes.open_sessions(key, OPEN_READ).items()
        if last and (when - clock.parse(last)).total_seconds() > gap_s
    ]
    if ended:
        notes.end_sessions(key, ended, stamp())
    if session_id is not None:
        notes.touch_session(key, session_id, at, open_=not close)
        if close:
            notes.end_sessions(key, [session_id], stamp())
            ended.append(session_id)
    return len(set(ended))


def after_forget(
    notes: NotesStore,
    graph: GraphStore,
    key: DatasetKey,
    forgotten: Artifact,
    forget_text: ForgetText,
    schedule: Callable[[DatasetKey], None] | None = None,
) -> None:
    """A text was forgotten: its session's summary goes with the session's
    last text, and is due again (the job queued) while other texts remain."""
    sid = forgotten.session_id
    if sid is None or forgotten.speaker == SPEAKER:
        return
    mark = notes.get_session(key, sid)
    if mark is None:
        return
    if graph.session_texts(key, sid, 1):
        if mark.artifact_id is not None:
            notes.end_sessions(key, [sid], stamp())
            if schedule is not None:
                schedule(key)
        return
    if mark.artifact_id is not None:
        try:
            forget_text(key, mark.artifact_id)
        except GbError as exc:  # forgotten by hand already
            log.info("session summary %s not forgotten: %s", mark.artifact_id, exc.message)
    notes.drop_session(key, sid)


class SessionSummarizer:
    def __init__(
        self,
        graph: GraphStore,
        notes: NotesStore,
        write_text: WriteText,
        forget_text: ForgetText,
        batch: int,
        calls: int,
        default_model: str,
    ) -> None:
        self.graph = graph
        self.notes = notes
        self.write_text = write_text
        self.forget_text = forget_text
        self.batch = max(1, batch)
        self.calls = max(1, calls)
        self.opts = StageOptions(default_model)

    def run(self, key: DatasetKey, meter: Meter) -> dict[str, Any]:
        """Summarize ended sessions: up to ``calls`` calls of ``batch`` each.
        ``more``: ended sessions are left (the caller queues another job)."""
        calls, written, more = run_batches(
            meter,
            STAGE,
            "sessions",
            self.calls,
            lambda: self.notes.take_ended(key, self.batch, time.time(), LEASE_S),
            lambda ids, taken_at: self._one_call(key, ids, meter, taken_at),
            lambda: self.notes.ended_count(key, 1) > 0,
        )
        return {"calls": calls, "sessions": written, "more": more}

    def _one_call(self, key: DatasetKey, ids: list[str], meter: Meter, taken_at: str) -> int:
        texts = {sid: self.graph.session_texts(key, sid, TEXTS_PER_SESSION) for sid in ids}
        texts = {sid: sorted(t, key=lambda a: a.id) for sid, t in texts.items() if t}
        summaries: dict[str, str] = {}
        if texts:
            blocks = [_block(sid, t) for sid, t in sorted(texts.items())]
            data = llm_json(
                meter,
                self.opts,
                STAGE,
                prompts.SUMMARIZE_SESSION_SYSTEM,
                "\n".join(blocks),
                max_tokens=MAX_TOKENS_PER_SESSION * len(texts) + 200,
            )
            summaries = _read(data, set(texts))
        done = 0
        for sid in ids:
            text = summaries.get(sid)
            mark = self.notes.get_session(key, sid)
            if not text or mark is None:  # nothing to say (or gone): due no more
                self.notes.put_session_summary(
                    key, sid, mark.artifact_id if mark else None, taken_at
                )
                continue
            last = texts[sid][-1].reference_time
            aid = self.write_text(key, f"Summary of session {sid}: {text}", last, meter)
            if mark.artifact_id:  # went on after a gap: the new summary replaces it
                try:
                    self.forget_text(key, mark.artifact_id)
                except GbError as exc:
                    log.info("old session summary not forgotten: %s", exc.message)
            self.notes.put_session_summary(key, sid, aid, taken_at)
            done += 1
        return done


def _block(sid: str, texts: list[Artifact]) -> str:
    lines = [f'<session id="{sid}">']
    for a in texts:
        who = f"{a.speaker}: " if a.speaker else ""
        lines.append(f"[text {a.id}] ({a.reference_time}) {who}{a.text[:TEXT_CHARS]}")
    lines.append("</session>")
    return "\n".join(lines)


def _read(data: dict[str, Any], given: set[str]) -> dict[str, str]:
    """The model's summaries of the sessions it was given."""
    out: dict[str, str] = {}
    items = data.get("sessions")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        sid, text = item.get("id"), item.get("summary")
        ok = isinstance(sid, str | int) and str(sid) in given
        if ok and isinstance(text, str) and text.strip():
            out[str(sid)] = text.strip()
    return out
