#!/usr/bin/env bash
# `sam local start-api` end to end, as a user runs it (docs/sam-local.md),
# on a machine without Docker Hub or public ECR:
#   1. Docker from Debian's packages (docker.io); dockerd started if none answers
#   2. the Lambda python3.12 base image, built locally once (debootstrap'd Debian
#      bookworm + this machine's CPython 3.12 + awslambdaric/boto3 from PyPI), tagged
#      with the name SAM CLI looks for and used with --skip-pull-image
#   3. `sam build` of an x86_64 copy of template.yaml (arm64 stays the deployed
#      architecture; emulating arm64 needs qemu and is 2-4x slower)
#   4. `gligabao dev-services up` on the docker bridge + the fake LLM servers there
#   5. `sam local start-api --warm-containers LAZY`, then a smoke run through every
#      route, printing status and latency, failing on any unexpected status
#   6. one request per other auth mode (SAM CLI emulates neither JWT nor IAM
#      authorizers: the functions get no claims / identity and must refuse)
# Everything it started is stopped by PID on exit. Kept between runs: the image
# (docker's data root) and $GB_SAM_LOCAL_CACHE (the bookworm rootfs tarball).
# Needs: root (apt-get, dockerd), .venv (pip install -e '.[local,dev]'), pyenv's
# CPython 3.12, Java and Maven (infra/opensearch.sh).
#
# Usage: bash infra/sam-local-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

SAM_VERSION=1.170.0
# The image SAM CLI 1.170 runs python3.12 x86_64 functions on.
IMAGE=public.ecr.aws/lambda/python:3.12-x86_64
BASE_IMAGE=gligabao-local/bookworm-minbase:amd64
CACHE=${GB_SAM_LOCAL_CACHE:-/var/tmp/gligabao-sam-local}
RUN=$(mktemp -d "${TMPDIR:-/tmp}/gb-sam-check.XXXXXX")
VENV="${GB_SAM_CHECK_VENV:-$ROOT/.venv}"  # the project's venv (gligabao, moto, the fakes' deps)
SAM_VENV="$ROOT/.venv-sam"
SAM="$SAM_VENV/bin/sam"
X86_TEMPLATE="$ROOT/.sam-local-x86_64.yaml"  # beside template.yaml: CodeUri paths are relative
BUILD_DIR="$ROOT/.aws-sam/build-x86_64"
DOCKER=docker
[[ -x /usr/bin/docker ]] && DOCKER=/usr/bin/docker  # Debian's client, same version as dockerd

# Local runs need no credentials; fixed dummy ones keep every SDK from looking further.
export SAM_CLI_TELEMETRY=0 SAM_CLI_CONTEXT_TRACE=0
export AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local
unset AWS_PROFILE AWS_SESSION_TOKEN

T0=$SECONDS
declare -a REPORT=()
FAILED=0
log() { echo "== [$((SECONDS - T0))s] $*"; }
timed() {  # timed NAME CMD...: run, record its duration
    local name=$1 t
    shift
    t=$(date +%s.%N)
    log "$name"
    "$@"
    REPORT+=("$(awk -v n="$name" -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{printf "%-34s %7.1f s", n, b-a}')")
}
die() { echo "sam-local-check: $*" >&2; exit 1; }
pid_of() { [[ -f $RUN/$1.pid ]] && cat "$RUN/$1.pid"; }
stop_pid() {  # stop_pid NAME [SIGNAL]: SIGNAL (TERM), then KILL after 20 s
    local pid
    pid=$(pid_of "$1") || return 0
    kill "-${2:-TERM}" "$pid" 2>/dev/null || return 0
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
    kill -KILL "$pid" 2>/dev/null || true
}
free_port() {  # free_port HOST
    "$VENV/bin/python" -c 'import socket,sys; s=socket.socket(); s.bind((sys.argv[1],0)); print(s.getsockname()[1])' "$1"
}
wait_http() {  # wait_http URL SECONDS PID_NAME
    local deadline=$((SECONDS + $2))
    while ((SECONDS < deadline)); do
        curl -s -o /dev/null --max-time 2 "$1" && return 0
        if [[ -n ${3:-} ]] && ! kill -0 "$(pid_of "$3")" 2>/dev/null; then
            tail -n 30 "$RUN/$3.log" >&2
            die "$3 exited"
        fi
        sleep 1
    done
    [[ -n ${3:-} ]] && tail -n 30 "$RUN/$3.log" >&2
    die "nothing answered on $1 within $2 s"
}

