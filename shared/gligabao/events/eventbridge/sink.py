"""Events put on an EventBridge bus: ``source`` gligabao, ``detail-type``
the event's type, ``detail`` the event (its ``id`` for de-duplication:
EventBridge itself delivers at least once too). PutEvents takes 10 entries a
request; entries it failed are put again with backoff."""

from __future__ import annotations

import json
import logging
from typing import Any

from tenacity import Retrying, retry_if_result, stop_after_attempt

from ...backoff import half_jitter
from ..model import SOURCE, Event
from ..port import Delivery, Undelivered

log = logging.getLogger(__name__)

BATCH = 10  # PutEvents' limit of entries per request


class EventBridgeSink:
    def __init__(self, client: Any, bus_name: str, attempts: int = 4) -> None:
        self.client = client
        self.bus_name = bus_name
        self.attempts = attempts

    def publish(self, events: list[Event]) -> list[Delivery]:
        out = [
            self._put(events[i : i + BATCH], "eventbridge") for i in range(0, len(events), BATCH)
        ]
        if not all(d.ok for d in out):
            raise Undelivered(out)
        return out

    def _put(self, events: list[Event], target: str) -> Delivery:
        pending = list(events)
        tries = 0

        def put() -> list[Event]:
            nonlocal pending, tries
            tries += 1
            entries = [self._entry(e) for e in pending]
            try:
                reply = self.client.put_events(Entries=entries)
            except Exception:  # throttled, a network error: all of them again
                log.warning("PutEvents failed", exc_info=True)
                return pending
            results = reply.get("Entries", [])
            pending = [e for e, r in zip(pending, results, strict=False) if r.get("ErrorCode")]
            return pending

        left = Retrying(
            retry=retry_if_result(bool),
            stop=stop_after_attempt(self.attempts),
            wait=half_jitter(0.1, 2.0),
            retry_error_callback=lambda state: pending,
        )(put)
        return Delivery(target, len(events), tries, not left)

    def _entry(self, event: Event) -> dict[str, Any]:
        return {
            "Source": SOURCE,
            "DetailType": event.type,
            "Detail": json.dumps(event.public(), separators=(",", ":")),
            "EventBusName": self.bus_name,
        }
