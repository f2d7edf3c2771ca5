"""Telling subscribers of a change that is not a remember's commit (a
forget, a deleted dataset, an erased user, a batch's end): delivered once the
change has landed, with the sinks' own retries (docs/events.md says what a
crash in between loses)."""

from __future__ import annotations

from .. import wiring
from ..events.model import Event


def tell(event: Event) -> None:
    publisher = wiring.events()
    if publisher is not None:
        publisher.deliver([event])
