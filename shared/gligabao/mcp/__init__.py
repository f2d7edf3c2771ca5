"""MCP over streamable HTTP: the JSON-RPC server the MCP handler runs, and the protocol versions it speaks."""