cleanup() {
    local rc=$?
    set +e
    stop_pid sam INT  # as Ctrl-C: SAM CLI then stops its containers
    if $DOCKER info >/dev/null 2>&1; then
        local ids
        ids=$($DOCKER ps -aq --filter label=sam.cli.container.type=lambda)
        [[ -n $ids ]] && $DOCKER rm -f $ids >/dev/null
        # The images SAM CLI builds per layer version (its runtime emulator over the
        # layer): rebuilt at each run anyway, removed to keep the disk use flat.
        ids=$($DOCKER images --format '{{.Repository}} {{.ID}}' | awk '$1 ~ /^samcli\/lambda-/ {print $2}' | sort -u)
        [[ -n $ids ]] && $DOCKER rmi -f $ids >/dev/null 2>&1
    fi
    if ! "$VENV/bin/gligabao" dev-services down --state-dir "$RUN/dev-services" >/dev/null 2>&1; then
        # The venv itself may be what failed: stop both by their pid files.
        [[ -f $RUN/dev-services/moto.pid ]] && kill "$(cat "$RUN/dev-services/moto.pid")" 2>/dev/null
        [[ -d $RUN/dev-services/opensearch ]] &&
            GB_OPENSEARCH_RUN_DIR="$RUN/dev-services/opensearch" bash infra/opensearch.sh stop >/dev/null 2>&1
    fi
    stop_pid fakes
    stop_pid dockerd
    rm -f "$X86_TEMPLATE"
    if ((rc != 0)); then
        echo "sam-local-check: FAILED (logs kept in $RUN)" >&2
    else
        rm -rf "$RUN"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[[ -x $VENV/bin/gligabao ]] || die "$VENV is missing: python3 -m venv .venv && .venv/bin/pip install -e '.[local,dev]'"

# ---------------------------------------------------------------- 1. docker
docker_up() {
    if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            docker.io debootstrap >"$RUN/apt.log" 2>&1 || { cat "$RUN/apt.log" >&2; die "apt-get failed"; }
    fi
    [[ -x /usr/bin/docker ]] && DOCKER=/usr/bin/docker
    if ! $DOCKER info >/dev/null 2>&1; then
        nohup dockerd >"$RUN/dockerd.log" 2>&1 &
        echo $! >"$RUN/dockerd.pid"
        for _ in $(seq 60); do $DOCKER info >/dev/null 2>&1 && break; sleep 1; done
        $DOCKER info >/dev/null 2>&1 || { tail -n 30 "$RUN/dockerd.log" >&2; die "dockerd did not start"; }
    fi
    BRIDGE=$(ip -4 -o addr show docker0 | awk '{print $4}' | cut -d/ -f1)
    [[ -n $BRIDGE ]] || die "no docker0 bridge"
}

# ---------------------------------------------------------------- 2. base image
debian_mirror() {  # the Debian mirror apt already uses (deb822 or one-line sources)
    {
        cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/{for (i = 2; i <= NF; i++) print $i}'
        cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; break}}'
    } | grep -i debian | grep -v -e security -e updates | head -n 1 || true
}

python312() {  # a CPython 3.12 install prefix to copy into the image
    local prefix
    for prefix in ${GB_PYTHON312_PREFIX:-} "$(pyenv root 2>/dev/null)"/versions/3.12.* ; do
        [[ -x $prefix/bin/python3.12 ]] && { echo "$prefix"; return 0; }
    done
    die "no CPython 3.12 (pyenv install 3.12, or GB_PYTHON312_PREFIX)"
}

