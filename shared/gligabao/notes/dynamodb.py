"""The notes store on DynamoDB: rows of the links table's dataset partition
(``LinkRow``, a JSON document in ``data``), so a dataset's delete and a
user's erase take them with the rest. Sort keys: f"S#{entity:012d}" a
summary, f"Z#{entity:012d}" its stale mark, f"P#{source}#{id:012d}" a
preference or instruction, "O#" the settings; a session's: f"U#{session}" open
(``data``: its last text's time), f"W#{session}" ended (its summary due,
leased like a stale mark), f"V#{session}" its summary's artifact; f"R#{relation}"
a relation the model marked exclusive."""

from __future__ import annotations

import json
from typing import Any

from pynamodb.exceptions import PynamoDBException

from ..dynamodb.batch import batch_write, is_condition_failure, upstream
from ..dynamodb.tables import LinkRow
from ..models import DatasetKey
from .port import SessionMark, Standing, Summary

STALE, SUMMARY, STANDING, OPTIONS = "Z#", "S#", "P#", "O#"
OPEN, ENDED, SESSION, EXCLUSIVE = "U#", "W#", "V#", "R#"


def _eid(sk: str) -> int:
    return int(sk.rsplit("#", 1)[1])


class DynamoNotesStore:
    @upstream("notes store mark_stale")
    def mark_stale(self, key: DatasetKey, entity_ids: list[int], now: str) -> None:
        rows = [LinkRow(key.pk, f"{STALE}{i:012d}", data=now) for i in sorted(set(entity_ids))]
        batch_write(puts=rows)

    @upstream("notes store take_stale")
    def take_stale(self, key: DatasetKey, limit: int, now_s: float, lease_s: float) -> list[int]:
        return [_eid(sk) for sk in _take(key, STALE, limit, now_s, lease_s)]

    @upstream("notes store stale_count")
    def stale_count(self, key: DatasetKey, limit: int) -> int:
        return sum(1 for _ in LinkRow.query(key.pk, LinkRow.sk.startswith(STALE), limit=limit))

    @upstream("notes store get_summaries")
    def get_summaries(self, key: DatasetKey, ids: list[int]) -> dict[int, Summary]:
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        keys = [(key.pk, f"{p}{i:012d}") for i in wanted for p in (SUMMARY, STALE)]
        out: dict[int, Summary] = {}
        covers: dict[int, str] = {}
        for row in LinkRow.batch_get(keys):
            eid = _eid(row.sk)
            s = out.setdefault(eid, Summary(eid))
            if row.sk.startswith(STALE):
                s.stale_since = row.data
            else:
                doc = json.loads(row.data or "{}")
                s.text, s.updated_at = doc.get("text", ""), doc.get("updated_at")
                s.edges, s.artifacts = doc.get("edges", []), doc.get("artifacts", [])
                covers[eid] = doc.get("covers") or ""
        for eid, s in out.items():
            # The summary is written before its mark is cleared (a crash in
            # between leaves the mark, never a lost one); a mark no newer than
            # the job that wrote the summary is one the summary already covers.
            if s.stale_since is not None and s.stale_since <= covers.get(eid, ""):
                s.stale_since = None
        return out

    @upstream("notes store put_summaries")
    def put_summaries(self, key: DatasetKey, summaries: list[Summary], taken_at: str) -> None:
        rows = [
            LinkRow(
                key.pk,
                f"{SUMMARY}{s.entity_id:012d}",
                data=json.dumps(
                    {
                        "text": s.text,
                        "updated_at": s.updated_at,
                        "edges": s.edges,
                        "artifacts": s.artifacts,
                        "covers": taken_at,
                    }
                ),
            )
            for s in summaries
        ]
        batch_write(puts=rows)
        for s in summaries:
            # Marked again after the job took it (its facts changed while the
            # model wrote): the mark stays, for the next job.
            _clear_mark(LinkRow(key.pk, f"{STALE}{s.entity_id:012d}"), taken_at)

    @upstream("notes store add_standing")
    def add_standing(self, key: DatasetKey, items: list[Standing]) -> None:
        rows = [
            LinkRow(
                key.pk,
                f"{STANDING}{s.source}#{s.id:012d}",
                data=json.dumps(
                    {
                        "kind": s.kind,
                        "topic": s.topic,
                        "text": s.text,
                        "artifact_id": s.artifact_id,
                        "created_at": s.created_at,
                        "vector": s.vector,
                    }
                ),
            )
            for s in items
        ]
        batch_write(puts=rows)

    @upstream("notes store standing")
    def standing(self, key: DatasetKey, limit: int) -> list[Standing]:
        # Bounded: a user keeps tens of preferences, not thousands; the newest
        # ``limit`` of at most 10 x limit read.
        out: list[Standing] = []
        for row in LinkRow.query(key.pk, LinkRow.sk.startswith(STANDING), limit=10 * limit):
            _, source, rid = row.sk.split("#")
            doc = json.loads(row.data or "{}")
            out.append(
                Standing(
                    int(rid),
                    source,
                    doc.get("kind", ""),
                    doc.get("topic", ""),
                    doc.get("text", ""),
                    doc.get("artifact_id"),
                    doc.get("created_at", ""),
                    doc.get("vector") or [],
                )
            )
        out.sort(key=lambda s: (s.created_at, s.id), reverse=True)
        return out[:limit]

    @upstream("notes store get_options")
    def get_options(self, key: DatasetKey) -> dict[str, Any]:
        try:
            row = LinkRow.get(key.pk, OPTIONS)
        except LinkRow.DoesNotExist:
            return {}
        return dict(json.loads(row.data or "{}"))

    @upstream("notes store set_options")
    def set_options(self, key: DatasetKey, options: dict[str, Any]) -> None:
        LinkRow(key.pk, OPTIONS, data=json.dumps(options)).save()

    # --- sessions ---------------------------------------------------------
    @upstream("notes store open_sessions")
    def open_sessions(self, key: DatasetKey, limit: int) -> dict[str, str]:
        rows = LinkRow.query(key.pk, LinkRow.sk.startswith(OPEN), limit=limit)
        return {row.sk[len(OPEN) :]: row.data or "" for row in rows}

    @upstream("notes store touch_session")
    def touch_session(self, key: DatasetKey, session_id: str, at: str, open_: bool) -> None:
        row = LinkRow(key.pk, f"{OPEN}{session_id}", data=at)
        if not open_:
            row.delete()
            return
        try:  # the later of the two times (a text remembered out of order)
            row.save(condition=LinkRow.data.does_not_exist() | (LinkRow.data < at))
        except PynamoDBException as exc:
            if not is_condition_failure(exc):
                raise

    @upstream("notes store end_sessions")
    def end_sessions(self, key: DatasetKey, session_ids: list[str], now: str) -> None:
        ids = sorted(set(session_ids))
        batch_write(
            puts=[LinkRow(key.pk, f"{ENDED}{sid}", data=now) for sid in ids],
            deletes=[LinkRow(key.pk, f"{OPEN}{sid}") for sid in ids],
        )

    @upstream("notes store take_ended")
    def take_ended(self, key: DatasetKey, limit: int, now_s: float, lease_s: float) -> list[str]:
        return [sk[len(ENDED) :] for sk in _take(key, ENDED, limit, now_s, lease_s)]

    @upstream("notes store ended_count")
    def ended_count(self, key: DatasetKey, limit: int) -> int:
        return sum(1 for _ in LinkRow.query(key.pk, LinkRow.sk.startswith(ENDED), limit=limit))

    @upstream("notes store get_session")
    def get_session(self, key: DatasetKey, session_id: str) -> SessionMark | None:
        keys = [(key.pk, f"{p}{session_id}") for p in (OPEN, ENDED, SESSION)]
        rows = {row.sk[:2]: row for row in LinkRow.batch_get(keys)}
        if not rows:
            return None
        doc = json.loads(rows[SESSION].data or "{}") if SESSION in rows else {}
        return SessionMark(
            session_id,
            rows[OPEN].data if OPEN in rows else None,
            OPEN in rows,
            rows[ENDED].data if ENDED in rows else None,
            doc.get("artifact_id"),
        )

    @upstream("notes store put_session_summary")
    def put_session_summary(
        self, key: DatasetKey, session_id: str, artifact_id: int | None, taken_at: str
    ) -> None:
        if artifact_id is not None:
            doc = json.dumps({"artifact_id": artifact_id})
            LinkRow(key.pk, f"{SESSION}{session_id}", data=doc).save()
        _clear_mark(LinkRow(key.pk, f"{ENDED}{session_id}"), taken_at)

    @upstream("notes store drop_session")
    def drop_session(self, key: DatasetKey, session_id: str) -> None:
        batch_write(deletes=[LinkRow(key.pk, f"{p}{session_id}") for p in (OPEN, ENDED, SESSION)])

    @upstream("notes store mark_exclusive")
    def mark_exclusive(self, key: DatasetKey, relations: list[str]) -> None:
        batch_write(puts=[LinkRow(key.pk, f"{EXCLUSIVE}{r}") for r in sorted(set(relations))])

    @upstream("notes store exclusive_relations")
    def exclusive_relations(self, key: DatasetKey) -> set[str]:
        # Bounded: a dataset has tens of relation names, not thousands.
        rows = LinkRow.query(key.pk, LinkRow.sk.startswith(EXCLUSIVE), limit=1000)
        return {row.sk[len(EXCLUSIVE) :] for row in rows}


