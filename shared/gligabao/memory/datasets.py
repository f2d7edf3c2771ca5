"""Datasets: list them with their counts, delete one with everything in it,
read and replace its schema (``schema.py``)."""

from __future__ import annotations

from typing import Any

from ..errors import NotFound
from ..events.model import dataset_deleted
from ..graph.port import GraphStore
from ..models import DatasetKey
from ..records.port import RecordStore
from ..vectors.port import VectorIndex
from . import schema


class Datasets:
    def __init__(self, graph: GraphStore, vectors: VectorIndex, records: RecordStore) -> None:
        self.graph = graph
        self.vectors = vectors
        self.records = records

    def list(self, user_id: str) -> dict[str, Any]:
        return {
            "datasets": [
                {
                    "name": d.name,
                    "created_at": d.created_at,
                    "entities": d.entities,
                    "edges": d.edges,
                    "artifacts": d.artifacts,
                }
                for d in self.graph.list_datasets(user_id)
            ]
        }

    def delete(self, user_id: str, name: str) -> None:
        key = DatasetKey(user_id, name)
        if self.graph.get_dataset(key) is None:
            raise NotFound(f"dataset {name!r} does not exist")
        # Vectors first: if the rows went first and this failed, the vectors
        # would stay behind with nothing to find them by. Vectors kept on the
        # rows (``inline``) go with them.
        if not self.vectors.inline:
            self.vectors.delete_dataset(key)
        self.records.delete_dataset(user_id, name)
        # its event is written with the delete (the store's outbox), delivered after it
        self.graph.delete_dataset(key, [dataset_deleted(user_id, name).public()])

    def schema(self, user_id: str, name: str) -> dict[str, Any]:
        """The dataset's schema (empty types when it has none); 404 without the dataset."""
        key = DatasetKey(user_id, name)
        if self.graph.get_dataset(key) is None:
            raise NotFound(f"dataset {name!r} does not exist")
        return {"dataset": name, **(self.graph.get_schema(key) or schema.empty())}

    def put_schema(self, user_id: str, name: str, body: Any) -> dict[str, Any]:
        """Check the whole schema first (a 400 stores nothing), then create
        the dataset if it is new and store the schema, replacing any."""
        checked = schema.check(body)
        key = DatasetKey(user_id, name)
        self.graph.ensure_dataset(key)
        self.graph.put_schema(key, checked)
        return {"dataset": name, **checked}
