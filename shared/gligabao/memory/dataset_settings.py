"""A dataset's settings (issue 44), GET and PUT
/v1/gb/datasets/{name}/settings: ``summaries`` (its entity summaries on or
off; absent: the server's GB_SUMMARIES) and ``text_ttl_days`` (a text
remembered into it is forgotten by the retention sweep that many days after
its remember, unless the remember gives its own ``expires_at``).

Kept with the notes store's options (the SQLite ``note_options`` table, the
DynamoDB links row ``O#`` of the dataset's partition), where the CLI
``gligabao summaries`` writes ``summaries``: one place, one read per
remember. ``check`` reads the whole body before anything is written, so a
400 stores nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .. import clock
from ..errors import BadRequest, NotFound
from ..graph.port import GraphStore
from ..models import DatasetKey
from ..notes.port import NotesStore

FIELDS = ("summaries", "text_ttl_days")
MAX_TTL_DAYS = 36500  # a hundred years: beyond that, keep the text (no TTL)


def check(body: Any) -> dict[str, Any]:
    """The settings as stored (a field absent or null is not stored)."""
    if not isinstance(body, dict):
        raise BadRequest("the settings must be a JSON object")
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise BadRequest(f"unknown field {unknown[0]!r} (known: {', '.join(FIELDS)})")
    out: dict[str, Any] = {}
    summaries = body.get("summaries")
    if summaries is not None:
        if not isinstance(summaries, bool):
            raise BadRequest("summaries must be true or false")
        out["summaries"] = summaries
    ttl = body.get("text_ttl_days")
    if ttl is not None:
        # JSON Schema's integer takes 7.0 too; bool is an int in Python, not a number of days.
        if isinstance(ttl, float) and ttl.is_integer():
            ttl = int(ttl)
        if isinstance(ttl, bool) or not isinstance(ttl, int) or not 1 <= ttl <= MAX_TTL_DAYS:
            raise BadRequest(f"text_ttl_days must be an integer from 1 to {MAX_TTL_DAYS}, or null")
        out["text_ttl_days"] = ttl
    return out


class DatasetSettings:
    def __init__(self, graph: GraphStore, notes: NotesStore, summaries_default: bool) -> None:
        self.graph = graph
        self.notes = notes
        self.summaries_default = summaries_default

    def _exists(self, key: DatasetKey) -> None:
        if self.graph.get_dataset(key) is None:
            raise NotFound(f"dataset {key.dataset!r} does not exist")

    def _answer(self, key: DatasetKey, options: dict[str, Any]) -> dict[str, Any]:
        return {
            "dataset": key.dataset,
            "summaries": bool(options.get("summaries", self.summaries_default)),
            "text_ttl_days": options.get("text_ttl_days"),
        }

    def get(self, user_id: str, name: str) -> dict[str, Any]:
        key = DatasetKey(user_id, name)
        self._exists(key)
        return self._answer(key, self.notes.get_options(key))

    def put(self, user_id: str, name: str, body: Any) -> dict[str, Any]:
        """Replace the settings: a field left out goes back to its default.
        Other options the notes store keeps (none today) are left alone."""
        checked = check(body)
        key = DatasetKey(user_id, name)
        self._exists(key)
        options = {k: v for k, v in self.notes.get_options(key).items() if k not in FIELDS}
        options.update(checked)
        self.notes.set_options(key, options)
        return self._answer(key, options)


def ttl_expiry(notes: NotesStore, key: DatasetKey, now: str) -> str | None:
    """The expires_at a text remembered at ``now`` gets from its dataset's
    text_ttl_days (None without one)."""
    days = notes.get_options(key).get("text_ttl_days")
    if not days:
        return None
    return clock.fmt(clock.parse(now) + timedelta(days=int(days)))
