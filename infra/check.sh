#!/usr/bin/env bash
# Infrastructure checks, no AWS account, no network to AWS, no Docker:
#   1. cfn-lint template.yaml (and with SnapStart=on and off)
#   2. sam validate --lint
#   3. sam build (no container: the core layer is built by layers/core/Makefile,
#      which downloads the Lambda platform's wheels with pip)
#   4. tests/infra (template vs. table definitions, routes, handler paths)
# Prints how long each step takes. aws-sam-cli lives in its own venv (.venv-sam/,
# created on first use): its pins (boto3, pydantic, click) conflict with the
# project's .venv.
#
# Usage: bash infra/check.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT=$(pwd)
VENV_PY="$ROOT/.venv/bin/python"
SAM_VENV="$ROOT/.venv-sam"
SAM="$SAM_VENV/bin/sam"
BUILD=1
[[ "${1:-}" == "--no-build" ]] && BUILD=0

# No credentials are needed; dummy ones keep any SDK call from looking further.
export AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}"
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-testing}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-testing}"
export SAM_CLI_TELEMETRY=0
export SAM_CLI_CONTEXT_TRACE=0

declare -a REPORT=()
step() {
    local name=$1
    shift
    local t0 t1
    t0=$(date +%s.%N)
    echo "== $name"
    "$@"
    t1=$(date +%s.%N)
    REPORT+=("$(awk -v n="$name" -v a="$t0" -v b="$t1" 'BEGIN{printf "%-28s %7.1f s", n, b-a}')")
}

ensure_sam() {
    if [[ ! -x "$SAM" ]]; then
        python3 -m venv "$SAM_VENV"
        "$SAM_VENV/bin/pip" install --quiet --disable-pip-version-check aws-sam-cli
    fi
    "$SAM" --version
}

step "cfn-lint" "$ROOT/.venv/bin/cfn-lint" template.yaml
# The SnapStart parameter changes the functions' properties: linted with each value.
for snapstart in on off; do
    step "cfn-lint SnapStart=$snapstart" "$ROOT/.venv/bin/cfn-lint" template.yaml --parameters SnapStart=$snapstart
done
step "aws-sam-cli (venv)" ensure_sam
step "sam validate --lint" "$SAM" validate --lint --template-file template.yaml
if [[ $BUILD == 1 ]]; then
    step "sam build" "$SAM" build --template-file template.yaml
fi
# The checkout's code, not whatever gligabao the venv has installed.
step "pytest tests/infra" env PYTHONPATH="$ROOT/shared" "$VENV_PY" -m pytest -q tests/infra

echo
echo "step                          time"
printf '%s\n' "${REPORT[@]}"
