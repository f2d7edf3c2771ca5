"""The one route table: every route of the HTTP API, declared once.

From it come the OpenAPI document's paths (api/openapi.py), the local
server's routing (local/routing.py) and the check of template.yaml's
``AWS::ApiGatewayV2::Route`` resources (tests/infra/test_route_table.py:
each route has its two, the IAM-authorized and the JWT one, and a served
GET two more for its HEAD). Adding a route
is a line here and its handler (the handler's decorator is the one other
place that names the path: Powertools routes on it inside the function).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Auth = Literal["user", "operator", "mcp"]


@dataclass(frozen=True)
class Route:
    method: str  # GET, POST, PUT, PATCH, DELETE
    path: str  # as API Gateway and OpenAPI write it: ``{name}`` is one path segment
    function: str  # the Lambda function (handlers/<function>.py) that serves it
    auth: Auth  # "user": the caller's own data; "operator": operators only; "mcp": per tool
    summary: str
    operation: str | None = None  # the OpenAPI operationId (None: not in the document)
    served: bool = True  # False: routed to the function, which answers 405 (not in Allow)

    @property
    def key(self) -> str:
        """API Gateway's RouteKey."""
        return f"{self.method} {self.path}"

    @property
    def gateway_keys(self) -> tuple[str, ...]:
        """The RouteKeys template.yaml gives it: a served GET has its HEAD
        too (an HTTP API routes a method only to a route of that method or
        ANY; the handler answers HEAD as the GET, api/app.py)."""
        if self.method == "GET" and self.served:
            return (self.key, f"HEAD {self.path}")
        return (self.key,)


ROUTES: tuple[Route, ...] = (
    Route("POST", "/v1/gb/remember", "remember", "user", "Remember a text", "remember"),
    Route(
        "POST",
        "/v1/gb/remember/batch",
        "remember",
        "user",
        "Remember many texts, in the order of their time (queued)",
        "rememberBatch",
    ),
    Route(
        "POST",
        "/v1/gb/entities/{id}/split",
        "remember",
        "operator",
        "Split a wrongly merged entity (operators)",
        "splitEntity",
    ),
    Route("POST", "/v1/gb/query", "query", "user", "Answer a question from memory", "query"),
    Route(
        "POST",
        "/v1/gb/search",
        "query",
        "user",
        "The ranked context of a question, without the answer",
        "search",
    ),
    Route("GET", "/v1/gb/datasets", "datasets", "user", "A user's datasets", "listDatasets"),
    Route(
        "DELETE",
        "/v1/gb/datasets/{name}",
        "datasets",
        "user",
        "Delete a dataset and everything in it",
        "deleteDataset",
    ),
    Route(
        "GET",
        "/v1/gb/datasets/{name}/schema",
        "datasets",
        "user",
        "A dataset's declared entity and edge types",
        "getDatasetSchema",
    ),
    Route(
        "PUT",
        "/v1/gb/datasets/{name}/schema",
        "datasets",
        "user",
        "Declare a dataset's entity and edge types",
        "putDatasetSchema",
    ),
    Route(
        "GET",
        "/v1/gb/datasets/{name}/settings",
        "datasets",
        "user",
        "A dataset's settings: summaries on or off, the texts' time-to-live",
        "getDatasetSettings",
    ),
    Route(
        "PUT",
        "/v1/gb/datasets/{name}/settings",
        "datasets",
        "user",
        "Replace a dataset's settings",
        "putDatasetSettings",
    ),
    Route(
        "DELETE",
        "/v1/gb/users/{user_id}",
        "datasets",
        "user",
        "Erase a user: every dataset, vector, record of them, everywhere",
        "eraseUser",
    ),
    Route(
        "GET",
        "/v1/gb/inferences",
        "records",
        "user",
        "LLM and embeddings requests, newest first",
        "listInferences",
    ),
    Route(
        "GET", "/v1/gb/calls/{call_id}", "records", "user", "The trajectory of one call", "getCall"
    ),
    Route(
        "GET",
        "/v1/gb/entities",
        "browse",
        "user",
        "Entities, newest updated first, or those whose name matches q",
        "listEntities",
    ),
    Route(
        "GET",
        "/v1/gb/entities/{id}",
        "browse",
        "user",
        "An entity, its live facts, its mentions",
        "getEntity",
    ),
    Route(
        "GET",
        "/v1/gb/edges/{id}",
        "browse",
        "user",
        "A fact, its sources and its history",
        "getEdge",
    ),
    Route(
        "GET",
        "/v1/gb/artifacts",
        "browse",
        "user",
        "Remembered texts, newest first (a session's in the order said)",
        "listArtifacts",
    ),
    Route(
        "GET",
        "/v1/gb/artifacts/{id}",
        "browse",
        "user",
        "A remembered text and what was taken from it",
        "getArtifact",
    ),
    Route("DELETE", "/v1/gb/artifacts/{id}", "browse", "user", "Forget one text", "forgetArtifact"),
    Route(
        "PATCH",
        "/v1/gb/edges/{id}",
        "remember",
        "user",
        "Correct a fact: it ended (invalid_at), or it was wrong",
        "correctEdge",
    ),
    Route(
        "DELETE",
        "/v1/gb/edges/{id}",
        "browse",
        "user",
        "Forget one fact (its vector too); its texts stay",
        "forgetEdge",
    ),
    Route(
        "GET",
        "/v1/gb/conflicts",
        "browse",
        "user",
        "Live facts that cannot all hold, newest first (no LLM call)",
        "listConflicts",
    ),
    Route(
        "GET",
        "/v1/gb/entities/{id}/merges",
        "browse",
        "user",
        "The names merged into an entity: when, from which text, why",
        "getEntityMerges",
    ),
    Route("POST", "/mcp", "mcp", "mcp", "The API as MCP tools (one JSON-RPC message)"),
    # Streams and sessions, which this stateless endpoint does not serve: 405.
    Route("GET", "/mcp", "mcp", "mcp", "No SSE stream (405)", served=False),
    Route("DELETE", "/mcp", "mcp", "mcp", "No session (405)", served=False),
)


def segments_match(template: str, path: str) -> bool:
    """Whether ``path`` is an instance of ``template`` (``{x}``: one
    non-empty segment)."""
    want, parts = template.split("/"), path.split("/")
    return len(want) == len(parts) and all(
        w == p or (w.startswith("{") and w.endswith("}") and p)
        for w, p in zip(want, parts, strict=True)
    )


def methods_at(path: str, routes: tuple[Route, ...] = ROUTES) -> list[str]:
    """The methods served at ``path`` (HEAD where GET is), for ``Allow``."""
    found = {r.method for r in routes if r.served and segments_match(r.path, path)}
    if "GET" in found:
        found.add("HEAD")
    return sorted(found)
