"""The rows of the graph, as the use cases see them (no storage types here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class DatasetKey:
    user_id: str
    dataset: str

    @property
    def pk(self) -> str:
        # user_id has no control characters and dataset is [A-Za-z0-9._-], so
        # the unit separator cannot occur in either: the key is unambiguous.
        return f"{self.user_id}\x1f{self.dataset}"


@dataclass
class Dataset:
    name: str
    created_at: str
    entities: int = 0
    edges: int = 0
    artifacts: int = 0


@dataclass
class Entity:
    id: int
    name: str
    type: str = ""
    description: str = ""
    created_at: str = ""
    updated_at: str = ""
    lat: float | None = None
    lon: float | None = None

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "type": self.type}
        if self.description:
            out["description"] = self.description
        if self.lat is not None and self.lon is not None:
            out["lat"] = self.lat
            out["lon"] = self.lon
        return out


@dataclass
class Edge:
    id: int
    source_id: int
    target_id: int
    relation: str
    description: str = ""
    artifact_id: int | None = None
    valid_at: str | None = None
    invalid_at: str | None = None
    created_at: str = ""
    expired_at: str | None = None

    @property
    def live(self) -> bool:
        return self.expired_at is None

    def public(self, names: dict[int, str]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "source_id": self.source_id,
            "target_id": self.target_id,
            "source": names.get(self.source_id, ""),
            "target": names.get(self.target_id, ""),
            "relation": self.relation,
        }
        if self.description:
            out["description"] = self.description
        if self.artifact_id is not None:
            out["artifact_id"] = self.artifact_id
        out["valid_at"] = self.valid_at
        out["invalid_at"] = self.invalid_at
        if self.created_at:
            out["created_at"] = self.created_at
        if self.expired_at:
            out["expired_at"] = self.expired_at
        return out


@dataclass
class Artifact:
    id: int
    text: str
    created_at: str
    reference_time: str
    session_id: str | None = None
    parent_id: int | None = None
    index: int | None = None
    call_id: str | None = None
    summary: str | None = None  # chunks only: the summarize stage's text


@dataclass
class KeywordHit:
    """One entity's entry in the keyword index for one term."""

    entity_id: int
    term: str
    in_name: bool
    in_description: bool
    norm_name: str
    updated_at: str


@dataclass
class GraphWrite:
    """Everything one `remember` writes to the graph store, applied at once at
    the end so that a failure before it leaves nothing behind."""

    artifacts: list[Artifact] = field(default_factory=list)
    new_entities: list[Entity] = field(default_factory=list)
    updated_entities: list[tuple[Entity, Entity]] = field(default_factory=list)  # (old, new)
    new_edges: list[Edge] = field(default_factory=list)
    updated_edges: list[tuple[Edge, Edge]] = field(default_factory=list)  # (old, new)
    entity_links: list[tuple[int, int]] = field(default_factory=list)  # (entity, artifact)
    edge_links: list[tuple[int, int]] = field(default_factory=list)  # (edge, artifact)
