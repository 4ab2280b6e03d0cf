"""Loss-augmented inference time: `qs` against `greedy`, the other exact methods, a
NumPy argsort of the same scores and the 0-1 loss inference, on synthetic scores.

    python benchmarks/bench_lai.py            # full grid
    python benchmarks/bench_lai.py --quick    # N <= 1e5

Scores: positives ~ N(1, 1), negatives ~ N(0, 1) (a partly trained model), one query,
seeded. Every cell is the best of several rounds (benchmarks/_common.best_time) of the
kernel call alone (lai_queries; validation is outside the timed call). Greedy costs
O(NP): cells with N·P > 2e9 are not run but extrapolated from the same P at N/10
(greedy time is linear in N at fixed P up to the N log N sort); the table says so.

Targets (issues 2 and 3): AP qs at N=1e6, P=1e3 faster than np.argsort; AP qs at
N=1e5, P=1e3 at least 100x faster than greedy; NDCG qs at least 100x faster than NDCG
greedy there; AP qs faster than search+select at N=1e6, P=1e3 and at most 3x a 0-1 call.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_time, machine_line, print_table  # noqa: E402
from svmrank.inference import lai_queries  # noqa: E402

GREEDY_LIMIT = 2e9  # N·P beyond which greedy is extrapolated


def make_scores(n_neg, n_pos, seed=0):
    rng = np.random.default_rng(seed)
    relevant = np.zeros(n_neg + n_pos, dtype=bool)
    relevant[rng.choice(n_neg + n_pos, n_pos, replace=False)] = True
    scores = rng.normal(size=n_neg + n_pos) + relevant
    return scores, relevant


def zero_one_inference(scores, sign):
    """The binary SVM's most violated labelling (error-rate loss): flip every sample with
    y·s < 1; returns the loss and the per-sample coefficients."""
    flipped = sign * scores < 1.0
    return flipped.mean(), np.where(flipped, sign, 0.0)


def timer(scores, relevant, loss, method, repeat):
    offsets = np.array([0, len(scores)])  # rows in place, as the learners call it
    return best_time(lambda: lai_queries(scores, relevant, None, offsets, loss, method),
                     repeat=repeat, min_time=0.05)


def once(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 1e5 only")
    args = parser.parse_args(argv)
    Ns = [10**4, 10**5] if args.quick else [10**4, 10**5, 10**6]
    Ps = [10, 10**3, 10**4]
    print(machine_line())
    print()
    rows, ndcg_rows = [], []
    greedy_ap, greedy_ndcg = {}, {}
    for N in Ns:
        for P in Ps:
            scores, relevant = make_scores(N, P)
            sign = np.where(relevant, 1.0, -1.0)
            offsets = np.array([0, len(scores)])
            t_sort = best_time(lambda: np.argsort(scores), repeat=3, min_time=0.05)
            t_01 = best_time(lambda: zero_one_inference(scores, sign), repeat=3, min_time=0.05)
            t_qs = timer(scores, relevant, "ap", "qs", 3)
            t_ss = timer(scores, relevant, "ap", "search+select", 3)
            t_nqs = timer(scores, relevant, "ndcg", "qs", 3)
            cells = []
            for loss, store in (("ap", greedy_ap), ("ndcg", greedy_ndcg)):
                if N * P <= GREEDY_LIMIT:
                    store[N, P] = (once(lambda: lai_queries(scores, relevant, None, offsets,
                                                            loss, "greedy")), "")
                else:
                    store[N, P] = (10 * store[N // 10, P][0], " (extrapolated)")
                cells.append(store[N, P])
            (t_gr, note), (t_ngr, nnote) = cells
            rows.append([N, P, 1e3 * t_sort, 1e3 * t_01, 1e3 * t_qs, 1e3 * t_ss,
                         f"{1e3 * t_gr:.4g}{note}", t_qs / t_sort, t_qs / t_01, t_ss / t_qs,
                         f"{t_gr / t_qs:.4g}{note}"])
            ndcg_rows.append([N, P, 1e3 * t_nqs, f"{1e3 * t_ngr:.4g}{nnote}",
                              f"{t_ngr / t_nqs:.4g}{nnote}"])
            print(f"done N={N} P={P}", file=sys.stderr, flush=True)
    print("AP loss (times in ms; greedy timed once, the others best of 3 rounds)\n")
    print_table(["N", "P", "argsort", "0-1", "qs", "search+select", "greedy", "qs/argsort",
                 "qs/0-1", "(search+select)/qs", "greedy/qs"], rows)
    print("\nNDCG loss (times in ms; greedy = Chakrabarti et al.'s O(NP + N log N), timed once)\n")
    print_table(["N", "P", "qs", "greedy", "greedy/qs"], ndcg_rows)


if __name__ == "__main__":
    main()
