"""What the vector search's first pass (vectors/knn.py, above EXACT_UP_TO rows)
costs in recall and gains in time, against the exact search over the same
table.

    .venv/bin/python bench/vector_recall.py [--rows 100000] [--dim 384] [--queries 200]
        [--shared 0,1,3]

Rows are random unit vectors plus ``shared`` times one common direction (0:
isotropic; 3: every pair at cosine ~0.9, as a sentence model puts most texts
near any question). Each question has ten rows leaning towards it (a
random row plus 0.6 down to 0.15 of the question, normalized): above the
rest, by less and less. Printed per setting: recall@10 and recall@20 of the
exact top k, how many of the planted ten are in the top 20 (exact / first
pass), whether the exact best is first, and the median time of each search. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from gligabao.vectors import knn


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--shared", default="0,1,3")
    args = ap.parse_args()
    print(f"{'shared':>6} {'rows':>7} {'recall@10':>9} {'recall@20':>9} {'planted':>11} "
          f"{'best first':>10} {'first pass ms':>13} {'exact ms':>8}")
    for shared in (float(x) for x in args.shared.split(",")):
        rng = np.random.default_rng(1)
        common = rng.standard_normal(args.dim).astype(np.float32)
        m = rng.standard_normal((args.rows, args.dim)).astype(np.float32) + shared * common
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        qs = rng.standard_normal((args.queries, args.dim)).astype(np.float32) + shared * common
        qs /= np.linalg.norm(qs, axis=1, keepdims=True)
        for j, q in enumerate(qs):  # ten rows leaning towards each question
            for r, share in enumerate(np.linspace(0.6, 0.15, 10)):
                i = (j * 10 + r) % args.rows
                v = share * q + (1 - share) * m[i]
                m[i] = v / np.linalg.norm(v)
        table = knn.VectorTable()
        table.set_many(list(range(args.rows)), m)
        table.search(qs[0], 20, -1.0)  # builds the codes
        r10, r20, first, t_fast, t_exact, p_got, p_want = [], [], [], [], [], [], []
        for j, q in enumerate(qs):
            planted = {(j * 10 + r) % args.rows for r in range(10)}
            t0 = time.perf_counter()
            got = [i for i, _ in table.search(q, 20, -1.0)]
            t_fast.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            scores = m @ q
            top = np.argpartition(-scores, 20)[:20]
            want = [int(i) for i in top[np.argsort(-scores[top], kind="stable")]]
            t_exact.append((time.perf_counter() - t0) * 1000)
            r10.append(len(set(got[:10]) & set(want[:10])) / 10)
            r20.append(len(set(got) & set(want)) / 20)
            first.append(got[0] == want[0])
            p_got.append(len(planted & set(got)))
            p_want.append(len(planted & set(want)))
        print(f"{shared:>6.1f} {args.rows:>7} {statistics.mean(r10):>9.3f} "
              f"{statistics.mean(r20):>9.3f} {statistics.mean(p_want):>5.2f}/{statistics.mean(p_got):<5.2f} "
              f"{sum(first):>5}/{len(first):<4} "
              f"{statistics.median(t_fast):>13.2f} {statistics.median(t_exact):>8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
