"""`gligabao serve` as a subprocess on a loopback port (the e2e tests)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from conftest import Client
from gligabao.local.embedded import free_port

# The extraction of "Alice works at Acme." (a fake LLM's scripted reply).
ALICE_AT_ACME = {
    "entities": [
        {"name": "Alice", "type": "person"},
        {"name": "Acme", "type": "organization"},
    ],
    "edges": [
        {
            "source": "Alice",
            "target": "Acme",
            "relation": "works_at",
            "description": "Alice works at Acme.",
        }
    ],
}
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


AWS_TEST_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


class ServedOnMoto(Served):
    """`gligabao serve` on the tests' moto server under a fresh table prefix,
    so that a test can read every table the server writes."""

    def __init__(self, moto_url: str, env: dict[str, str]) -> None:
        self.moto_url = moto_url
        self.prefix = f"t{uuid.uuid4().hex[:10]}_"
        super().__init__(
            {
                **AWS_TEST_ENV,
                "GB_DYNAMODB_ENDPOINT": moto_url,
                "GB_TABLE_PREFIX": self.prefix,
                "GB_EMBEDDING_DIMENSION": "64",
                "GB_LLM_MAX_RETRIES": "0",
                **env,
            }
        )
        self.url = f"http://127.0.0.1:{self.port}"

    def row_counts(self) -> dict[str, int]:
        """Items in each of the server's tables."""
        import boto3

        from gligabao.graph.tables import ALL_MODELS, short_name

        client = boto3.client(
            "dynamodb",
            endpoint_url=self.moto_url,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        counts: dict[str, int] = {}
        for model in ALL_MODELS:
            name = short_name(model)
            kwargs: dict[str, Any] = {"TableName": f"{self.prefix}{name}", "Select": "COUNT"}
            total = 0
            while True:
                page = client.scan(**kwargs)
                total += page["Count"]
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
            counts[name] = total
        return counts
