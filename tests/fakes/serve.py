"""The fake Anthropic and OpenAI servers in a process of their own, bound to HOST
(the docker bridge's address, so that `sam local` containers reach them:
infra/sam-local-check.sh), with one fact to extract and the answer that cites it.

    python tests/fakes/serve.py HOST DIM ENV_FILE

Writes ENV_FILE (JSON: the variables that point the SDKs here) once both answer,
then serves until SIGTERM / SIGINT.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI

FACT = {
    "entities": [
        {"name": "Alice", "type": "person", "description": "a person"},
        {"name": "Acme", "type": "organization", "description": "a company"},
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
ANSWER = {"answer": "At Acme.", "entities": [], "edges": [1], "passages": []}


def main(host: str, dim: int, env_file: Path) -> None:
    llm, emb = FakeAnthropic(), FakeOpenAI(dim=dim)
    llm.host = emb.host = host
    llm.default("extract", FACT).default("query", ANSWER)
    llm.start()
    emb.start()
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    tmp = env_file.with_suffix(".tmp")
    tmp.write_text(json.dumps({**llm.env("sk-ant-fake"), **emb.env("sk-fake")}))
    tmp.replace(env_file)
    done.wait()
    llm.stop()
    emb.stop()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]))
