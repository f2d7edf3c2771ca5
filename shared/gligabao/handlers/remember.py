"""POST /v1/gb/remember."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from .. import clock, wiring
from ..api.app import current_call_id, json_body, json_response, lambda_entry, make_app, run_call
from ..api.auth import authorize
from ..api.idempotency import once
from ..api.requests import REMEMBER_STAGES, RememberRequest, parse_models, parse_reasoning, validate
from ..config import settings
from ..errors import BadRequest, NotConfigured
from ..memory.options import StageOptions
from ..memory.remember import RememberInput

app = make_app()


@app.post("/v1/gb/remember")
def remember() -> Response[str]:
    req = validate(RememberRequest, json_body(app))
    authorize(app.current_event, req.user_id)
    cfg = settings()
    options = StageOptions(
        cfg.llm_model,
        parse_reasoning(req.reasoning, REMEMBER_STAGES, "extract"),
        parse_models(req.models, REMEMBER_STAGES),
    )
    header_key = app.current_event.headers.get("idempotency-key")
    if header_key is not None and not header_key.strip():
        raise BadRequest("Idempotency-Key must not be empty")
    key = header_key or req.idempotency_key
    if not cfg.llm_configured:
        raise NotConfigured("LLM not configured: ANTHROPIC_API_KEY is not set")
    inp = RememberInput(
        user_id=req.user_id,
        dataset=req.dataset,
        text=req.text,
        session_id=req.session_id,
        reference_time=req.reference_time or clock.now_str(),
        options=options,
        call_id=current_call_id(),
    )

    def work() -> dict[str, object]:
        return run_call(
            "remember",
            req.user_id,
            req.dataset,
            req.session_id,
            lambda meter: wiring.remember_service().run(inp, meter),
        )

    result = once(req.user_id, key, work, app.lambda_context) if key else work()
    return json_response(200, result)


lambda_handler = lambda_entry(app)
