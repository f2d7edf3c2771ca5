"""VectorStore=dynamodb, the write side: the vectors go onto the new rows of
a commit (so a row and its vector land, and become visible, together), the
passages' postings go with them, and the passages' words are counted once
the commit has landed (vectors/dynamodb/words.py has the rows' format).

An updated entity or edge keeps its vector: the commit's full put of the row
copies it from the row as read."""

from __future__ import annotations

from typing import Any

from pynamodb.models import Model

from ...dynamodb.tables import ArtifactRow, EdgeRow, EntityRow, TermRow
from ...models import VectorItem
from ...vectors.dynamodb import words

count_words = words.count_words


def inline_vectors(
    pk: str, rows: list[Model], vectors: dict[str, list[VectorItem]], now: float
) -> list[TermRow]:
    """Set the vectors of ``write.vectors`` on the new rows (in place);
    returns the postings of the passages (chunks with a text)."""
    by_kind = {kind: {i.id: i for i in items} for kind, items in vectors.items()}
    postings: list[TermRow] = []
    for row in rows:
        rid = int(getattr(row, "id", 0) or 0)
        if isinstance(row, EntityRow) and rid in by_kind.get("entities", {}):
            row.vec, row.vt = by_kind["entities"][rid].vector, now
        elif isinstance(row, EdgeRow) and rid in by_kind.get("edges", {}):
            row.vec, row.vt = by_kind["edges"][rid].vector, now
        elif isinstance(row, ArtifactRow):
            chunk = by_kind.get("chunks", {}).get(rid)
            summary = by_kind.get("summaries", {}).get(rid)
            if chunk is not None:
                row.vec, row.vt = chunk.vector, now
            if summary is not None:
                row.svec, row.vt = summary.vector, now
            if chunk is not None and chunk.text is not None:
                postings += words.posting_rows(pk, rid, chunk.text)
    return postings


def keep_vectors(row: Model, read: Any, now: float | None = None) -> Model:
    """``row`` (a full put of an updated row) with the vectors of ``read``,
    the row as it was read; ``now``: mark them as written now."""
    for attr in ("vec", "svec"):
        value = getattr(read, attr, None)
        if value is not None:
            setattr(row, attr, value)
    if getattr(read, "vt", None) is not None:
        row.vt = now if now is not None else read.vt  # type: ignore[attr-defined]
    return row
