"""The DynamoDB graph store's reverse provenance and edge history: rows of
the links table (``tables.LinkRow``) written with a commit, read by the
browse routes and by a forget."""

from __future__ import annotations

import json
from dataclasses import asdict

from ...dynamodb.tables import LinkRow
from ...models import Correction, DatasetKey, EdgeChange, Merge

CORRECTION_PREFIX = "K#"
# The texts to forget at their expires_at, of every user: one partition of the
# links table (never a dataset's: a key has no control character at its start),
# sorted by time, so that the retention sweep reads the due ones in one Query.
EXPIRY_PK = "\x1fexpiries"


def reverse_link_sk(kind: str, row_id: int, artifact_id: int) -> str:
    """``kind`` "E" (entity) or "D" (edge): the link read from the artifact."""
    return f"A#{artifact_id:012d}#{kind}#{row_id:012d}"


def reverse_links(links: list[str]) -> list[str]:
    """The reverse rows of provenance sort keys ``E#…#…`` / ``D#…#…``."""
    out = []
    for sk in links:
        kind, row_id, artifact_id = sk.split("#")
        out.append(reverse_link_sk(kind, int(row_id), int(artifact_id)))
    return out


def change_rows(pk: str, c: EdgeChange) -> list[LinkRow]:
    data = json.dumps(asdict(c), separators=(",", ":"))
    rows = [LinkRow(pk, f"H#{c.edge_id:012d}#{c.at}#{c.artifact_id or 0:012d}", data=data)]
    if c.by_edge is not None:
        rows.append(LinkRow(pk, f"B#{c.by_edge:012d}#{c.edge_id:012d}", data=data))
    if c.artifact_id is not None:
        rows.append(LinkRow(pk, f"X#{c.artifact_id:012d}#{c.edge_id:012d}", data=data))
    return rows


def change_of(row: LinkRow) -> EdgeChange:
    return EdgeChange(**json.loads(row.data or "{}"))


def changes(pk: str, prefix: str) -> list[EdgeChange]:
    found = [change_of(r) for r in LinkRow.query(pk, LinkRow.sk.startswith(prefix)) if r.data]
    return sorted(found, key=lambda c: (c.at, c.edge_id))


def correction_sk(edge_id: int) -> str:
    """The provenance of an edge a person wrote (``Correction``)."""
    return f"{CORRECTION_PREFIX}{edge_id:012d}"


def correction_row(pk: str, c: Correction) -> LinkRow:
    return LinkRow(pk, correction_sk(c.edge_id), data=json.dumps(asdict(c), separators=(",", ":")))


def correction_of(row: LinkRow) -> Correction:
    return Correction(**json.loads(row.data or "{}"))


def merge_sk(entity_id: int, artifact_id: int) -> str:
    """The names of one text filed under a stored entity (``Merge``)."""
    return f"M#{entity_id:012d}#{artifact_id:012d}"


def merge_row(pk: str, m: Merge) -> LinkRow:
    data = json.dumps(asdict(m), separators=(",", ":"))
    return LinkRow(pk, merge_sk(m.entity_id, m.artifact_id), data=data)


def merges(pk: str, entity_id: int) -> list[Merge]:
    rows = LinkRow.query(pk, LinkRow.sk.startswith(f"M#{entity_id:012d}#"), consistent_read=True)
    out = []
    for r in rows:
        d = json.loads(r.data or "{}")
        out.append(Merge(d["entity_id"], d["artifact_id"], tuple(d["names"]), d["reason"], d["at"]))
    return out


def expiry_row(key: DatasetKey, artifact_id: int, expires_at: str) -> LinkRow:
    data = json.dumps({"user_id": key.user_id, "dataset": key.dataset})
    return LinkRow(EXPIRY_PK, f"{expires_at}#{key.pk}#{artifact_id:012d}", data=data)


def due_expiries(now: str, limit: int) -> list[tuple[DatasetKey, int, str]]:
    rows = LinkRow.query(EXPIRY_PK, LinkRow.sk <= f"{now}~", limit=limit, consistent_read=True)
    out = []
    for r in rows:
        d = json.loads(r.data or "{}")
        at, _, rest = r.sk.partition("#")
        out.append((DatasetKey(d["user_id"], d["dataset"]), int(rest.rsplit("#", 1)[1]), at))
    return out[:limit]


def drop_expiry(key: DatasetKey, artifact_id: int, expires_at: str) -> None:
    LinkRow(EXPIRY_PK, f"{expires_at}#{key.pk}#{artifact_id:012d}").delete()
