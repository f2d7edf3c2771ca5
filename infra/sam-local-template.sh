#!/usr/bin/env bash
# The template as `sam local` should run it: template.yaml with the clients layer (the
# anthropic and openai SDKs, opensearch-py) attached to every function unconditionally.
# The deployed template attaches it with a Fn::If in the Globals' Layers, which SAM CLI's
# emulator does not resolve (aws/aws-sam-cli#7509), and `gligabao dev-services` runs the
# functions on OpenSearch and, unless told otherwise, the Anthropic and OpenAI providers,
# which need it. With --x86_64, the architectures are switched too (an x86_64 machine
# without arm64 emulation). The copy is written beside template.yaml, since the CodeUri and
# ContentUri paths are relative to it.
#
# Usage: bash infra/sam-local-template.sh [--x86_64] [OUT]   (OUT: .sam-local.yaml)
set -euo pipefail
cd "$(dirname "$0")/.."
ARCH=()
if [[ "${1:-}" == "--x86_64" ]]; then
    ARCH=(-e 's/Architectures: \[arm64\]/Architectures: [x86_64]/'
          -e 's/CompatibleArchitectures: \[arm64\]/CompatibleArchitectures: [x86_64]/'
          -e 's/BuildArchitecture: arm64/BuildArchitecture: x86_64/')
    shift
fi
OUT=${1:-.sam-local.yaml}
# The API's integrations call each function's alias (`live`, for SnapStart) on AWS; SAM
# CLI's emulator maps an integration to a function only by the function's ARN.
sed "${ARCH[@]}" \
    -e 's/- !If \[NeedsClientsLayer, !Ref ClientsLayer, !Ref AWS::NoValue\]/- !Ref ClientsLayer/' \
    -e 's/IntegrationUri: !Ref \([A-Za-z]*Function\)\.Alias/IntegrationUri: !GetAtt \1.Arn/' \
    -e '/^    Condition: NeedsClientsLayer$/d' \
    template.yaml >"$OUT"
die() { echo "sam-local-template: $*" >&2; rm -f "$OUT"; exit 1; }
if ((${#ARCH[@]})) && grep -q arm64 "$OUT"; then die "arm64 left in the x86_64 copy"; fi
if grep -q 'NeedsClientsLayer,' "$OUT"; then die "the clients layer is still conditional"; fi
grep -q -- '- !Ref ClientsLayer' "$OUT" || die "the copy attaches no clients layer"
if grep -q 'IntegrationUri: !Ref .*\.Alias' "$OUT"; then die "an integration still calls an alias"; fi
echo "$OUT"