base_image() {
    if $DOCKER image inspect "$IMAGE" >/dev/null 2>&1; then
        echo "   $IMAGE is cached"
        return 0
    fi
    mkdir -p "$CACHE"
    if [[ ! -s $CACHE/bookworm-minbase.tar ]]; then
        local mirror
        mirror=$(debian_mirror)
        [[ -n $mirror ]] || mirror=http://deb.debian.org/debian
        rm -rf "$CACHE/rootfs"
        timeout 900 debootstrap --variant=minbase \
            --include=ca-certificates,libssl3,libffi8,libsqlite3-0,libbz2-1.0,liblzma5,zlib1g,libexpat1,libncursesw6,libreadline8,libuuid1 \
            bookworm "$CACHE/rootfs" "$mirror" >"$RUN/debootstrap.log" 2>&1 \
            || { tail -n 30 "$RUN/debootstrap.log" >&2; die "debootstrap failed"; }
        tar -C "$CACHE/rootfs" -cf "$CACHE/bookworm-minbase.tar.tmp" .
        mv "$CACHE/bookworm-minbase.tar.tmp" "$CACHE/bookworm-minbase.tar"
        rm -rf "$CACHE/rootfs"
    fi
    $DOCKER import "$CACHE/bookworm-minbase.tar" "$BASE_IMAGE" >/dev/null

    local py ctx="$RUN/image"
    py=$(python312)
    mkdir -p "$ctx/lang"
    tar -C "$py" --exclude=lib/python3.12/test --exclude=lib/python3.12/idlelib \
        --exclude=lib/python3.12/tkinter --exclude='lib/python3.12/site-packages/*' \
        --exclude='*.a' --exclude=__pycache__ -cf - . | tar -C "$ctx/lang" -xf -
    # What the Lambda runtime has beside the function: the runtime interface client and the SDK.
    timeout 600 "$py/bin/python3.12" -m pip install -q --disable-pip-version-check \
        --only-binary=:all: --target "$ctx/runtime" awslambdaric boto3
    cat >"$ctx/bootstrap" <<'EOF'
#!/bin/sh
# Started by SAM CLI's runtime interface emulator; the handler is in _HANDLER.
export PYTHONPATH="${LAMBDA_TASK_ROOT}:/opt/python/lib/python3.12/site-packages:/opt/python:${LAMBDA_RUNTIME_DIR}"
export AWS_EXECUTION_ENV="${AWS_EXECUTION_ENV:-AWS_Lambda_python3.12}"
cd "${LAMBDA_TASK_ROOT}"
exec /var/lang/bin/python3.12 -m awslambdaric "${_HANDLER:-$AWS_LAMBDA_FUNCTION_HANDLER}"
EOF
    chmod +x "$ctx/bootstrap"
    cat >"$ctx/Dockerfile" <<EOF
FROM $BASE_IMAGE
COPY lang /var/lang
COPY runtime /var/runtime
COPY bootstrap /var/runtime/bootstrap
ENV LANG=C.UTF-8 TZ=:/etc/localtime \\
    PATH=/var/lang/bin:/usr/local/bin:/usr/bin:/bin \\
    LD_LIBRARY_PATH=/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib \\
    LAMBDA_TASK_ROOT=/var/task LAMBDA_RUNTIME_DIR=/var/runtime
WORKDIR /var/task
ENTRYPOINT ["/var/runtime/bootstrap"]
EOF
    $DOCKER build -q -t "$IMAGE" "$ctx" >/dev/null
    rm -rf "$ctx"
}

# ---------------------------------------------------------------- 3. sam build
sam_cli() {
    if [[ ! -x $SAM ]] || [[ $("$SAM" --version 2>/dev/null) != *"$SAM_VERSION"* ]]; then
        [[ -x $SAM_VENV/bin/pip ]] || python3 -m venv "$SAM_VENV"
        timeout 900 "$SAM_VENV/bin/pip" install -q --disable-pip-version-check "aws-sam-cli==$SAM_VERSION"
    fi
    "$SAM" --version
}

sam_build() {
    # An x86_64 copy with the clients layer attached unconditionally (the run below uses
    # the anthropic and OpenAI fakes and OpenSearch; SAM CLI does not resolve the
    # template's Fn::If in Layers): the same script the manual recipe uses (docs/sam-local.md).
    bash infra/sam-local-template.sh --x86_64 "$X86_TEMPLATE" >/dev/null \
        || die "infra/sam-local-template.sh failed"
    rm -rf "$BUILD_DIR"
    # The layer's Makefile downloads wheels for PLATFORM: the x86_64 ones here; its
    # bytecode is compiled by the runtime's Python (3.12, pyenv's here).
    PYC_PYTHON="$(python312)/bin/python3.12" MAKEFLAGS="PLATFORM=manylinux2014_x86_64" \
        timeout 900 "$SAM" build \
        --template-file "$X86_TEMPLATE" --build-dir "$BUILD_DIR" >"$RUN/sam-build.log" 2>&1 \
        || { tail -n 40 "$RUN/sam-build.log" >&2; die "sam build failed"; }
}

