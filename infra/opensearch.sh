#!/usr/bin/env bash
# A real single-node OpenSearch 2.19 with the k-NN plugin, for the tests and CI.
#
#   infra/opensearch.sh start [--port N] [--bind-host H]
#                                          build if needed, start, print the URL
#   infra/opensearch.sh stop               stop it and remove its data
#   infra/opensearch.sh status             print the URL and exit 0 if it runs
#   infra/opensearch.sh build              only build (mvn -o first, then online)
#
# Everything comes from Maven Central (see infra/opensearch-node/pom.xml): the
# node runs in-process from jars, no docker image, no tarball. Needs Java 17+
# and Maven. The k-NN zip on Maven Central has no native libraries, so only the
# `lucene` engine works (faiss/nmslib fail with UnsatisfiedLinkError).
#
# The URL is also written to infra/opensearch-node/target/url; the node's log is
# target/node.log; its data lives in a temporary directory removed by `stop`.
# --bind-host: the address the node listens on (default 127.0.0.1), e.g. the
# docker bridge's for `sam local` containers (gligabao dev-services).
# Environment: GB_OPENSEARCH_HEAP (default 1g), GB_OPENSEARCH_JAVA (java binary),
# GB_OPENSEARCH_START_TIMEOUT (seconds, default 180), GB_OPENSEARCH_RUN_DIR (where
# url, pid, log and lock live, default target/: a second node of the same checkout,
# as dev-services runs beside the tests' node, uses its own).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROJECT="$HERE/opensearch-node"
TARGET="$PROJECT/target"
JAR="$TARGET/opensearch-node.jar"
RUN_DIR="${GB_OPENSEARCH_RUN_DIR:-$TARGET}"
URL_FILE="$RUN_DIR/url"
PID_FILE="$RUN_DIR/pid"
HOME_FILE="$RUN_DIR/home"
LOG_FILE="$RUN_DIR/node.log"
HEAP="${GB_OPENSEARCH_HEAP:-1g}"
START_TIMEOUT="${GB_OPENSEARCH_START_TIMEOUT:-180}"

die() { echo "opensearch.sh: $*" >&2; exit 1; }

java_bin() {
    if [[ -n "${GB_OPENSEARCH_JAVA:-}" ]]; then echo "$GB_OPENSEARCH_JAVA"
    elif [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then echo "$JAVA_HOME/bin/java"
    else command -v java || die "java not found (Java 17+ needed)"
    fi
}

needs_build() {
    [[ -f "$JAR" && -d "$TARGET/lib" && -f "$TARGET/knn/plugin-descriptor.properties" ]] || return 0
    [[ -z "$(find "$PROJECT/pom.xml" "$PROJECT/src" -newer "$JAR" -print -quit)" ]] || return 0
    return 1
}

build() {
    command -v mvn >/dev/null || die "mvn not found (Maven needed to build the node)"
    mkdir -p "$TARGET"
    local t0=$SECONDS
    # Offline first (the ~/.m2 cache), online if something is missing.
    if ! (cd "$PROJECT" && mvn -B -q -o package >"$TARGET/build.log" 2>&1); then
        (cd "$PROJECT" && mvn -B -q package >"$TARGET/build.log" 2>&1) \
            || { cat "$TARGET/build.log" >&2; die "build failed"; }
    fi
    rm -f "$TARGET/build.log"
    echo "opensearch.sh: built in $((SECONDS - t0))s" >&2
}

answers() {  # GET / on the URL answers with the cluster banner
    local url="$1"
    if command -v curl >/dev/null; then
        curl -fsS -m 2 "$url/" 2>/dev/null | grep -q '"cluster_name"'
    else
        python3 - "$url" <<'EOF' 2>/dev/null
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1] + "/", timeout=2) as r:
    sys.exit(0 if b"cluster_name" in r.read() else 1)
EOF
    fi
}

running() {
    [[ -f "$PID_FILE" && -f "$URL_FILE" ]] || return 1
    kill -0 "$(cat "$PID_FILE")" 2>/dev/null || return 1
    answers "$(cat "$URL_FILE")"
}

start() {
    local port=0 bind_host=127.0.0.1
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --port) port="${2:?--port needs a value}"; shift 2 ;;
            --port=*) port="${1#--port=}"; shift ;;
            --bind-host) bind_host="${2:?--bind-host needs a value}"; shift 2 ;;
            --bind-host=*) bind_host="${1#--bind-host=}"; shift ;;
            *) die "unknown option $1" ;;
        esac
    done
    mkdir -p "$TARGET" "$RUN_DIR"
    exec 9>"$RUN_DIR/.lock"  # one start at a time (parallel test sessions)
    flock 9
    if running; then cat "$URL_FILE"; return 0; fi
    stop_node quiet
    if needs_build; then build; fi
    local java home pid t0=$SECONDS
    java="$(java_bin)"
    home="$(mktemp -d "${TMPDIR:-/tmp}/gb-opensearch.XXXXXX")"
    echo "$home" >"$HOME_FILE"
    rm -f "$URL_FILE"
    # setsid: the node outlives the shell (and the pytest) that started it.
    setsid "$java" -Xms512m "-Xmx$HEAP" -XX:+UseG1GC -Djava.awt.headless=true \
        -Dfile.encoding=UTF-8 -Dlog4j2.disable.jmx=true \
        -Dlog4j.shutdownHookEnabled=false \
        -cp "$JAR:$TARGET/lib/*:$TARGET/knn/*" \
        gligabao.node.Main "$home" "$port" "$URL_FILE" "$bind_host" \
        >"$LOG_FILE" 2>&1 </dev/null 9>&- &
    pid=$!
    echo "$pid" >"$PID_FILE"
    while true; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 40 "$LOG_FILE" >&2
            stop_node quiet
            die "the node exited while starting (log above, $LOG_FILE)"
        fi
        if [[ -f "$URL_FILE" ]] && answers "$(cat "$URL_FILE")"; then break; fi
        if (( SECONDS - t0 > START_TIMEOUT )); then
            tail -n 40 "$LOG_FILE" >&2
            stop_node quiet
            die "the node did not answer within ${START_TIMEOUT}s"
        fi
        sleep 0.5
    done
    echo "opensearch.sh: node $pid started in $((SECONDS - t0))s" >&2
    cat "$URL_FILE"
}

stop_node() {
    if [[ -f "$PID_FILE" ]]; then
        local pid
        pid="$(cat "$PID_FILE")"
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
            if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
            [[ "${1:-}" == quiet ]] || echo "opensearch.sh: stopped node $pid" >&2
        fi
    fi
    if [[ -f "$HOME_FILE" ]]; then
        local home
        home="$(cat "$HOME_FILE")"
        [[ "$home" == */gb-opensearch.* ]] && rm -rf "$home"
    fi
    rm -f "$PID_FILE" "$URL_FILE" "$HOME_FILE"
}

case "${1:-}" in
    start) shift; start "$@" ;;
    stop) stop_node ;;
    status)
        if running; then cat "$URL_FILE"; else echo "not running" >&2; exit 1; fi ;;
    build) mkdir -p "$TARGET"; build ;;
    *) echo "usage: $0 start [--port N] [--bind-host H] | stop | status | build" >&2; exit 2 ;;
esac
