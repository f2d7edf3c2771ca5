"""The four indexes of the OpenSearch adapter on one node: the connection,
the index names, the stored form of a vector, and the indexes' administration
(bootstrap creates them, a writer checks that one exists, the tests drop
them). The searches (``search.py``) and the writes (``writes.py``) build on it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from typing import Any

from ...errors import VectorIndexMissing
from ...models import DatasetKey
from ..port import KINDS, Kind
from .bodies import ENGINES, TEXT_PROPERTY, default_engine, index_bodies
from .transport import BulkAction, Transport, make_client


def missing(name: str) -> str:
    return (
        f"vector index {name} does not exist: the deploy creates it (custom resource), "
        "or run `gligabao bootstrap`"
    )


def norm(vector: list[float]) -> float:
    return math.sqrt(math.fsum(x * x for x in vector))


def _unit(vector: list[float]) -> list[float]:
    n = norm(vector)
    return [float(x) / n for x in vector]


class Indexes:
    """The node and the four indexes on it; ``OpenSearchVectorIndex`` (``store.py``)
    adds the searches and the writes."""

    def __init__(
        self,
        url: str,
        *,
        dimension: int,
        service: str = "es",
        region: str = "us-east-1",
        index_prefix: str = "gb",
        engine: str | None = None,
        aws_auth: bool | None = None,
        refresh: bool = False,
        timeout_s: float = 10.0,
        max_retries: int = 4,
        backoff_s: float = 0.2,
        client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if service not in ("es", "aoss"):
            raise ValueError(f"opensearch service must be 'es' or 'aoss', not {service!r}")
        if dimension <= 0:
            raise ValueError("dimension must be positive")
        self.url = url
        self.dimension = dimension
        self.service = service
        self.serverless = service == "aoss"
        self.index_prefix = index_prefix
        self.engine = engine or default_engine(service)
        if self.engine not in ENGINES:
            raise ValueError(f"vector engine must be one of {ENGINES}, not {self.engine!r}")
        self._ready: set[Kind] = set()  # kinds whose index is known to exist
        self.refresh = refresh
        self._client = (
            client
            if client is not None
            else make_client(
                url, service=service, region=region, aws_auth=aws_auth, timeout_s=timeout_s
            )
        )
        self._transport = Transport(
            self._client, max_retries=max_retries, backoff_s=backoff_s, sleep=sleep
        )

    # -- names ----------------------------------------------------------------

    def index_name(self, kind: Kind) -> str:
        return f"{self.index_prefix}-{kind}"

    def _stored(self, vector: list[float]) -> list[float]:
        """What is written and searched: unit vectors for innerproduct."""
        return _unit(vector) if self.engine == "faiss" else [float(x) for x in vector]

    def _doc_id(self, key: DatasetKey, row_id: int) -> str:
        return f"{key.pk}:{row_id}"

    @property
    def requests(self) -> int:
        """HTTP round trips, retries included (benchmarks)."""
        return self._transport.requests

    def _bulk(self, op: str, actions: list[BulkAction]) -> None:
        self._transport.bulk(op, actions, refresh=self.refresh)

    # -- the indexes ---------------------------------------------------------------

    def index_bodies(self) -> dict[str, dict[str, Any]]:
        """Index name -> the exact body bootstrap creates it with."""
        return index_bodies(self.index_prefix, self.dimension, self.engine)

    def bootstrap(self) -> list[str]:
        """Create the four indexes if they do not exist (idempotent); returns
        the names it created."""
        from opensearchpy.exceptions import RequestError

        created: list[str] = []
        bodies = self.index_bodies()
        for kind in KINDS:
            name = self.index_name(kind)
            body = bodies[name]

            def create(name: str = name, body: dict[str, Any] = body) -> None:
                try:
                    self._client.indices.create(index=name, body=body)
                    created.append(name)
                except RequestError as e:
                    if e.error != "resource_already_exists_exception":
                        raise

            self._transport.call(f"create index {name}", create)
            self._ready.add(kind)
        # An index created before passages had their text: add the field
        # (an additive mapping change; documents written since carry it).
        chunks = self.index_name("chunks")
        self._transport.call(
            f"map text in {chunks}",
            lambda: self._client.indices.put_mapping(
                index=chunks, body={"properties": TEXT_PROPERTY}
            ),
        )
        return created

    def _require_index(self, kind: Kind) -> None:
        """Refuse to write into a missing index: a bulk write would create it
        with a dynamic mapping (a float array, not a k-NN vector)."""
        if kind in self._ready:
            return
        name = self.index_name(kind)
        if not self._transport.call(
            f"check index {name}", lambda: self._client.indices.exists(index=name)
        ):
            raise VectorIndexMissing(missing(name))
        self._ready.add(kind)

    # -- helpers for the tests ------------------------------------------------------

    def drop_indexes(self, kinds: Iterable[Kind] = KINDS) -> None:
        """Delete the indexes (test teardown)."""
        names = ",".join(self.index_name(kind) for kind in kinds)
        self._transport.call(
            "drop indexes",
            lambda: self._client.indices.delete(index=names, params={"ignore_unavailable": "true"}),
        )
