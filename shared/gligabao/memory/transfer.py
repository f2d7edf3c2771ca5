"""A dataset as JSON lines, out of one graph store and into another: so a
local memory can move to a deployed stack and back, and a deployed one can be
backed up. Only the graph (the source of truth) travels; vectors are derived
and rebuilt on import with the target's embedder (``reindex``).

One object a line; ``row`` says which (``type`` is an entity field)::

    {"row": "dataset", "format": 1, "name": ..., "created_at": ...}
    {"row": "artifact", "id": ..., "text": ..., "created_at": ..., ...}
    {"row": "entity", "id": ..., "name": ..., "lat": ..., ...}
    {"row": "edge", "id": ..., "valid_at": ..., "invalid_at": ..., "expired_at": ..., ...}
    {"row": "link", "entity_id" or "edge_id": ..., "artifact_id": ...}

IDs are kept, so edges, links and chunk parents stay valid; an import
therefore goes into a dataset that has no rows yet.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from ..errors import BadRequest, Conflict
from ..graph.port import GraphStore, fact_triple
from ..models import Artifact, DatasetKey, Edge, Entity, GraphWrite
from ..text import normalize_name

FORMAT = 1
BATCH = 500  # rows per apply on import


def export_dataset(graph: GraphStore, key: DatasetKey) -> Iterator[dict[str, Any]]:
    """The dataset's rows, as the lines of the export (NotFound-free: an
    absent dataset exports nothing; the caller checks it first)."""
    ds = graph.get_dataset(key)
    if ds is None:
        return
    yield {"row": "dataset", "format": FORMAT, "name": ds.name, "created_at": ds.created_at}
    for a in graph.iter_artifacts(key):
        yield {"row": "artifact", **dataclasses.asdict(a)}
    entity_ids: list[int] = []
    for e in graph.iter_entities(key):
        entity_ids.append(e.id)
        yield {"row": "entity", **dataclasses.asdict(e)}
    edge_ids: list[int] = []
    for d in graph.iter_edges(key):
        edge_ids.append(d.id)
        yield {"row": "edge", **dataclasses.asdict(d)}
    for i in entity_ids:
        for a_id in graph.entity_artifacts(key, i):
            yield {"row": "link", "entity_id": i, "artifact_id": a_id}
    for i in edge_ids:
        for a_id in graph.edge_artifacts(key, i):
            yield {"row": "link", "edge_id": i, "artifact_id": a_id}


def write_lines(rows: Iterable[dict[str, Any]], out: TextIO) -> int:
    n = 0
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
        n += 1
    return n


def _build(cls: type[Any], row: dict[str, Any], line: int) -> Any:
    fields = {f.name for f in dataclasses.fields(cls)}
    try:
        return cls(**{k: v for k, v in row.items() if k in fields})
    except TypeError as exc:
        raise BadRequest(f"line {line}: {exc}") from exc


def read_lines(lines: Iterable[str]) -> GraphWrite:
    """Parse an export into one GraphWrite (new rows only)."""
    write = GraphWrite()
    seen_header = False
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise BadRequest(f"line {n}: not JSON ({exc.msg})") from exc
        kind = row.get("row") if isinstance(row, dict) else None
        if kind == "dataset":
            if row.get("format") != FORMAT:
                raise BadRequest(f"line {n}: unknown export format {row.get('format')!r}")
            seen_header = True
        elif kind == "artifact":
            write.artifacts.append(_build(Artifact, row, n))
        elif kind == "entity":
            write.new_entities.append(_build(Entity, row, n))
        elif kind == "edge":
            write.new_edges.append(_build(Edge, row, n))
        elif kind == "link":
            try:
                pair = (int(row.get("entity_id", row.get("edge_id"))), int(row["artifact_id"]))
            except (KeyError, TypeError, ValueError) as exc:
                raise BadRequest(f"line {n}: a link needs entity_id or edge_id, and artifact_id") from exc
            (write.entity_links if "entity_id" in row else write.edge_links).append(pair)
        else:
            raise BadRequest(f"line {n}: unknown row type {kind!r}")
    if not seen_header:
        raise BadRequest("not a gligabao export: no dataset line")
    return write


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    for i in range(0, len(items), BATCH):
        yield items[i : i + BATCH]


def import_dataset(graph: GraphStore, key: DatasetKey, write: GraphWrite) -> dict[str, int]:
    """Write an export into a dataset that has no rows yet, keeping its IDs.
    Rows go in batches (one ``apply`` each); the names and the open facts are
    claimed as a remember would have claimed them."""
    existing = graph.get_dataset(key)
    if existing is not None and (existing.entities or existing.edges or existing.artifacts):
        raise Conflict(f"dataset {key.dataset!r} already has rows: import into a new one")
    graph.ensure_dataset(key)
    top = (
        max((e.id for e in write.new_entities), default=0),
        max((e.id for e in write.new_edges), default=0),
        max((a.id for a in write.artifacts), default=0),
    )
    # Reserve 1..max of each kind, so that later remembers continue above.
    if graph.allocate_ids(key, *top) != (1, 1, 1):
        raise Conflict(f"dataset {key.dataset!r} has allocated IDs: import into a new one")
    for part in _chunks(write.artifacts):
        graph.apply(key, GraphWrite(artifacts=part))
    for part in _chunks(write.new_entities):
        graph.apply(key, GraphWrite(new_entities=part))
        graph.claim_names(key, {normalize_name(e.name): e.id for e in part})
    for part in _chunks(write.new_edges):
        graph.apply(key, GraphWrite(new_edges=part))
        open_facts = [e for e in part if e.expired_at is None and e.invalid_at is None]
        graph.claim_facts(
            key, {fact_triple(e.source_id, e.relation, e.target_id): e.id for e in open_facts}
        )
    for part in _chunks(write.entity_links):
        graph.apply(key, GraphWrite(entity_links=part))
    for part in _chunks(write.edge_links):
        graph.apply(key, GraphWrite(edge_links=part))
    return {
        "artifacts": len(write.artifacts),
        "entities": len(write.new_entities),
        "edges": len(write.new_edges),
        "links": len(write.entity_links) + len(write.edge_links),
    }
