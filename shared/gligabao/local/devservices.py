"""`gligabao dev-services up|down|status`: the backends that `sam local start-api`
needs, run on this machine and reachable from its function containers.

A container reaches the host through the docker bridge (172.17.0.1 by default),
not through 127.0.0.1, so both services listen on the bridge's address:

* moto's DynamoDB server, in a process of its own, with every table created;
* the OpenSearch node of ``infra/opensearch.sh`` (``--bind-host``), with the
  vector indexes bootstrapped. Needed: the in-process vector index would live in
  one container per function (query would never see remember's vectors), and
  numpy is not in the Lambda layer.

``up`` writes the ``--env-vars`` file of ``sam local`` (infra/sam-local.env.json)
with their URLs, empty secret names and queue URL (so the functions read the API
keys from the file and run async remembers in their own process), and the
provider keys and base URLs of this shell. Run it from the repository root.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

STATE_DIR = Path(".gb-local/dev-services")
ENV_FILE = Path("infra/sam-local.env.json")
OPENSEARCH_SCRIPT = Path("infra/opensearch.sh")
DEFAULT_PREFIX = "gblocal-"
# Copied from this shell into the env file (empty when unset): the provider
# keys and endpoints. A base URL must be one the containers reach.
PASSTHROUGH = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")


@dataclass(frozen=True)
class Options:
    host: str
    dynamodb_port: int = 8000
    opensearch_port: int = 9200
    opensearch_url: str = ""  # an existing node the containers reach: none started
    table_prefix: str = DEFAULT_PREFIX
    dimension: int = 0  # 0: the embedding model's (settings)
    env_file: Path = ENV_FILE
    state_dir: Path = STATE_DIR


def bridge_host() -> str:
    """The docker bridge's IPv4 address (what containers reach the host on), or
    127.0.0.1 when there is no docker0."""
    try:
        out = subprocess.run(
            ["ip", "-4", "-o", "addr", "show", "docker0"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        return "127.0.0.1"
    return out[out.index("inet") + 1].split("/")[0] if "inet" in out else "127.0.0.1"


def _wait_port(host: str, port: int, timeout_s: float, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the moto server exited with {proc.returncode}")
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"nothing answered on {host}:{port} within {timeout_s:.0f}s")


def _alive(pid_file: Path) -> int | None:
    try:
        pid = int(pid_file.read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def _opensearch(state_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GB_OPENSEARCH_RUN_DIR": str((state_dir / "opensearch").resolve())}
    return subprocess.run(
        ["bash", str(OPENSEARCH_SCRIPT), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )


def start_moto(opts: Options) -> str:
    pid_file, url_file = opts.state_dir / "moto.pid", opts.state_dir / "moto.url"
    if _alive(pid_file) and url_file.exists():
        return url_file.read_text().strip()  # already up (a second `up`)
    url = f"http://{opts.host}:{opts.dynamodb_port}"
    with socket.socket() as probe:  # else the wait below could reach the other listener
        try:
            probe.bind((opts.host, opts.dynamodb_port))
        except OSError as exc:
            raise RuntimeError(f"{opts.host}:{opts.dynamodb_port} is not free: {exc}") from exc
    log = (opts.state_dir / "moto.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gligabao.local.embedded", opts.host, str(opts.dynamodb_port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # outlives this command
    )
    pid_file.write_text(str(proc.pid))
    _wait_port(opts.host, opts.dynamodb_port, 30, proc)
    url_file.write_text(url)
    return url


def start_opensearch(opts: Options) -> str:
    if opts.opensearch_url:
        url = opts.opensearch_url.rstrip("/")
        (opts.state_dir / "opensearch.url").write_text(url)
        return url
    started = _opensearch(
        opts.state_dir, "start", "--port", str(opts.opensearch_port), "--bind-host", opts.host
    )
    if started.returncode != 0:
        raise RuntimeError(f"infra/opensearch.sh start failed:\n{started.stderr[-3000:]}")
    return started.stdout.strip().splitlines()[-1]


def prepare(dynamodb_url: str, opensearch_url: str, opts: Options) -> None:
    """Create the tables and the vector indexes (both idempotent)."""
    from .. import wiring
    from ..dynamodb.admin import configure_tables, create_tables
    from ..vectors.opensearch.store import OpenSearchVectorIndex

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    configure_tables(opts.table_prefix, dynamodb_url, "us-east-1")
    create_tables()
    os.environ.update(GB_OPENSEARCH_URL=opensearch_url, GB_OPENSEARCH_SERVICE="es")
    if opts.dimension:
        os.environ["GB_EMBEDDING_DIMENSION"] = str(opts.dimension)
    wiring.reset()
    index = wiring.vector_index()
    if not isinstance(index, OpenSearchVectorIndex):
        raise RuntimeError("GB_OPENSEARCH_URL was not taken up")
    index.bootstrap()


def env_vars(dynamodb_url: str, opensearch_url: str, opts: Options) -> dict[str, str]:
    """The `sam local --env-vars` values, for every function (Parameters)."""
    from ..config import load_settings

    # The providers and models this shell's environment selects (the template's
    # defaults are Bedrock's), as `gligabao serve` would read them, less the local
    # embedding model, which the Lambda layer does not ship.
    cfg = load_settings()
    values = {
        "GB_TABLE_PREFIX": opts.table_prefix,
        "GB_DYNAMODB_ENDPOINT": dynamodb_url,
        # The template's default VectorStore is dynamodb, whose vector indexes
        # moto's server lacks: the functions search the OpenSearch node instead.
        "GB_VECTOR_STORE": "opensearch",
        "GB_OPENSEARCH_URL": opensearch_url,
        "GB_OPENSEARCH_SERVICE": "es",
        "GB_EMBEDDING_DIMENSION": str(cfg.embedding_dimension),  # as prepare() bootstrapped
        "GB_LLM_PROVIDER": cfg.llm_provider,
        "GB_DEFAULT_MODEL": cfg.llm_model,
        "GB_LLM_BASE_URL": os.environ.get("GB_LLM_BASE_URL", ""),
        "GB_EMBEDDING_PROVIDER": cfg.embedder,
        "GB_EMBEDDING_MODEL": cfg.embedding_model,
        # Unset locally: the keys come from this file, async remembers run in
        # the function's own process (no queue), no place index.
        "GB_ANTHROPIC_SECRET": "",
        "GB_OPENAI_SECRET": "",
        "GB_REMEMBER_QUEUE_URL": "",
        "GB_GEO_PLACE_INDEX": "",
    }
    values.update({k: os.environ.get(k, "") for k in PASSTHROUGH})
    return values


def up(opts: Options) -> int:
    opts.state_dir.mkdir(parents=True, exist_ok=True)
    if not OPENSEARCH_SCRIPT.exists() and not opts.opensearch_url:
        print(f"{OPENSEARCH_SCRIPT} not found: run from the repository root", file=sys.stderr)
        return 2
    try:
        dynamodb_url = start_moto(opts)
        opensearch_url = start_opensearch(opts)
        prepare(dynamodb_url, opensearch_url, opts)
    except Exception as exc:
        print(f"dev-services up failed: {exc}", file=sys.stderr)
        return 1
    values = env_vars(dynamodb_url, opensearch_url, opts)
    opts.env_file.parent.mkdir(parents=True, exist_ok=True)
    opts.env_file.write_text(json.dumps({"Parameters": values}, indent=2) + "\n")
    print(f"  dynamodb:   {dynamodb_url} (tables {opts.table_prefix}*)")
    print(f"  opensearch: {opensearch_url}")
    print(f"  env vars:   {opts.env_file}")
    return 0


def down(state_dir: Path = STATE_DIR) -> int:
    pid_file = state_dir / "moto.pid"
    pid = _alive(pid_file)
    if pid:
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            if not _alive(pid_file):
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
    for name in ("moto.pid", "moto.url", "opensearch.url"):
        (state_dir / name).unlink(missing_ok=True)
    if OPENSEARCH_SCRIPT.exists() and (state_dir / "opensearch").exists():
        _opensearch(state_dir, "stop")
    print("dev-services stopped")
    return 0


def _answers(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url + "/", timeout=5) as resp:
            return b"cluster_name" in resp.read()
    except OSError:
        return False


def status(state_dir: Path = STATE_DIR) -> int:
    moto = _alive(state_dir / "moto.pid")
    print(f"  dynamodb:   {f'moto pid {moto}' if moto else 'not running'}")
    external = state_dir / "opensearch.url"
    node_url = ""
    if external.exists():
        url = external.read_text().strip()
        node_url = url if _answers(url) else ""
    elif OPENSEARCH_SCRIPT.exists():
        node = _opensearch(state_dir, "status")
        node_url = node.stdout.strip() if node.returncode == 0 else ""
    print(f"  opensearch: {node_url or 'not running'}")
    return 0 if moto and node_url else 1
