"""An entity's merges (``GET /v1/gb/entities/{id}/merges``): each text whose
names resolution filed under the entity, with the names, when, and why
("same name", "alias", "model": memory/names.py). A wrong one is undone by
the split route (``POST /v1/gb/entities/{id}/split`` with its
``artifact_id`` among the ``mentions``)."""

from __future__ import annotations

from typing import Any

from ..errors import NotFound
from ..graph.port import GraphStore
from ..models import DatasetKey


class Merges:
    def __init__(self, graph: GraphStore) -> None:
        self.graph = graph

    def run(self, key: DatasetKey, entity_id: int) -> dict[str, Any]:
        if self.graph.get_dataset(key) is None:
            raise NotFound(f"dataset {key.dataset!r} does not exist")
        entity = self.graph.get_entities(key, [entity_id]).get(entity_id)
        if entity is None:
            raise NotFound(f"entity {entity_id} does not exist")
        found = self.graph.merges(key, entity_id)
        texts = self.graph.get_artifacts(key, sorted({m.artifact_id for m in found}))
        out = []
        for m in sorted(found, key=lambda m: (m.at, m.artifact_id)):
            item = m.public()
            text = texts.get(m.artifact_id)
            item["text"] = text.text if text is not None else None
            out.append(item)
        return {"entity": entity.public(), "merges": out}
