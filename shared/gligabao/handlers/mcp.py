"""POST /mcp: the API as MCP tools (remember, query, search, list_datasets, forget;
correct_fact, forget_fact, list_conflicts; get_schema, put_schema),
each calling the function its HTTP route calls, under the same authorization.

Stateless streamable HTTP: a POST is one JSON-RPC message, answered with one
JSON response (202 and no body for a notification); GET and DELETE, which
only sessions and server-sent streams use, are 405."""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response, content_types

from .. import __version__
from ..api.app import current_call_id, lambda_entry, make_app
from ..api.auth import authenticate, authorize
from ..api.fact_schemas import ConflictsOut, CorrectedOut, FactForgottenOut
from ..api.requests import (
    ConflictsRequest,
    CorrectFactRequest,
    DatasetsRequest,
    ForgetFactRequest,
    ForgetRequest,
    PutSchemaRequest,
    QueryRequest,
    RememberRequest,
    SchemaRequest,
    SearchRequest,
)
from ..api.schemas import (
    DatasetSchemaOut,
    DatasetsOut,
    ForgottenOut,
    QueryOut,
    RememberOut,
    SearchOut,
)
from ..mcp.tools import Caller, ToolSpec
from ..models import DatasetKey

if TYPE_CHECKING:
    from ..mcp.server import McpServer

app = make_app()

# Each tool imports the handler module of its HTTP route when it is first called, not at
# import: an MCP request runs one tool (initialize and tools/list none), and the four
# routes' code (their use cases, prompts and stores' ports) is some 60 ms of the
# import here (docs/performance.md).


def _remember(caller: Caller, req: RememberRequest, arguments: dict[str, Any]) -> dict[str, Any]:
    from . import remember

    authorize(caller.event, req.user_id)
    return remember.store(req, arguments, req.idempotency_key, caller.lambda_context)


def _query(caller: Caller, req: QueryRequest, arguments: dict[str, Any]) -> dict[str, Any]:
    from . import query

    return query.answer(caller.event, req)


def _search(caller: Caller, req: SearchRequest, arguments: dict[str, Any]) -> dict[str, Any]:
    from . import query

    return query.context(caller.event, req)


def _list_datasets(
    caller: Caller, req: DatasetsRequest, arguments: dict[str, Any]
) -> dict[str, Any]:
    from . import datasets

    return datasets.listing(caller.event, req.user_id)


def _forget(caller: Caller, req: ForgetRequest, arguments: dict[str, Any]) -> dict[str, Any]:
    from . import browse

    return browse.forget(caller.event, DatasetKey(req.user_id, req.dataset), req.artifact_id)


# --- issue 44: correct, forget and audit facts ---------------------------------------
def _correct_fact(
    caller: Caller, req: CorrectFactRequest, arguments: dict[str, Any]
) -> dict[str, Any]:
    from . import remember

    authorize(caller.event, req.user_id, operator_ok=True)
    return remember.correct(caller.event, req, req.edge_id)


def _forget_fact(
    caller: Caller, req: ForgetFactRequest, arguments: dict[str, Any]
) -> dict[str, Any]:
    from . import browse

    return browse.forget_fact(caller.event, DatasetKey(req.user_id, req.dataset), req.edge_id)


def _list_conflicts(
    caller: Caller, req: ConflictsRequest, arguments: dict[str, Any]
) -> dict[str, Any]:
    from .. import wiring
    from ..memory.conflicts import Conflicts

    authorize(caller.event, req.user_id, operator_ok=True)
    return Conflicts(wiring.graph_store(), wiring.notes_store()).run(
        DatasetKey(req.user_id, req.dataset), req.limit
    )


FACT_TOOLS = [
    ToolSpec(
        "correct_fact",
        "Correct one fact (the edge id that query and search evidence give): it ended "
        "(invalid_at), or it was wrong (a corrected description, or target: a stored "
        "entity's name). A new fact supersedes it; forget_fact on the new one undoes it.",
        CorrectFactRequest,
        CorrectedOut,
        _correct_fact,
        read_only=False,
    ),
    ToolSpec(
        "forget_fact",
        "Forget one fact (its edge id); the texts that state it stay. Forgetting a "
        "correction sets back the fact it replaced.",
        ForgetFactRequest,
        FactForgottenOut,
        _forget_fact,
        read_only=False,
    ),
    ToolSpec(
        "list_conflicts",
        "List live facts that cannot all hold (one person or thing with two current "
        "values of a one-at-a-time relation), newest first, with the texts that state "
        "them. Resolve one with correct_fact (invalid_at) or forget_fact.",
        ConflictsRequest,
        ConflictsOut,
        _list_conflicts,
    ),
]


