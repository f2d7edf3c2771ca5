"""Graphs for the query tests, built directly through the graph store and the
vector index (no LLM, no remember), with exact similarities to the question.

The question's vector is the first axis ``e0`` (``ask``); an item given
``sim=s`` gets ``s*e0 + sqrt(1-s^2)*u``, ``u`` a unit vector orthogonal to
``e0`` seeded from its label, so its cosine with the question is exactly ``s``
(to float32 rounding); an item without ``sim`` gets ``u`` alone (cosine 0).
"""

from __future__ import annotations

import math
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from conftest import EMBED_DIM, Harness
from fakes.openai_server import hashed_unit_vector
from gligabao.models import Artifact, DatasetKey, Edge, Entity, GraphWrite
from gligabao.text import normalize_name
from gligabao.vectors.port import Kind, VectorItem

#: The graph tables (the records tables, calls and inferences, record every
#: call on purpose, failed ones too).
GRAPH_TABLES = ("datasets", "entities", "names", "terms", "edges", "artifacts", "links")
NO_INFORMATION = "I don't have any information in memory to answer that."
BASE_TIME = datetime(2025, 1, 1, tzinfo=UTC)


def ts(minutes: int) -> str:
    """A timestamp ``minutes`` after 2025-01-01T00:00:00Z."""
    return (BASE_TIME + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def question_vector() -> list[float]:
    return [1.0] + [0.0] * (EMBED_DIM - 1)


def orthogonal(label: str) -> list[float]:
    """A unit vector with cosine 0 to the question, seeded from ``label``."""
    v = hashed_unit_vector(label, EMBED_DIM, salt="query-tests:")
    v[0] = 0.0
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def vector(label: str, sim: float | None) -> list[float]:
    u = orthogonal(label)
    if sim is None:
        return u
    t = math.sqrt(max(0.0, 1.0 - sim * sim))
    return [sim + t * u[0]] + [t * x for x in u[1:]]


def ask(gb: Harness, question: str) -> str:
    """Make ``question`` embed to the question axis."""
    gb.emb.set_vector(question, question_vector())
    return question


@dataclass
class GraphBuilder:
    """Rows and vectors of one dataset, written by ``save`` in one apply.
    IDs start apart per table (entities 1, edges 501, artifacts 901) so that
    a mix-up of tables shows; every new entity is one minute more recently
    updated than the previous one unless told."""

    gb: Harness
    user: str = "u1"
    dataset: str = "main"
    next_entity: int = 1
    next_edge: int = 501
    next_artifact: int = 901
    write: GraphWrite = field(default_factory=GraphWrite)
    vectors: dict[Kind, list[VectorItem]] = field(default_factory=dict)
    minute: int = 0

    def __post_init__(self) -> None:
        self.gb.graph.ensure_dataset(self.key)

    @property
    def key(self) -> DatasetKey:
        return DatasetKey(self.user, self.dataset)

    def _vec(self, kind: Kind, id_: int, label: str, sim: float | None) -> None:
        self.vectors.setdefault(kind, []).append(VectorItem(id_, vector(f"{kind}:{label}", sim)))

    def entity(
        self,
        name: str,
        type_: str = "",
        description: str = "",
        *,
        sim: float | None = None,
        updated: int | None = None,
        id_: int | None = None,
    ) -> Entity:
        self.minute += 1
        eid = id_ if id_ is not None else self.next_entity
        self.next_entity = max(self.next_entity, eid + 1)
        minute = self.minute if updated is None else updated
        e = Entity(eid, name, type_, description, ts(minute), ts(minute))
        self.write.new_entities.append(e)
        self._vec("entities", eid, name, sim)
        return e

    def edge(
        self,
        source: Entity,
        target: Entity,
        relation: str,
        description: str = "",
        *,
        sim: float | None = None,
        valid_at: str | None = None,
        invalid_at: str | None = None,
        expired_at: str | None = None,
        artifact_id: int | None = None,
        id_: int | None = None,
    ) -> Edge:
        self.minute += 1
        eid = id_ if id_ is not None else self.next_edge
        self.next_edge = max(self.next_edge, eid + 1)
        e = Edge(
            eid,
            source.id,
            target.id,
            relation,
            description,
            artifact_id,
            valid_at,
            invalid_at,
            ts(self.minute),
            expired_at,
        )
        self.write.new_edges.append(e)
        self._vec("edges", eid, f"{relation}:{eid}", sim)
        return e

    def text(self, text: str) -> Artifact:
        a = Artifact(self.next_artifact, text, ts(self.minute), ts(self.minute))
        self.next_artifact += 1
        self.write.artifacts.append(a)
        return a

    def chunk(
        self,
        parent: Artifact,
        index: int,
        text: str,
        summary: str,
        *,
        text_sim: float | None = None,
        summary_sim: float | None = None,
    ) -> Artifact:
        a = Artifact(
            self.next_artifact,
            text,
            parent.created_at,
            parent.reference_time,
            parent_id=parent.id,
            index=index,
            summary=summary,
        )
        self.next_artifact += 1
        self.write.artifacts.append(a)
        self._vec("chunks", a.id, text, text_sim)
        self._vec("summaries", a.id, summary, summary_sim)
        return a

    def chunk_vector(self, id_: int, label: str, sim: float) -> None:
        """A passage vector for an artifact (a short text is its own passage)."""
        self._vec("chunks", id_, label, sim)

    def dangling(self, kind: Kind, id_: int, sim: float) -> None:
        """A vector whose row does not exist (deleted, or never landed)."""
        self._vec(kind, id_, f"dangling:{id_}", sim)

    def save(self) -> GraphBuilder:
        # The ID counters move past what was used, as remember would see them.
        self.gb.graph.allocate_ids(
            self.key, self.next_entity - 1, self.next_edge - 1, self.next_artifact - 1
        )
        for kind, items in self.vectors.items():
            self.gb.vectors.upsert(self.key, kind, items)
        # Each new entity claims its normalized name, as remember does.
        claims = {normalize_name(e.name): e.id for e in self.write.new_entities}
        txn = uuid.uuid4().hex
        owners = self.gb.graph.claim_names(self.key, txn, claims)
        assert owners == claims, "two test entities with the same normalized name"
        self.write.txn = txn
        self.gb.graph.commit(self.key, self.write)
        self.write = GraphWrite()
        self.vectors = {}
        return self


# --- what reached the LLM ------------------------------------------------------


def prompt(gb: Harness, n: int = -1) -> str:
    """The user message of the n-th query request."""
    content = gb.llm.requests_for("query")[n]["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def section(text: str, tag: str) -> str | None:
    m = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return m.group(1) if m else None


def graph_lines(text: str) -> list[str]:
    body = section(text, "graph")
    assert body is not None, text
    return [line for line in body.split("\n") if line]


def entity_ids(text: str) -> list[int]:
    return [int(m) for m in re.findall(r"^\[entity (\d+)\]", section(text, "graph") or "", re.M)]


def edge_ids(text: str) -> list[int]:
    return [int(m) for m in re.findall(r"^\[edge (\d+)\]", section(text, "graph") or "", re.M)]


def passage_blocks(text: str) -> dict[int, str]:
    body = section(text, "passages")
    if body is None:
        return {}
    out: dict[int, str] = {}
    for block in body.split("\n\n"):
        m = re.match(r"\[passage (\d+)\]", block)
        assert m, block
        out[int(m.group(1))] = block
    return out


# --- nothing written ------------------------------------------------------------


def graph_snapshot(gb: Harness) -> dict[str, list[str]]:
    return {t: sorted(map(repr, gb.scan(t))) for t in GRAPH_TABLES}


def vector_counts(gb: Harness, key: DatasetKey) -> dict[str, int]:
    return {k: gb.vectors.count(key, k) for k in ("entities", "edges", "chunks", "summaries")}


def empty_evidence() -> dict[str, Any]:
    return {"entities": [], "edges": [], "passages": []}
