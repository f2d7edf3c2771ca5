"""What the one-bit first pass of ``vectors/knn.py`` (tables above
``EXACT_UP_TO`` rows) keeps of the exact search, and what it costs.

    .venv/bin/python -m bench.vector_recall [--rows 100000] [--dim 384] [--questions 100]

Random unit rows (the synthetic graph's vectors are hashed, as random), and
per question ten rows planted at cosines 0.35 to 0.85 of it (what a query
finds above its threshold). Printed per threshold: how many of the exact
top 20 at or above it the table returns, and each way's median time; then
the overlap of the two top 20s with no threshold (the tail there is noise
near cosine 0.1, where the order is what the first pass may change).
Printed, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from gligabao.vectors import knn

PLANTED = np.linspace(0.35, 0.85, 10)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--questions", type=int, default=100)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    m = rng.standard_normal((args.rows, args.dim)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    qs = []
    step = args.rows // args.questions
    for j in range(args.questions):
        q = rng.standard_normal(args.dim).astype(np.float32)
        q /= np.linalg.norm(q)
        qs.append(q)
        for r, cos in enumerate(PLANTED):
            u = rng.standard_normal(args.dim).astype(np.float32)
            u -= (u @ q) * q
            u /= np.linalg.norm(u)
            m[j * step + r] = cos * q + np.sqrt(1 - cos * cos) * u
    table = knn.VectorTable()
    table.set_many(list(range(args.rows)), m)
    table.search(qs[0], 20, -1.0)  # builds the codes
    t_exact, t_table = [], []
    for threshold in (0.3, 0.4, 0.5, 0.75):
        kept = total = 0
        for q in qs:
            t0 = time.perf_counter()
            s = m @ q  # the exact search as the store did it: the product, the best 20
            top = np.argpartition(-s, 20)[:20]
            exact = {int(i) for i in top if s[i] >= threshold}
            t_exact.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            got = {i for i, _ in table.search(q, 20, threshold)}
            t_table.append((time.perf_counter() - t0) * 1000)
            kept += len(exact & got)
            total += len(exact)
        print(f"threshold {threshold}: {kept}/{total} of the exact hits kept")
    same = sum(
        len({int(i) for i in np.argsort(-(m @ q))[:20]} & {i for i, _ in table.search(q, 20, -1.0)})
        for q in qs
    )
    print(f"no threshold: {same}/{20 * len(qs)} of the exact top 20 (the noise tail differs)")
    print(
        f"{args.rows} rows x {args.dim}: exact {statistics.median(t_exact):.2f} ms, "
        f"first pass + rescoring {statistics.median(t_table):.2f} ms (medians)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
