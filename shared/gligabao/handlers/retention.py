"""The retention sweep, run by a schedule (template.yaml's RetentionFunction,
an EventBridge rule): the texts whose ``expires_at`` has come are forgotten
through the forget path (memory/retention.py). No HTTP route."""

from __future__ import annotations

import logging
from typing import Any

from .. import wiring

log = logging.getLogger(__name__)


def lambda_handler(event: Any, context: Any) -> dict[str, Any]:
    from ..memory.retention import sweep

    done = sweep(
        wiring.graph_store(),
        wiring.vector_index(),
        notes=wiring.notes_store(),
        schedule=wiring.schedule_summaries,
    )
    log.info("retention sweep: %s", done)
    return done
