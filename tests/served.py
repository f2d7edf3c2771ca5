"""`gligabao serve` as a subprocess on a loopback port (the e2e tests)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conftest import Client
from gligabao.local.embedded import free_port

ROOT = Path(__file__).resolve().parents[1]


class Served:
    def __init__(self, env: dict[str, str], data: str | None = None) -> None:
        self.port = free_port()
        full = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GB_", "ANTHROPIC_", "OPENAI_"))
        }
        # The SQLite file: the given one (a restart), else a fresh one per server.
        self.data = data or os.path.join(tempfile.mkdtemp(prefix="gb-e2e-"), "gligabao.db")
        full["GB_DATA"] = self.data
        full.update(env)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gligabao.local.cli",
                "serve",
                "--port",
                str(self.port),
                "--quiet",
            ],
            env=full,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.banner: list[str] = []
        self.vectors = "in-process"
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.banner.append(line.rstrip())
            if line.startswith("  geo:"):
                break
        assert any("listening on" in b for b in self.banner), self.banner
        self.client = Client(f"http://127.0.0.1:{self.port}")

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str]:
        self.proc.send_signal(sig)
        out, _ = self.proc.communicate(timeout=30)
        return self.proc.returncode, out
