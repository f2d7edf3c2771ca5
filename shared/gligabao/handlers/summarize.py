"""The entity summaries' job (memory/summaries.py), and the ended sessions'
(memory/sessions.py), run by the worker like a queued remember: deployed by
the SQS worker, locally on the in-process queue's threads; never on a
request's path. Each job is a recorded call of type ``summarize`` whose
inferences have the stages ``summarize_entity`` and ``summarize_session``
(``GET /v1/gb/inferences`` lists them with their cost). A job that leaves
stale entities or ended sessions (it made its ``GB_SUMMARY_CALLS`` calls)
queues the next."""

from __future__ import annotations

from typing import Any

from .. import wiring
from ..api.app import call_id_set, run_call
from ..config import settings
from ..errors import GbError, is_transient
from ..memory.forget import Forget
from ..memory.options import StageOptions
from ..memory.remember import Remember, RememberInput
from ..memory.sessions import SPEAKER, SessionSummarizer
from ..models import DatasetKey
from ..queue.port import RetryLater
from ..records.meter import Meter
from ..records.monitor import logger


def session_summarizer() -> SessionSummarizer:
    """The ended sessions' summarizer: a summary is remembered as a text
    without extraction and without the notes hook (it is no one's statement
    and ends no session); a replaced one is forgotten."""
    cfg = settings()
    writer = Remember(wiring.graph_store(), wiring.vector_index(), cfg)

    def write_text(key: DatasetKey, text: str, at: str, meter: Meter) -> int:
        opts = StageOptions(cfg.llm_model)
        inp = RememberInput(
            key.user_id, key.dataset, text, None, at, opts, speaker=SPEAKER, extract=False
        )
        return int(writer.run(inp, meter)["artifacts"][0])

    def forget_text(key: DatasetKey, artifact_id: int) -> object:
        return Forget(wiring.graph_store(), wiring.vector_index()).run(key, artifact_id)

    return SessionSummarizer(
        wiring.graph_store(),
        wiring.notes_store(),
        write_text,
        forget_text,
        cfg.summary_batch,
        cfg.summary_calls,
        cfg.llm_model,
    )


def _both(key: DatasetKey, meter: Meter) -> dict[str, Any]:
    """The stale entities' summaries, then the ended sessions' (one job)."""
    done = wiring.summarizer().run(key, meter)
    sessions = session_summarizer().run(key, meter)
    return {
        **done,
        "calls": done["calls"] + sessions["calls"],
        "sessions": sessions["sessions"],
        "more": done["more"] or sessions["more"],
    }


def run_summary_job(job: dict[str, Any], *, final_attempt: bool = True) -> bool:
    key = DatasetKey(str(job["user_id"]), str(job["dataset"]))
    call_id = str(job.get("call_id") or "")
    retry_if = None if final_attempt else is_transient
    with call_id_set(call_id):
        try:
            result = run_call(
                wiring.call_services(),
                "summarize",
                key.user_id,
                key.dataset,
                None,
                lambda meter: _both(key, meter),
                retry_if=retry_if,
            )
        except GbError as exc:
            if retry_if is not None and retry_if(exc):
                raise RetryLater(exc.message) from exc
            logger.warning("summary job failed", extra={"call_id": call_id})
            return False
    if result.get("more"):
        wiring.schedule_summaries(key)
    return True
