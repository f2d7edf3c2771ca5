#!/usr/bin/env bash
# The TypeScript client's CI: install the locked dependencies, check that the
# types generated from the OpenAPI document are current, build, run the tests
# (node's own runner, against test/harness.py: the Python fakes and a real
# `gligabao serve`, run with $GB_PYTHON, else the repository's .venv).
set -euo pipefail
cd "$(dirname "$0")"

major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "clients/typescript needs Node 20 or newer (found $(node --version))" >&2
  exit 1
fi

npm ci --no-audit --no-fund

# Generated types: regenerate, compare with the committed file.
committed=$(mktemp)
trap 'rm -f "$committed"' EXIT
cp src/openapi.ts "$committed"
npm run --silent generate >/dev/null 2>&1
if ! cmp -s "$committed" src/openapi.ts; then
  diff -u "$committed" src/openapi.ts | head -40 >&2 || true
  echo "src/openapi.ts is not current: run 'npm run generate' in clients/typescript and commit it" >&2
  exit 1
fi

npm test
