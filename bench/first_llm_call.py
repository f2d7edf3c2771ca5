"""The first LLM call of a cold function on the default stack (Claude on
Bedrock): what a fresh interpreter spends on it (its imports, the client,
SigV4, the request to the fake Bedrock of tests/fakes on loopback), then a
second call beside it (the request alone).

    .venv/bin/python -m bench.first_llm_call [--runs 5] [--against DIR]

``--against DIR``: another tree's shared/ folder (``git archive REV shared |
tar -x -C DIR``), run by run beside this one, e.g. a tree whose Bedrock
adapter went through the anthropic SDK. Both trees' bytecode is compiled
first, as the layer ships it. Wall and CPU milliseconds, median of the runs.
"""

from __future__ import annotations

import argparse
import compileall
import json
import subprocess
import sys
from pathlib import Path

from .harness import ROOT
from .harness.tables import table
from .harness.timing import load_average, median

# Run in the child: the clock starts before the adapter's module is imported.
CHILD = """
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
from gligabao.ai.bedrock_llm import BedrockLLM
from gligabao.ai.port import LLMRequest
llm = BedrockLLM(sys.argv[1], endpoint_url=sys.argv[2], max_retries=0)
req = LLMRequest("query", "[stage: query] answer in JSON", "Where does Alice work?", sys.argv[3])
llm.complete(req)
t1, c1 = time.perf_counter(), time.process_time()
llm.complete(req)
t2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({"first": (t1 - t0) * 1000, "first_cpu": (c1 - c0) * 1000,
                  "second": (t2 - t1) * 1000, "second_cpu": (c2 - c1) * 1000}))
"""
MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def run_once(shared: Path, env: dict[str, str], region: str, url: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, region, url, MODEL],
        env={**env, "PYTHONPATH": str(shared)},
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"{shared}: the call failed:\n{out.stderr[-2000:]}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--against", type=Path, help="another tree's shared/ folder")
    args = ap.parse_args()
    from tests.fakes.bedrock_server import FakeBedrock

    trees = {"this tree": ROOT / "shared"}
    if args.against:
        trees[f"{args.against}"] = args.against.resolve()
    for shared in trees.values():
        compileall.compile_dir(str(shared / "gligabao"), quiet=1)
    seen: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    with FakeBedrock() as fake:
        env = fake.child_env()
        for _ in range(args.runs):
            for name, shared in trees.items():
                fake.script("query", {"answer": "Acme"}, times=2)
                seen[name].append(run_once(shared, env, fake.region, fake.url))
    rows = []
    for name, runs in seen.items():
        rows.append(
            [
                name,
                *(
                    f"{median([r[k] for r in runs]):.0f}"
                    for k in ("first", "first_cpu", "second", "second_cpu")
                ),
            ]
        )
    print(
        f"First Claude-on-Bedrock call in a fresh interpreter, median of {args.runs} ({load_average()})"
    )
    print(table(["tree", "first ms", "first CPU ms", "second ms", "second CPU ms"], rows, left=1))


if __name__ == "__main__":
    main()
