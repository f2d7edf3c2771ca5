"""What a function's process needs under `sam local start-api`.

SAM CLI sets ``AWS_SAM_LOCAL=true`` in its containers. There, with no queue
configured (``GB_REMEMBER_QUEUE_URL`` empty, as `gligabao dev-services` writes
it), a ``Prefer: respond-async`` remember runs on a thread pool in the remember
function's own process after its ``202``, as under `gligabao serve`: the
container lives on between requests with ``--warm-containers``. Deployed (no
``AWS_SAM_LOCAL``), this does nothing and async remember needs the SQS queue.
"""

from __future__ import annotations


def compose_remember() -> bool:
    """Give the remember function an in-process queue under `sam local` when no
    queue is configured. Returns whether it did."""
    from .. import wiring

    cfg = wiring.settings()
    if not cfg.sam_local or cfg.remember_queue_url:
        return False
    from ..handlers.remember_worker import process_job
    from ..queue.local import LocalJobQueue

    wiring.use_local_queue(LocalJobQueue(process_job))
    return True