# ---------------------------------------------------------------- 4. services
DIM=64
services() {
    nohup "$VENV/bin/python" tests/fakes/serve.py "$BRIDGE" "$DIM" "$RUN/fakes.json" >"$RUN/fakes.log" 2>&1 &
    echo $! >"$RUN/fakes.pid"
    for _ in $(seq 30); do [[ -s $RUN/fakes.json ]] && break; sleep 0.5; done
    [[ -s $RUN/fakes.json ]] || { cat "$RUN/fakes.log" >&2; die "the fake LLM servers did not start"; }
    # dev-services copies the provider variables of this shell into the env file.
    eval "$("$VENV/bin/python" -c 'import json,shlex,sys; print(" ".join(f"export {k}={shlex.quote(v)}" for k, v in json.load(open(sys.argv[1])).items()))' "$RUN/fakes.json")"
    ENV_FILE="$RUN/sam-local.env.json"
    "$VENV/bin/gligabao" dev-services up --host "$BRIDGE" \
        --dynamodb-port "$(free_port "$BRIDGE")" --opensearch-port "$(free_port "$BRIDGE")" \
        --table-prefix gbcheck- --embedding-dimension "$DIM" \
        --env-file "$ENV_FILE" --state-dir "$RUN/dev-services"
}

# ---------------------------------------------------------------- 5. sam local
start_api() {  # start_api PORT [--parameter-overrides ...]
    local port=$1
    shift
    nohup "$SAM" local start-api -t "$BUILD_DIR/template.yaml" --skip-pull-image \
        --warm-containers LAZY --env-vars "$ENV_FILE" --host 127.0.0.1 --port "$port" \
        "$@" >"$RUN/sam.log" 2>&1 &
    echo $! >"$RUN/sam.pid"
    wait_http "http://127.0.0.1:$port/" 120 sam
}

BODY="$RUN/body"
check() {  # check WANT_STATUS METHOD PATH [CURL_ARGS...]: one request, status + latency
    local want=$1 method=$2 path=$3 got ms
    shift 3
    got=$(curl -s -o "$BODY" -D "$RUN/headers" -w '%{http_code} %{time_total}' --max-time 120 -X "$method" \
        -H 'content-type: application/json' "$@" "$API$path") || true
    ms=$(awk -v t="${got#* }" 'BEGIN{printf "%.0f", t * 1000}')
    got=${got%% *}
    local mark=ok
    [[ $got == "$want" ]] || { mark=UNEXPECTED; FAILED=1; }
    printf '   %-10s %3s (want %3s) %6s ms  %-7s %s  %s\n' "$mark" "$got" "$want" "$ms" "$method" "$path" \
        "$(head -c 140 "$BODY" | tr '\n' ' ')"
    LAST_MS=$ms
}
body_has() {  # body_has TEXT: the last body contains TEXT
    grep -qF -- "$1" "$BODY" || { echo "   UNEXPECTED body: no $1" >&2; FAILED=1; }
}

smoke() {
    local call_id async_id status
    check 400 POST /v1/gb/remember -d '{"user_id":"u1"}'
    FIRST_MS=$LAST_MS
    check 200 POST /v1/gb/remember -d '{"user_id":"u1","text":"Alice works at Acme.","session_id":"chat-42"}'
    body_has '"edges"'
    # A bad request first starts the query container: its cold start (the image of the
    # layer, the imports) then does not eat the real query's 29 s time budget.
    check 400 POST /v1/gb/query -d '{"user_id":"u1"}'
    check 200 POST /v1/gb/query -d '{"user_id":"u1","query":"Where does Alice work?"}'
    body_has 'At Acme.'
    call_id=$(awk 'tolower($1) == "x-gb-call-id:" {print $2}' "$RUN/headers" | tr -d '\r')
    check 200 GET '/v1/gb/datasets?user_id=u1'
    body_has '"main"'
    check 200 GET '/v1/gb/inferences?user_id=u1&limit=2'
    if [[ -n $call_id ]]; then
        check 200 GET "/v1/gb/calls/$call_id?user_id=u1"
    else
        echo "   UNEXPECTED: the query answer has no X-Gb-Call-Id" >&2
        FAILED=1
    fi
    check 404 GET '/v1/gb/calls/no-such-call?user_id=u1'
    # Async: no queue locally, so the job runs in the remember function's own process
    # (its container stays up with --warm-containers).
    check 202 POST /v1/gb/remember -H 'Prefer: respond-async' \
        -d '{"user_id":"u1","dataset":"later","text":"Bob works at Initech."}'
    async_id=$("$VENV/bin/python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["call_id"])' "$BODY" 2>/dev/null || true)
    status=""
    if [[ -n $async_id ]]; then
        for _ in $(seq 60); do
            status=$(curl -s --max-time 30 "$API/v1/gb/calls/$async_id?user_id=u1" |
                "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin).get("status", ""))' 2>/dev/null || true)
            [[ $status == ok ]] && break
            sleep 1
        done
    fi
    printf '   %-10s async remember %s: status %s\n' "$([[ $status == ok ]] && echo ok || echo UNEXPECTED)" "$async_id" "${status:-none}"
    [[ $status == ok ]] || FAILED=1
    if grep -q 'RouteKey: POST /mcp' template.yaml; then
        check 200 POST /mcp -H 'accept: application/json, text/event-stream' \
            -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"sam-local-check","version":"0"}}}'
    fi
    check 400 DELETE '/v1/gb/datasets/bad%20name?user_id=u1'
    check 204 DELETE '/v1/gb/datasets/main?user_id=u1'
    check 200 GET '/v1/gb/datasets?user_id=u1'
    body_has '"later"'
    check 404 DELETE '/v1/gb/datasets/main?user_id=u1'
    WARM=()
    for _ in 1 2 3 4 5; do
        check 200 GET '/v1/gb/datasets?user_id=u1'
        WARM+=("$LAST_MS")
    done
}

