"""Where events go: a sink delivers a list of events, or raises
``Undelivered`` once its own retries are spent (the outbox keeps them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .model import Event


@dataclass
class Delivery:
    """One delivery to one target, for the call record."""

    target: str  # "webhook:1" (the configured URL's place; never the URL), "eventbridge"
    events: int
    attempts: int
    ok: bool
    status: int = 0  # the last HTTP status (0: none, a network error)


class Undelivered(Exception):
    """A sink gave up; ``deliveries`` say what was tried."""

    def __init__(self, deliveries: list[Delivery]) -> None:
        super().__init__(f"{sum(not d.ok for d in deliveries)} deliveries failed")
        self.deliveries = deliveries


class EventSink(Protocol):
    def publish(self, events: list[Event]) -> list[Delivery]:
        """Deliver every event (retried inside); ``Undelivered`` when one
        target still failed."""
        ...
