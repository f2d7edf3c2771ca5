"""`gligabao serve`'s retention sweep: at the start and then every
``GB_RETENTION_SWEEP_SECONDS`` (default 300; 0: never), on a thread of its
own, the texts whose ``expires_at`` has come are forgotten
(memory/retention.py; on AWS a scheduled Lambda runs the same)."""

from __future__ import annotations

import logging
import os
import threading

log = logging.getLogger(__name__)
DEFAULT_PERIOD_S = 300.0


class Sweeper:
    def __init__(self, period_s: float | None = None) -> None:
        env = os.environ.get("GB_RETENTION_SWEEP_SECONDS")
        self.period_s = period_s if period_s is not None else float(env or DEFAULT_PERIOD_S)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="retention", daemon=True)

    def start(self) -> None:
        if self.period_s > 0:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def _run(self) -> None:
        from .. import wiring
        from ..memory.retention import sweep

        while not self._stop.is_set():
            try:
                done = sweep(
                    wiring.graph_store(),
                    wiring.vector_index(),
                    notes=wiring.notes_store(),
                    schedule=wiring.schedule_summaries,
                )
                if done["forgotten"]:
                    log.info("retention sweep: %s", done)
            except Exception:  # the next round tries again
                log.warning("retention sweep failed", exc_info=True)
            self._stop.wait(self.period_s)
