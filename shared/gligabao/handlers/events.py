"""Telling subscribers of a change that has no outbox yet (a deleted
dataset, a batch's end): delivered once the change has landed, with the
sinks' own retries (docs/events.md says what a crash in between loses). A
remember's, a forget's and an erase's events go through the stores' outboxes."""

from __future__ import annotations

from .. import wiring
from ..events.model import Event


def tell(event: Event) -> None:
    publisher = wiring.events()
    if publisher is not None:
        publisher.deliver([event])
