"""Servers for the benchmarks, all on loopback: child processes (a standalone
moto, `gligabao serve`) and the local server's HTTP stack in this process.
Every process started here is stopped by its PID."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from . import HOST, ROOT

START_TIMEOUT_S = 60.0
# Variables that could point a server elsewhere than this machine's fakes.
FOREIGN_ENV = (
    "GB_OPENSEARCH_URL",
    "GB_ANTHROPIC_SECRET",
    "GB_OPENAI_SECRET",
    "GB_DEV_API_KEY",
    "GB_REQUIRE_AUTH",
    "GB_GEO",
    "GB_EMBEDDER",
    "GB_EMBEDDING_PROVIDER",
    "GB_LLM_PROVIDER",
    "GB_EMBEDDING_MODEL",
)
LOCAL_AWS = {
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def child_env(extra: dict[str, str]) -> dict[str, str]:
    """This environment without any GB_, ANTHROPIC_ or OPENAI_ variable, the
    checkout's code first on the path, dummy AWS credentials, then ``extra``."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("GB_", "ANTHROPIC_", "OPENAI_"))
    }
    env.update({"PYTHONPATH": str(ROOT / "shared"), **LOCAL_AWS})
    env.update(extra)
    return env


@dataclass
class Child:
    """A process started here, its output in ``log``."""

    proc: subprocess.Popen[bytes]
    out: IO[bytes]
    log: Path

    @classmethod
    def start(cls, args: list[str], env: dict[str, str], log: Path) -> Child:
        out = log.open("wb")
        proc = subprocess.Popen(args, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        return cls(proc, out, log)

    def wait_for(self, marker: str | None = None, port: int | None = None) -> Child:
        """Until ``marker`` is in the log or ``port`` accepts a connection."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and self.proc.poll() is None:
            if marker is not None and marker in self.log.read_text(errors="replace"):
                return self
            if port is not None:
                try:
                    socket.create_connection((HOST, port), timeout=1).close()
                    return self
                except OSError:
                    pass
            time.sleep(0.1)
        text = self.log.read_text(errors="replace")[-2000:]
        self.stop()
        raise SystemExit(f"{self.log.name}: did not start: {text}")

    def cpu_ms(self) -> float:
        """The CPU time the process has used so far (user + system, Linux's
        /proc, 10 ms ticks): what a run cost it whatever else the machine
        runs, where wall times on a loaded machine mostly measure the wait."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

    def kill(self, sig: int = signal.SIGKILL) -> int:
        """Send ``sig`` and wait for the exit; the exit code."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
        code = self.proc.wait(timeout=30)
        self.out.close()
        return code

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it is still there after 30 s."""
        try:
            self.kill(signal.SIGTERM)
        except subprocess.TimeoutExpired:
            self.kill(signal.SIGKILL)


def start_moto_process(logs: Path, port: int, *, one_at_a_time: bool = True) -> Child:
    """A standalone moto DynamoDB server. ``one_at_a_time``: gligabao's, which
    runs one request at a time as DynamoDB is atomic per item (plain
    `moto.server` lets two threads both pass a conditional write)."""
    if one_at_a_time:
        args = [sys.executable, "-m", "gligabao.local.embedded", HOST, str(port)]
        return Child.start(args, child_env({}), logs / "moto.log").wait_for("listening on")
    args = [sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(port)]
    return Child.start(args, child_env({}), logs / "moto.log").wait_for(port=port)


def start_serve(log: Path, port: int, env: dict[str, str], *extra: str) -> Child:
    """`gligabao serve` on ``port`` with ``env`` (see ``child_env``), until it listens."""
    args = [sys.executable, "-m", "gligabao.local.cli", "serve", "--port", str(port), "--quiet"]
    return Child.start([*args, *extra], child_env(env), log).wait_for("listening on")


def fakes_env(llm: Any, emb: Any) -> dict[str, str]:
    """The variables that point a server at the fake LLM and embeddings."""
    for url in (llm.url, emb.url):
        assert url.startswith(f"http://{HOST}:"), url
    return {**llm.env("bench-anthropic-key"), **emb.env("bench-openai-key")}


def use_env(env: dict[str, str]) -> None:
    """Point this process (a server thread, the checks) at ``env`` only."""
    from gligabao import wiring

    for name in FOREIGN_ENV:
        os.environ.pop(name, None)
    os.environ.update(env)
    wiring.reset()


@contextmanager
def local_server(env: dict[str, str]) -> Iterator[str]:
    """moto's DynamoDB in this process (fresh tables under a fresh prefix) and
    the local server's real HTTP stack (the Lambda handlers) on a thread, as
    tests/conftest.py starts it; ``env`` on top (``GB_VECTOR_STORE=dynamodb``:
    the vector fake of tests/fakes in front of moto). Yields the base URL."""
    from gligabao import wiring
    from gligabao.local.embedded import create_tables, start_moto
    from gligabao.local.server import make_server

    moto, moto_url = start_moto()
    server = None
    vectors: Any = None
    if env.get("GB_VECTOR_STORE") == "dynamodb":  # DynamoDB's vector indexes: the fake
        from tests.fakes.dynamodb_vectors import FakeDynamoVectors

        vectors = FakeDynamoVectors(moto_url).start()
        moto_url = vectors.url
    try:
        use_env({
            "GB_DYNAMODB_ENDPOINT": moto_url,
            "GB_TABLE_PREFIX": f"bench{uuid.uuid4().hex[:8]}_",
            "POWERTOOLS_LOG_LEVEL": "WARNING",
            **env,
        })
        create_tables()
        server = make_server(HOST, 0, quiet=True)
        kwargs = {"poll_interval": 0.05}
        threading.Thread(target=server.serve_forever, kwargs=kwargs, daemon=True).start()
        yield f"http://{HOST}:{server.server_address[1]}"
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()
        if vectors is not None:
            vectors.stop()
        moto.stop()
        wiring.reset()
