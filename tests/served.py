"""`gligabao serve` as a child process on a loopback port (the e2e tests),
forked from the worker's fork server (tests/forkserver.py)."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import forkserver

from conftest import Client, Reply
from gligabao.local.embedded import free_port


def one_fact(
    source: tuple[str, str], relation: str, target: tuple[str, str], description: str
) -> dict[str, Any]:
    """The extraction of one fact between two entities, each (name, type): a
    fake LLM's scripted reply."""
    (source_name, source_type), (target_name, target_type) = source, target
    return {
        "entities": [
            {"name": source_name, "type": source_type},
            {"name": target_name, "type": target_type},
        ],
        "edges": [
            {
                "source": source_name,
                "target": target_name,
                "relation": relation,
                "description": description,
            }
        ],
    }


ALICE_AT_ACME = one_fact(
    ("Alice", "person"), "works_at", ("Acme", "organization"), "Alice works at Acme."
)
# The answer to "Where does Alice work?" that cites the fact above (edge 1).
AT_ACME = {"answer": "At Acme.", "entities": [], "edges": [1], "passages": []}
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
        if data is None:
            folder = tempfile.mkdtemp(prefix="gb-e2e-")
            # Removed when the test run ends, not at stop(): a restart reuses the file.
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            data = os.path.join(folder, "gligabao.db")
        self.data = data
        full["GB_DATA"] = self.data
        # Entity summaries off unless a test turns them on (as tests/conftest.py does
        # in process): their background job's calls would join the counts a test reads.
        full["GB_SUMMARIES"] = "off"
        full.update(env)
        # a real process, forked from one that imported gligabao and the SDKs
        # once (tests/forkserver.py): `python -m gligabao.local.cli serve`
        self.proc = forkserver.spawn(
            "gligabao.local.cli", ["serve", "--port", str(self.port), "--quiet"], full, ROOT
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
        # Read on while it runs: a full pipe would block the server's logging.
        self._out: list[str] = []
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()
        self.client = Client(f"http://127.0.0.1:{self.port}")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._out.append(line)

    def remember(self, text: str, user_id: str = "u1", **fields: str) -> Reply:
        """POST /v1/gb/remember, which must succeed (200)."""
        r = self.client.post("/v1/gb/remember", {"user_id": user_id, "text": text, **fields})
        assert r.status == 200, r.body
        return r

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str]:
        self.proc.send_signal(sig)
        self.proc.wait(timeout=30)
        self._drain.join(timeout=30)
        return self.proc.returncode, "".join(self._out)


class ServedCounting(Served):
    """`gligabao serve` on its default store (a SQLite file), whose rows a
    test can count, to prove what a refused request did not write."""

    def __init__(self, env: dict[str, str]) -> None:
        super().__init__({"GB_EMBEDDING_DIMENSION": "64", "GB_LLM_MAX_RETRIES": "0", **env})
        self.url = f"http://127.0.0.1:{self.port}"

    def row_counts(self) -> dict[str, int]:
        """Rows in each table of the server's file."""
        with contextlib.closing(sqlite3.connect(self.data, timeout=30)) as db:
            names = [
                r[0]
                for r in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%' ORDER BY name"
                )
            ]
            return {n: db.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}
