"""Inference cost of the graded losses against the binary AP `qs` call (issue 25 part 5).

    python benchmarks/bench_graded_lai.py            # N = 1e2 .. 1e6
    python benchmarks/bench_graded_lai.py --quick    # N <= 1e4

One query of N samples, seeded: levels 0 .. L−1 drawn with probabilities proportional
to 2^-l (most samples irrelevant, as in LTR data), scores ~ N(level / 2, 1). The
baseline is AP's `qs` inference on the same scores with relevance level > 0 (the call
RankSVM makes on binary labels). Timed: the pairwise loss (SVM-rank's, both
pair_losses share it) with 3 and 5 levels, graded NDCG@10 with 3 and 5 levels, and
graded NDCG without truncation with 3 levels (whose exact programme has Π(n_l + 1)
states: refused beyond svmrank.graded.MAX_DP_STATES, the table says so). Each cell is
the best of 3 rounds (benchmarks/_common.best_time) of the call alone; a column stops
once one call takes more than --stop seconds.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_time, description, machine_line, print_table  # noqa: E402
from svmrank.graded import MAX_DP_STATES, ndcg_inference, ndcg_states, pairs_inference  # noqa: E402
from svmrank.inference import lai_queries_unchecked  # noqa: E402


def make_query(n, n_levels, seed=0):
    rng = np.random.default_rng(seed)
    p = 2.0 ** -np.arange(n_levels)
    levels = rng.choice(n_levels, n, p=p / p.sum()).astype(np.int64)
    return rng.normal(size=n) + levels / 2.0, levels


def main(argv=None):
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--quick", action="store_true", help="N up to 1e4 only")
    parser.add_argument("--stop", type=float, default=3.0,
                        help="seconds after which a column stops (default 3)")
    args = parser.parse_args(argv)
    Ns = [10**2, 10**3, 10**4] if args.quick else [10**2, 10**3, 10**4, 10**5, 10**6]
    print(machine_line())
    print()
    columns = ["pairs L=3", "pairs L=5", "NDCG@10 L=3", "NDCG@10 L=5", "NDCG L=3"]
    stopped = set()
    rows = []
    for N in Ns:
        s3, l3 = make_query(N, 3)
        s5, l5 = make_query(N, 5)
        offsets = np.array([0, N], dtype=np.int64)
        relevant = l3 > 0
        t_ap = best_time(lambda: lai_queries_unchecked(s3, relevant, None, offsets, "ap", "qs"),
                         repeat=3, min_time=0.05)
        calls = {
            "pairs L=3": lambda: pairs_inference(s3, l3, offsets, np.array([3], np.int64)),
            "pairs L=5": lambda: pairs_inference(s5, l5, offsets, np.array([5], np.int64)),
            "NDCG@10 L=3": lambda: ndcg_inference(s3, l3, 10, "exp"),
            "NDCG@10 L=5": lambda: ndcg_inference(s5, l5, 10, "exp"),
            "NDCG L=3": lambda: ndcg_inference(s3, l3, None, "exp"),
        }
        row = [N, 1e3 * t_ap]
        for name in columns:
            if name == "NDCG L=3":
                states = ndcg_states(np.bincount(l3, minlength=3), None)
                if states > MAX_DP_STATES:
                    row.append(f"refused ({states:.2g} states)")
                    continue
            if name in stopped:
                row.append("stopped")
                continue
            t = best_time(calls[name], repeat=3, min_time=0.0)
            if t > args.stop:
                stopped.add(name)
            row.append(f"{1e3 * t:.4g} ({t / t_ap:.3g}x)")
        rows.append(row)
        print(f"done N={N}", file=sys.stderr, flush=True)
    print("Times in ms (ratio to AP qs on the same scores); best of 3 rounds\n")
    print_table(["N", "AP qs"] + columns, rows)


if __name__ == "__main__":
    main()