# --- issue 47: a dataset's schema -----------------------------------------------------
def _get_schema(caller: Caller, req: SchemaRequest, arguments: dict[str, Any]) -> dict[str, Any]:
    from . import datasets

    authorize(caller.event, req.user_id)
    return datasets.datasets_service().schema(req.user_id, req.dataset)


def _put_schema(caller: Caller, req: PutSchemaRequest, arguments: dict[str, Any]) -> dict[str, Any]:
    from . import datasets

    authorize(caller.event, req.user_id)
    body = {k: arguments[k] for k in ("entity_types", "edge_types") if k in arguments}
    return datasets.datasets_service().put_schema(req.user_id, req.dataset, body)


SCHEMA_TOOLS = [
    ToolSpec(
        "get_schema",
        "Read a dataset's declared entity and edge types (empty when it has none): the "
        "names to give search and query as entity_types and edge_types.",
        SchemaRequest,
        DatasetSchemaOut,
        _get_schema,
    ),
    ToolSpec(
        "put_schema",
        "Declare a dataset's entity types (with attributes) and edge types (with the entity "
        "types they connect), replacing any; extraction then follows them. At most 10 of "
        "each and 10 attributes a type; a bad schema is an error and stores nothing.",
        PutSchemaRequest,
        DatasetSchemaOut,
        _put_schema,
        read_only=False,
    ),
]


TOOLS = [
    ToolSpec(
        "remember",
        "Store a text (a message, a note, a document), or chat messages (messages: "
        "[{role, content, name?, created_at?}], one extraction for them all), in long-term "
        "memory: their entities and facts are extracted into a knowledge graph, and facts "
        'they contradict are marked ended ("extract": false stores the passages only). Give '
        "idempotency_key to make a retry safe.",
        RememberRequest,
        RememberOut,
        _remember,
        read_only=False,
    ),
    ToolSpec(
        "query",
        "Answer a question from long-term memory, with the entities, facts and passages "
        "the answer relied on.",
        QueryRequest,
        QueryOut,
        _query,
    ),
    ToolSpec(
        "search",
        "Retrieve what long-term memory holds about a question, without answering it: "
        "the ranked entities, facts and passages, and their size in tokens.",
        SearchRequest,
        SearchOut,
        _search,
    ),
    ToolSpec(
        "list_datasets",
        "List the user's memory datasets with their counts of entities, facts and texts.",
        DatasetsRequest,
        DatasetsOut,
        _list_datasets,
    ),
    ToolSpec(
        "forget",
        "Forget one remembered text (the artifact_id that query and search evidence "
        "give): it, its passages, and the facts and entities no other text supports are "
        "removed; facts it had ended or replaced are set back.",
        ForgetRequest,
        ForgottenOut,
        _forget,
        read_only=False,
    ),
    *FACT_TOOLS,
    *SCHEMA_TOOLS,
]


@functools.cache
def server() -> McpServer:
    """Built by the first MCP request, not at import: the MCP SDK's models
    (``mcp_types``, some 300 pydantic models: 200-400 ms to import on this
    machine) load with it (tests/unit/test_cold_start.py)."""
    from ..mcp.server import McpServer

    return McpServer(
        "gligabao",
        __version__,
        TOOLS,
        instructions="A bi-temporal knowledge-graph memory. Each dataset (default 'main') "
        "is a separate memory of the user.",
    )


def _rpc_error_body(status: int, message: str) -> dict[str, Any]:
    """The body limit and the last-resort 500, as JSON-RPC errors."""
    from ..mcp.server import error_envelope, status_error

    return error_envelope(None, status_error(status, message))


@app.post("/mcp")
def mcp() -> Response[str]:
    event = app.current_event
    try:
        body: str | None = event.decoded_body or ""
    except ValueError:  # bytes that are not UTF-8 (or broken base64)
        body = None
    reply = server().handle(
        body,
        {name.lower(): value for name, value in (event.headers or {}).items()},
        lambda: authenticate(event),
        lambda principal: Caller(principal, event, app.lambda_context),
        current_call_id(),
    )
    if reply.body is None:
        return Response(status_code=202, body="")
    return Response(
        status_code=reply.status,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps(reply.body),
    )


def _no_stream() -> Response[str]:
    return Response(
        status_code=405,
        content_type=content_types.APPLICATION_JSON,
        body='{"error": "this MCP endpoint is stateless: POST only (no SSE stream, no session)"}',
        headers={"Allow": "POST"},
    )


app.get("/mcp")(_no_stream)
app.delete("/mcp")(_no_stream)

lambda_handler = lambda_entry(app, _rpc_error_body)
