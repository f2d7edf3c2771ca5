"""The default stack (Claude and Titan on Bedrock, vectors on DynamoDB) runs on
the core layer alone. In a fresh interpreter where no module that only the
clients layer ships can be imported (the distributions of
layers/clients/requirements.txt that layers/core/requirements.txt does not
pin, by their import names), every handler the default stack deploys
imports, its remember and query services are built, and its LLM and
embedder answer through the fake Bedrock (SigV4 checked)."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

from packaging.utils import canonicalize_name

from fakes.bedrock_server import FakeBedrock

ROOT = Path(__file__).resolve().parents[2]
# The default stack's functions (VectorIndexesFunction exists only with OpenSearch).
HANDLERS = ["remember", "remember_worker", "query", "datasets", "records", "browse", "mcp"]

CHILD = """
import importlib, json, sys
from importlib.abc import MetaPathFinder

BLOCKED = set(json.loads(sys.argv[1]))

class Block(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (clients layer)", name=name)
        return None

sys.meta_path.insert(0, Block())
for h in json.loads(sys.argv[2]):
    importlib.import_module("gligabao.handlers." + h)
from gligabao import wiring
from gligabao.ai.port import LLMRequest

wiring.remember_service()
wiring.query_service()
reply = wiring.llm().complete(LLMRequest("query", "[stage: query] JSON", "Where?", wiring.settings().llm_model))
vectors = wiring.embedder().embed(["Alice"], "query").vectors
print(json.dumps({"text": reply.text, "dims": len(vectors[0]),
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)}))
"""


def pins(lock: Path) -> set[str]:
    return {
        canonicalize_name(line.split("==")[0])
        for line in lock.read_text().splitlines()
        if line[:1].isalnum() and "==" in line
    }


def clients_only_modules() -> set[str]:
    """The top-level import names of the distributions only the clients layer
    ships (as this environment, which has them installed, maps them)."""
    only = pins(ROOT / "layers/clients/requirements.txt") - pins(
        ROOT / "layers/core/requirements.txt"
    )
    by_module = importlib.metadata.packages_distributions()
    return {
        module
        for module, dists in by_module.items()
        if any(canonicalize_name(d) in only for d in dists) and module.isidentifier()
    }


def test_the_default_stack_needs_nothing_of_the_clients_layer() -> None:
    blocked = clients_only_modules()
    assert {"anthropic", "openai", "opensearchpy", "requests"} <= blocked
    with FakeBedrock() as fake:
        fake.script("query", {"answer": "Acme"})
        env = fake.child_env(
            GB_LLM_PROVIDER="bedrock",
            GB_EMBEDDING_PROVIDER="bedrock",
            GB_EMBEDDING_DIMENSION="256",
            GB_VECTOR_STORE="dynamodb",
            GB_TABLE_PREFIX="gbtest-",
            AWS_DEFAULT_REGION=fake.region,
        )
        done = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(sorted(blocked)), json.dumps(HANDLERS)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        out = json.loads(done.stdout.strip().splitlines()[-1])
        assert json.loads(out["text"]) == {"answer": "Acme"}
        assert out["dims"] == 256
        assert out["loaded"] == []
        statuses = [r.status for r in fake.invocations()]
        assert statuses == [200, 200]  # one Claude call, one Titan call, both signed
