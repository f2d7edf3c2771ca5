"""The configured sinks together, and each delivery written into the call
record of the call that delivers it (a step ``deliver <target>``: a
remember's own event, or the leftovers of a call that died, which the next
commit in the dataset delivers)."""

from __future__ import annotations

import contextlib
import contextvars
import logging
import time
from collections.abc import Iterator
from typing import Any

from ..records.model import CallRecord, Step
from .model import Event
from .port import Delivery, EventSink, Undelivered

log = logging.getLogger(__name__)

_call: contextvars.ContextVar[CallRecord | None] = contextvars.ContextVar(
    "gb_event_call", default=None
)


@contextlib.contextmanager
def recording(call: CallRecord) -> Iterator[None]:
    """Deliveries made inside go into ``call``'s steps."""
    token = _call.set(call)
    try:
        yield
    finally:
        _call.reset(token)


class Publisher:
    def __init__(self, sinks: list[EventSink]) -> None:
        self.sinks = sinks

    def deliver(self, events: list[Event]) -> bool:
        """Every sink, in turn; True when each took every event. Never
        raises: the caller's write has landed, and keeps the events (its
        outbox) when this is False."""
        if not events:
            return True
        ok = True
        for sink in self.sinks:
            t0 = time.perf_counter()
            try:
                deliveries = sink.publish(events)
            except Undelivered as exc:
                deliveries, ok = exc.deliveries, False
            except Exception:  # a sink's bug must not fail a landed write
                log.exception("an event sink failed")
                deliveries, ok = [Delivery(type(sink).__name__, len(events), 1, False)], False
            _record(deliveries, (time.perf_counter() - t0) * 1000)
        return ok

    def deliver_bodies(self, bodies: list[dict[str, Any]]) -> bool:
        """``deliver`` for events as an outbox stores them (``Event.public``)."""
        return self.deliver([Event.of(b) for b in bodies])


def _record(deliveries: list[Delivery], ms: float) -> None:
    call = _call.get()
    if call is None:
        return
    for d in deliveries:
        counts = {"events": d.events, "attempts": d.attempts, "delivered": int(d.ok)}
        if d.status:
            counts["status"] = d.status
        call.steps.append(Step(f"deliver {d.target}", ms / max(1, len(deliveries)), counts))