# The auth modes of the template: `AuthMode` (iam|jwt|none) where it has one, else JWT
# on when JwtIssuer is set. SAM CLI emulates neither JWT nor IAM authorizers: it runs
# the routes unauthorized, the functions get no claims and no IAM identity, and in
# those modes they must refuse the request themselves (401).
HAS_AUTH_MODE=0
grep -q '^  AuthMode:' template.yaml && HAS_AUTH_MODE=1
open_overrides() { ((HAS_AUTH_MODE)) && echo --parameter-overrides AuthMode=none; true; }
auth_mode() {  # auth_mode PORT MODE: one request in MODE, refused
    local overrides=()
    case $2 in
        jwt) overrides=(JwtIssuer=https://issuer.invalid JwtAudience=local)
             ((HAS_AUTH_MODE)) && overrides+=(AuthMode=jwt) ;;
        iam) overrides=(AuthMode=iam) ;;
    esac
    start_api "$1" --parameter-overrides "${overrides[@]}"
    check 401 GET '/v1/gb/datasets?user_id=u1' -H 'authorization: Bearer not-checked-locally'
    stop_pid sam INT  # as Ctrl-C: SAM CLI then stops its containers
}

timed "apt + dockerd" docker_up
timed "base image $IMAGE" base_image
timed "aws-sam-cli $SAM_VERSION" sam_cli
timed "sam build (x86_64 copy)" sam_build
timed "dev-services up + fakes" services
PORT=$(free_port 127.0.0.1)
API="http://127.0.0.1:$PORT"
# shellcheck disable=SC2046
timed "sam local start-api" start_api "$PORT" $(open_overrides)
timed "smoke (auth mode: none)" smoke
stop_pid sam INT
MODES=(jwt)
((HAS_AUTH_MODE)) && MODES+=(iam)
for mode in "${MODES[@]}"; do
    PORT=$(free_port 127.0.0.1)
    API="http://127.0.0.1:$PORT"
    timed "auth mode $mode (1 request)" auth_mode "$PORT" "$mode"
done

echo
echo "step                                  time"
printf '%s\n' "${REPORT[@]}"
echo "first request (cold container)     ${FIRST_MS} ms"
echo "warm requests (GET datasets)       ${WARM[*]} ms"
echo "disk: $(du -sh "$CACHE" 2>/dev/null | cut -f1) $CACHE, $(du -sh "$SAM_VENV" | cut -f1) .venv-sam," \
    "$(du -sh "$BUILD_DIR" | cut -f1) build, $(du -sh "$($DOCKER info -f '{{.DockerRootDir}}')" | cut -f1) docker data; images:"
$DOCKER images --format '  {{.Repository}}:{{.Tag}} {{.Size}}' | grep -e lambda -e gligabao-local || true
echo "total $((SECONDS - T0)) s"
((FAILED == 0)) || die "unexpected statuses (above)"
echo "sam-local-check: OK"
