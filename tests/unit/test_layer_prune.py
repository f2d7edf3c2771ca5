"""The layer drops parts of the openai SDK and of Powertools
(layers/core/Makefile, ``SDK_UNUSED``): every call made here still works
without them. In a child process those packages are made unimportable, then
the OpenAI embedder, the OpenAI-compatible LLM and the Anthropic LLM each
answer one request from the fakes, over HTTP, and the worker's batch
processor and the idempotency layer load and run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CHILD = r"""
import importlib.abc, os, sys
BLOCKED = tuple(sys.argv[1].split(","))

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in BLOCKED or name.startswith(tuple(b + "." for b in BLOCKED)):
            raise ImportError(f"pruned from the layer: {name}")
        return None

sys.meta_path.insert(0, Block())
sys.path.insert(0, sys.argv[2])
from fakes.anthropic_server import FakeAnthropic
from fakes.openai_chat_server import FakeOpenAICompatible
from fakes.openai_server import FakeOpenAI
from gligabao.ai import prompts
from gligabao.ai.anthropic_llm import AnthropicLLM
from gligabao.ai.embedders import OpenAIEmbedder
from gligabao.ai.openai_llm import OpenAILLM
from gligabao.ai.port import LLMRequest

def ask(llm):
    req = LLMRequest("query", prompts.QUERY_SYSTEM, "Where?", "m", "none", 100, prompts.QUERY_SCHEMA)
    return llm.complete(req).text

with FakeAnthropic() as a, FakeOpenAI(dim=8) as o, FakeOpenAICompatible(dim=8) as c:
    a.default("query", {"answer": "from anthropic"})
    c.script("query", {"answer": "from openai"})
    os.environ.update(a.env())
    assert "from anthropic" in ask(AnthropicLLM("k", timeout_s=5, max_retries=0))
    assert "from openai" in ask(OpenAILLM("k", c.base_url, timeout_s=5, max_retries=0))
    os.environ["OPENAI_BASE_URL"] = o.base_url
    emb = OpenAIEmbedder("k", "text-embedding-3-small", timeout_s=5, max_retries=0)
    assert len(emb.embed(["a", "b"], "remember").vectors) == 2

# The worker's batch and the remember's idempotency (Powertools).
import gligabao.handlers.remember_worker  # noqa: F401
import gligabao.idempotency.runner  # noqa: F401
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer  # noqa: F401

record = {"messageId": "m", "receiptHandle": "r", "body": "{}", "attributes": {},
          "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
          "eventSourceARN": "arn:aws:sqs:us-east-1:1:q", "awsRegion": "us-east-1"}
seen = []

def handle(record):
    seen.append(record)

out = process_partial_response(event={"Records": [record]}, record_handler=handle,
                               processor=BatchProcessor(event_type=EventType.SQS))
assert out == {"batchItemFailures": []} and len(seen) == 1
print("ok", len([m for m in sys.modules if m.startswith("openai.")]))
"""


def pruned() -> list[str]:
    text = (ROOT / "layers" / "core" / "Makefile").read_text()
    m = re.search(r"^SDK_UNUSED := ((?:.*\\\n)*.*)$", text, re.M)
    assert m, "SDK_UNUSED not found in the Makefile"
    return [p.replace("/", ".") for p in m.group(1).replace("\\\n", " ").split()]


def test_the_adapters_need_none_of_the_pruned_sdk_parts() -> None:
    blocked = pruned()
    assert {"openai.types.beta", "aws_lambda_powertools.event_handler"} <= set(blocked)
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, ",".join(blocked), str(ROOT / "tests")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("ok")


def test_the_blocker_bites() -> None:
    """The same child fails when a package the adapters do use is blocked."""
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, "openai.types.chat", str(ROOT / "tests")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert out.returncode != 0
    assert "pruned from the layer: openai.types.chat" in out.stderr
