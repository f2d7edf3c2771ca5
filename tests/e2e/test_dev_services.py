"""`gligabao dev-services up|status|down` as subprocesses: moto's DynamoDB in a
process of its own with every table, the vector indexes bootstrapped on the real
OpenSearch node, and the `sam local --env-vars` file that points at both."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import boto3
import pytest

from gligabao.dynamodb.tables import ALL_MODELS, short_name
from gligabao.local.embedded import free_port

ROOT = Path(__file__).resolve().parents[2]


def dev(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gligabao.local.cli", "dev-services", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_up_status_down(tmp_path: Path, opensearch_url: str, aws_env: None) -> None:
    state, env_file = tmp_path / "state", tmp_path / "env.json"
    port, prefix, index_prefix = (
        free_port(),
        f"gbdev{uuid.uuid4().hex[:6]}-",
        f"gbdev-{uuid.uuid4().hex[:8]}",
    )
    args = [
        "--host",
        "127.0.0.1",
        "--dynamodb-port",
        str(port),
        "--opensearch-url",
        opensearch_url,
        "--table-prefix",
        prefix,
        "--embedding-dimension",
        "64",
        "--env-file",
        str(env_file),
        "--state-dir",
        str(state),
    ]
    keys = {
        "ANTHROPIC_API_KEY": "sk-ant-dev",
        "OPENAI_BASE_URL": "http://172.17.0.1:9/v1",
        "GB_OPENSEARCH_INDEX_PREFIX": index_prefix,
    }
    try:
        up = dev("up", *args, env=keys)
        assert up.returncode == 0, up.stderr

        dynamodb = f"http://127.0.0.1:{port}"
        values = json.loads(env_file.read_text())["Parameters"]
        assert values["GB_DYNAMODB_ENDPOINT"] == dynamodb
        assert values["GB_OPENSEARCH_URL"] == opensearch_url
        assert values["GB_TABLE_PREFIX"] == prefix
        assert values["GB_EMBEDDING_DIMENSION"] == "64"
        # The template's default providers are Bedrock's: the file names this shell's.
        assert values["GB_LLM_PROVIDER"] == "anthropic"
        assert values["GB_EMBEDDING_PROVIDER"] == "openai"
        assert values["GB_EMBEDDING_MODEL"] == "text-embedding-3-small"
        assert values["ANTHROPIC_API_KEY"] == "sk-ant-dev"
        assert values["OPENAI_BASE_URL"] == "http://172.17.0.1:9/v1"
        for unset in ("GB_ANTHROPIC_SECRET", "GB_OPENAI_SECRET", "GB_REMEMBER_QUEUE_URL"):
            assert values[unset] == "", unset

        db = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=dynamodb)
        names = set(db.list_tables()["TableNames"])
        assert {prefix + short_name(m) for m in ALL_MODELS} <= names
        with urllib.request.urlopen(f"{opensearch_url}/_cat/indices/{index_prefix}-*?h=index") as r:
            assert r.read().decode().split(), "no vector index bootstrapped"

        # moto runs in its own process: it outlives `up`, and a second `up` reuses it.
        assert dev("status", "--state-dir", str(state)).returncode == 0
        again = dev("up", *args, env=keys)
        assert again.returncode == 0, again.stderr
        assert f"dynamodb:   {dynamodb}" in again.stdout
    finally:
        down = dev("down", "--state-dir", str(state))
    assert down.returncode == 0, down.stderr
    status = dev("status", "--state-dir", str(state))
    assert status.returncode == 1
    assert "not running" in status.stdout
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_up_on_a_busy_port_fails_and_writes_nothing(tmp_path: Path, opensearch_url: str) -> None:
    env_file = tmp_path / "env.json"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        up = dev(
            "up",
            "--host",
            "127.0.0.1",
            "--dynamodb-port",
            str(busy.getsockname()[1]),
            "--opensearch-url",
            opensearch_url,
            "--env-file",
            str(env_file),
            "--state-dir",
            str(tmp_path / "state"),
        )
    assert up.returncode == 1
    assert "dev-services up failed" in up.stderr
    assert not env_file.exists()
    dev("down", "--state-dir", str(tmp_path / "state"))
