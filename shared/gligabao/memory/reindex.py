"""Rebuild a dataset's vectors from the graph store, the source of truth.

Embeds the same texts remember embeds (entity names, "relation: description"
of edges, passage texts - chunks and short texts - and chunk summaries) and
writes them in batches; on a store that keeps the vectors on the rows
(VectorStore=dynamodb), only the rows that lack one (the counts say how many
were embedded)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TypeVar

from ..ai.port import Embedder
from ..graph.port import GraphStore
from ..models import Artifact, DatasetKey
from ..text import fact_text, is_turn
from ..vectors.port import Kind, VectorIndex, VectorItem
from .passage_vectors import PassageInput, embedded_text, passage_vectors

BATCH = 256
T = TypeVar("T")


def _batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


def reindex(
    graph: GraphStore, vectors: VectorIndex, embedder: Embedder, user_id: str, dataset: str
) -> dict[str, int]:
    key = DatasetKey(user_id, dataset)
    counts: dict[str, int] = {"entities": 0, "edges": 0, "chunks": 0, "summaries": 0}

    def put(
        kind: Kind,
        rows: list[tuple[int, str, float | None, float | None]],
        texts: bool = False,
        live: dict[int, bool] | None = None,
        said: dict[int, tuple[str, str | None]] | None = None,
    ) -> None:
        # A store that keeps vectors on the rows may have most of them:
        # only the rows without one are embedded (a move from OpenSearch).
        have = vectors.with_vectors(key, kind, [i for i, _, _, _ in rows])
        rows = [r for r in rows if r[0] not in have]
        if not rows:
            return
        if said is None:
            vecs = embedder.embed([t for _, t, _, _ in rows], "document").vectors
        else:  # passages: their sentences too, as remember embedded them
            vecs = passage_vectors(
                lambda texts: embedder.embed(texts, "document").vectors,
                [PassageInput(t, *said[i]) for i, t, _, _ in rows],
            )
        vectors.upsert(
            key,
            kind,
            [
                VectorItem(i, v, la, lo, t if texts else None, (live or {}).get(i))
                for (i, t, la, lo), v in zip(rows, vecs, strict=True)
            ],
        )
        counts[kind] += len(rows)

    for ents in _batches(graph.iter_entities(key), BATCH):
        put("entities", [(e.id, e.name, e.lat, e.lon) for e in ents])
    for edges in _batches(graph.iter_edges(key), BATCH):
        put(
            "edges",
            [(e.id, fact_text(e.relation, e.description), None, None) for e in edges],
            live={e.id: e.live for e in edges},
        )
    # Passages: the chunks (or windows) of long texts and the short texts
    # whole (a text with chunks is not one itself), embedded as remember
    # embedded them: a chunk after its text's speaker, a turn after the
    # session's text before it, a window that is a turn after the window
    # before it (part_inputs). Chunks follow their text (higher IDs).
    parents = {a.parent_id for a in graph.iter_artifacts(key) if a.parent_id is not None}
    last: dict[str, Artifact] = {}  # the session's latest text so far (IDs ascending)
    sibling: dict[int, Artifact] = {}  # the text's latest chunk or window so far
    for batch in _batches(graph.iter_artifacts(key), BATCH):
        rows: list[tuple[int, str, float | None, float | None]] = []
        for a in batch:
            if a.parent_id is not None:
                before = sibling.get(a.parent_id) if is_turn(a.text) else None
                rows.append((a.id, embedded_text(a.text, a.speaker, before), None, None))
                sibling[a.parent_id] = a
            elif a.id not in parents:
                before = last.get(a.session_id) if a.session_id else None
                rows.append((a.id, embedded_text(a.text, a.speaker, before), None, None))
            if a.session_id is not None and a.parent_id is None:
                last[a.session_id] = a
        if rows:
            put("chunks", rows, texts=True, said={a.id: (a.text, a.speaker) for a in batch})
        summed = [a for a in batch if a.parent_id is not None and a.summary]
        if summed:
            put("summaries", [(a.id, a.summary or "", None, None) for a in summed])
    return counts
