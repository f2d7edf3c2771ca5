"""Builders for scripted `extract` replies and the "nothing was written"
checks shared by the remember tests."""

from __future__ import annotations

import re
import threading
from typing import Any

from conftest import Harness, Reply
from gligabao.models import DatasetKey
from gligabao.vectors.port import KINDS

RFC3339_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

#: The tables a remember writes to (the records tables, calls and
#: inferences, keep failed calls on purpose).
GRAPH_TABLES = ("datasets", "entities", "names", "terms", "edges", "artifacts", "links")

EDGE_KEYS = {
    "id",
    "source_id",
    "target_id",
    "source",
    "target",
    "relation",
    "description",
    "artifact_id",
    "valid_at",
    "invalid_at",
    "created_at",
}


def ent(
    name: str, type_: str = "", description: str = "", id_: int | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "type": type_, "description": description}
    if id_ is not None:
        out["id"] = id_
    return out


def fact(
    source: str,
    target: str,
    relation: str,
    description: str = "",
    valid_at: str | None = None,
    invalid_at: str | None = None,
) -> dict[str, Any]:
    return {
        "source": source,
        "target": target,
        "relation": relation,
        "description": description or f"{source} {relation.replace('_', ' ')} {target}.",
        "valid_at": valid_at,
        "invalid_at": invalid_at,
    }


def extraction(
    entities: list[dict[str, Any]], edges: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {"entities": entities, "edges": edges or []}


def works_at(person: str = "Alice", org: str = "Acme", **kw: Any) -> dict[str, Any]:
    """The extraction of "<person> works at <org>."."""
    return extraction(
        [ent(person, "person", kw.pop("person_desc", "")), ent(org, "organization")],
        [fact(person, org, "works_at", **kw)],
    )


def key(user: str = "u1", dataset: str = "main") -> DatasetKey:
    return DatasetKey(user, dataset)


def graph_counts(gb: Harness) -> dict[str, int]:
    return {t: len(gb.scan(t)) for t in GRAPH_TABLES}


def vector_counts(gb: Harness, user: str = "u1", dataset: str = "main") -> dict[str, int]:
    return {k: gb.vectors.count(key(user, dataset), k) for k in KINDS}


def snapshot(gb: Harness, user: str = "u1", dataset: str = "main") -> dict[str, Any]:
    """Everything a remember could have written: the graph tables, item by
    item, and the vector counts."""
    tables = {t: sorted(map(repr, gb.scan(t))) for t in GRAPH_TABLES}
    return {"tables": tables, "vectors": vector_counts(gb, user, dataset)}


def assert_nothing_written(gb: Harness, user: str = "u1", dataset: str = "main") -> None:
    counts = graph_counts(gb)
    assert counts == dict.fromkeys(GRAPH_TABLES, 0), counts
    vectors = vector_counts(gb, user, dataset)
    assert vectors == dict.fromkeys(KINDS, 0), vectors


def extract_prompt(gb: Harness, n: int = -1) -> str:
    """The user message of the n-th extract request."""
    content = gb.llm.requests_for("extract")[n]["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def invalidate_prompt(gb: Harness, n: int = -1) -> str:
    content = gb.llm.requests_for("invalidate")[n]["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def remember_all(gb: Harness, texts: list[str]) -> list[Reply]:
    """Remember the texts concurrently, released together by a barrier."""
    replies: list[Reply | None] = [None] * len(texts)
    start = threading.Barrier(len(texts))

    def one(i: int) -> None:
        start.wait()
        replies[i] = gb.client.post("/v1/gb/remember", {"user_id": "u1", "text": texts[i]})

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert all(r is not None for r in replies)
    return [r for r in replies if r is not None]
