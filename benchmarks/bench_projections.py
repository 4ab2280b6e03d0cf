"""Top-k projections: time per element as a ratio to np.sort of the same vector.

Usage: python benchmarks/bench_projections.py [--quick]

For m in {1e3, 1e4, 1e5} and k in {1, 5, 10, 100, 1000} (k < m) the biased top-k
simplex projection (r = 1, rho = 1, the Prox-SDCA setting of Prop. 4) is timed on
four inputs:
  N(0,1)        a ~ N(0,1)
  N(0,1)+2      shifted up: the budget <1,x> <= r is active (knapsack case)
  0.1*N(0,1)    small scores: the budget is slack, few active entries (walk case)
  all-active    0.5 + (0.05/m) N(0,1): budget slack and EVERY entry strictly
                between its bounds, so the walk must order the whole vector
                (the hardest sort-and-search input)
The case that applied is read off the result (<1,x> = r: knapsack, else walk).
Ratios: "kernel" is svmrank._topk_fast (new array + projection, no validation),
"public" is svmrank.projections (with validation). Both against np.sort(a) timed in
the same run, interleaved: each ratio is the median over 5 rounds of the times taken
side by side in a round. Targets: <= 0.5 (knapsack case),
<= 1.5 (walk case), judged on the kernel ratio.
A second table times the beta-loss box projection and the plain knapsack on N(0,1).
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from _common import best_time, description, machine_line, print_table
from svmrank import _topk_fast
from svmrank.projections import project_knapsack, project_topk_box, project_topk_simplex

_parser = argparse.ArgumentParser(description=description(__doc__))
_parser.add_argument("--quick", action="store_true", help="m up to 1e4 only")
QUICK = _parser.parse_args().quick if __name__ == "__main__" else False
MS = [1000, 10000] if QUICK else [1000, 10000, 100000]
KS = [1, 5, 10, 100, 1000]
R, RHO = 1.0, 1.0
ROUNDS = 5  # sort and projections are timed alternately, ROUNDS times


def ratios(a, fns):
    """Best time of np.sort(a), and each fn's time over the sort's time in the same
    round, median over the rounds (the machine is shared: a ratio of times taken side
    by side sees the same load in both; best times taken in different rounds need not)."""
    times = np.array([[best_time(fn, repeat=1, min_time=0.02)
                       for fn in [lambda: np.sort(a)] + list(fns)] for _ in range(ROUNDS)])
    return times[:, 0].min(), list(np.median(times[:, 1:] / times[:, :1], axis=0))


def inputs(m, rng):
    z = rng.normal(size=m)
    return [("N(0,1)", z), ("N(0,1)+2", z + 2.0), ("0.1*N(0,1)", 0.1 * z),
            ("all-active", 0.5 + 0.05 / m * z)]


def main():
    rng = np.random.default_rng(0)
    rows, rows2, misses = [], [], []
    for m in MS:
        for name, a in inputs(m, rng):
            for k in KS:
                if k >= m:
                    continue
                x = _topk_fast.topk_simplex(a, k, R, RHO)
                case = "knapsack" if x.sum() >= R * (1 - 1e-12) else "walk"
                active = int(np.count_nonzero(x))
                t_sort, (q_kern, q_pub) = ratios(a, [
                    lambda: _topk_fast.topk_simplex(a, k, R, RHO),
                    lambda: project_topk_simplex(a, k, R, RHO)])
                target = 0.5 if case == "knapsack" else 1.5
                met = q_kern <= target
                if not met:
                    misses.append((m, k, name))
                rows.append([m, k, name, case, active, f"{t_sort / m * 1e9:.2f}",
                             f"{q_kern:.2f}", f"{q_pub:.2f}", f"<= {target}",
                             "yes" if met else "NO"])
        a = rng.normal(size=m)
        for k in KS:
            if k >= m:
                continue
            t_sort, q = ratios(a, [lambda: _topk_fast.topk_box(a, k, R, RHO),
                                   lambda: project_topk_box(a, k, R, RHO),
                                   lambda: _topk_fast.knapsack(a, 0.0, R / k, R),
                                   lambda: project_knapsack(a, 0.0, R / k, R)])
            rows2.append([m, k, f"{t_sort / m * 1e9:.2f}"] + [f"{v:.2f}" for v in q])
    print(machine_line())
    print()
    print("Top-k simplex, biased (r = 1, rho = 1): time / np.sort time")
    print()
    print_table(["m", "k", "input", "case", "nonzeros", "np.sort ns/elem", "kernel",
                 "public", "target", "met"], rows)
    print()
    print("Box (beta loss, r = 1, rho = 1) and knapsack (sum = 1, 0 <= x <= 1/k), N(0,1):"
          " time / np.sort time")
    print()
    print_table(["m", "k", "np.sort ns/elem", "box kernel", "box public", "knapsack kernel",
                 "knapsack public"], rows2)
    print()
    print(f"targets missed: {len(misses)} of {len(rows)}"
          + ("" if not misses else ": " + ", ".join(f"m={m} k={k} {n}" for m, k, n in misses)))


if __name__ == "__main__":
    main()
