"""MCP over streamable HTTP: the JSON-RPC server the MCP handler runs."""
