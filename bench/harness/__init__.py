"""The benchmarks' shared harness: servers and child processes (`servers`), the
fake LLM and embeddings servers of tests/fakes (`fakes`), HTTP (`http`), timing
and percentiles (`timing`), tables (`tables`), deterministic vectors
(`vectors`), a synthetic graph (`synthetic_graph`), the small-world workload
of the load benchmarks (`workload`) and moto at scale (`moto`).

Nothing here is imported on `import bench.harness`: `vectors` runs in other
venvs too (numpy only), and the rest loads gligabao or the fakes on use.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
