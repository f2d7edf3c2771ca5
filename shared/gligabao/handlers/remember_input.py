"""A remember request as the use case's input: shared by the remember
function and the worker, which runs a queued one (its own module, so that
the worker does not import the remember function's routes)."""

from __future__ import annotations

from ..api.requests import RememberRequest
from ..api.stages import levels, models
from ..config import settings
from ..memory.options import StageOptions
from ..memory.remember import RememberInput
from ..memory.window import Said


def remember_input(req: RememberRequest, call_id: str, reference_time: str) -> RememberInput:
    cfg = settings()
    options = StageOptions(
        cfg.llm_model,
        levels(req.reasoning, "extract"),
        models(req.models),
    )
    # A message's time: its own, else the request's (reference_time, else now).
    messages = (
        [Said(m.content, m.speaker, m.created_at or reference_time) for m in req.messages]
        if req.messages is not None
        else None
    )
    return RememberInput(
        user_id=req.user_id,
        dataset=req.dataset,
        text=req.text or "",
        session_id=req.session_id,
        reference_time=reference_time,
        options=options,
        call_id=call_id,
        speaker=req.speaker,
        messages=messages,
        extract=req.extract,
        expires_at=req.expires_at,
        close_session=req.close_session,
    )
