"""The DynamoDB connection every table model shares: one botocore client per
(region, endpoint), and the count of the requests this process sent."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from pynamodb.connection.table import TableConnection
from pynamodb.models import Model


class RequestCounter:
    """Counts the DynamoDB requests this process sent (every try of every
    call, batch pages and retries of unprocessed items included), by operation.
    Process-wide: all stores share the pynamodb connections."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_operation: Counter[str] = Counter()

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self.by_operation.values())

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.by_operation)

    def reset(self) -> None:
        with self._lock:
            self.by_operation.clear()

    def _hook(self, model: Any = None, **kwargs: Any) -> None:
        # botocore "before-call.dynamodb.<Operation>": model is the OperationModel.
        name = getattr(model, "name", "unknown")
        with self._lock:
            self.by_operation[name] += 1


REQUESTS = RequestCounter()


# One botocore client per (region, endpoint), shared by every table: pynamodb
# would build one per model (a session and a service model load each, which
# is most of a cold start with ten tables).
_clients: dict[tuple[str | None, str | None], Any] = {}
_clients_lock = threading.Lock()


def drop_clients() -> None:
    """Forget the shared clients (the tables were pointed elsewhere)."""
    with _clients_lock:
        _clients.clear()


class SharedClientModel(Model):
    """Shares one botocore client between the models and counts requests."""

    @classmethod
    def _get_connection(cls) -> TableConnection:
        conn = super()._get_connection()
        inner: Any = conn.connection
        if not getattr(inner, "_gb_shared", False):
            with _clients_lock:
                key = (inner.region, inner.host)
                client = _clients.get(key)
                if client is None:
                    client = inner.client  # built by pynamodb, with its config
                    client.meta.events.register("before-call.dynamodb", REQUESTS._hook)
                    _clients[key] = client
                inner._client = client
                inner._gb_shared = True
        return conn


def shared_client(model: type[SharedClientModel]) -> Any:
    """The botocore client the table models share, for code that calls
    DynamoDB without a model (Powertools' idempotency layer)."""
    return model._get_connection().connection.client