def _take(key: DatasetKey, prefix: str, limit: int, now_s: float, lease_s: float) -> list[str]:
    """Lease up to ``limit`` marks under ``prefix`` (a bounded page: twice
    what is wanted, some may be leased to another job); each taken with a
    conditional update, so two jobs never take the same one."""
    taken: list[str] = []
    for row in LinkRow.query(key.pk, LinkRow.sk.startswith(prefix), limit=2 * limit):
        if len(taken) >= limit:
            break
        if row.lease_until is not None and row.lease_until >= now_s:
            continue
        free = LinkRow.lease_until.does_not_exist() | (LinkRow.lease_until < now_s)
        try:
            row.update(
                actions=[LinkRow.lease_until.set(now_s + lease_s)],
                condition=LinkRow.sk.exists() & free,
            )
        except PynamoDBException as exc:
            if not is_condition_failure(exc):
                raise
            continue
        taken.append(row.sk)
    return taken


def _clear_mark(mark: LinkRow, taken_at: str) -> None:
    """Delete a mark unless it was set again after ``taken_at`` (then only
    its lease goes: the next job takes it). A mark already gone (its session
    dropped, its dataset deleted, while the job held it) stays gone: an
    UpdateItem on a missing row would create it, a mark due forever."""
    try:
        mark.delete(condition=LinkRow.data <= taken_at)
    except PynamoDBException as exc:
        if not is_condition_failure(exc):
            raise
        try:
            mark.update(actions=[LinkRow.lease_until.remove()], condition=LinkRow.sk.exists())
        except PynamoDBException as again:
            if not is_condition_failure(again):
                raise
