"""Parallel speed-up on one machine (issue 28 part 5, the "threads" section): the
per-query loss-augmented inference and whole fits, 1 thread against 2 (or --threads),
on MQ2008 Fold1 train and on a generated ranking set.

The inference rows time ``svmrank.inference.lai_queries`` (AP loss, qs method) on the
scores of a fixed random w; the fit rows time ``RankSVM(loss="ap", C=...)`` with its qid.
Times are the best of interleaved rounds (both thread counts in each round), and the
table checks that both counts give bitwise the same result.

The generated set (seeded) has Q queries of 20 to 180 rows (100 on average), 20 non-zeros
a row over 1e4 features; ``--queries`` sets Q (default 20000 for the inference, a tenth
of it for the fit).

Usage: python benchmarks/bench_threads.py [--threads N] [--queries Q] [--quick]
"""
import argparse
import multiprocessing
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import description, interleaved_times, machine_line  # noqa: E402
from _common import positive_int, print_table, shared_file_or_exit  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from svmrank.estimators.ranking import RankSVM  # noqa: E402
from svmrank.inference import lai_queries  # noqa: E402
from svmrank.io import load_svmlight  # noqa: E402
from svmrank.parallel import threads  # noqa: E402


def generated_set(n_queries, seed=0, n_features=10_000, nnz=20):
    """X (CSR), y (0/1), qid of a seeded ranking set: relevance follows a hidden w."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(20, 181, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    n = qid.size
    indices = np.sort(rng.integers(0, n_features, (n, nnz)), axis=1).astype(np.int32)
    data = rng.normal(size=(n, nnz))
    X = sp.csr_matrix((data.ravel(), indices.ravel(), np.arange(0, n * nnz + 1, nnz)),
                      shape=(n, n_features))
    X.sum_duplicates()
    w = rng.normal(size=n_features)
    s = X @ w + rng.normal(size=n)
    y = (s > np.quantile(s, 0.85)).astype(np.float64)
    return X, y, qid


def inference_row(name, X, y, qid, n_threads):
    """[data, rows, queries, t1, tN, speed-up, same] for lai_queries on X's scores."""
    order = np.argsort(qid, kind="stable")
    starts = np.flatnonzero(np.r_[True, qid[order][1:] != qid[order][:-1]])
    offsets = np.r_[starts, qid.size].astype(np.intp)
    scores = np.ascontiguousarray((X @ np.random.default_rng(1).normal(size=X.shape[1]))[order])
    relevant = y[order] > 0

    def run(k):
        with threads(k):
            return lai_queries(scores, relevant, None, offsets)

    same = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(run(1), run(n_threads)))
    t1, tn = interleaved_times([lambda: run(1), lambda: run(n_threads)], repeat=7, min_time=0.2)
    return [name, qid.size, offsets.size - 1, f"{t1 * 1e3:.2f}", f"{tn * 1e3:.2f}",
            f"{t1 / tn:.2f}x", same]


def fit_row(name, X, y, qid, n_threads, C, repeat):
    """[data, rows, iterations, t1, tN, speed-up, same] for a RankSVM fit."""
    def fit(k):
        return RankSVM(loss="ap", C=C, n_jobs=k).fit(X, y, qid=qid)

    a, b = fit(1), fit(n_threads)
    same = bool(np.array_equal(a.coef_, b.coef_) and a.objective_ == b.objective_)
    best = [np.inf, np.inf]
    for _ in range(repeat):  # (interleaved: a slow spell falls on both)
        for j, k in enumerate((1, n_threads)):
            t0 = time.perf_counter()
            fit(k)
            best[j] = min(best[j], time.perf_counter() - t0)
    return [name, X.shape[0], a.n_iter_, f"{best[0]:.2f}", f"{best[1]:.2f}",
            f"{best[0] / best[1]:.2f}x", same]


def topk_rows(n_threads, repeat):
    """TopKSVM(k=5) on letter, n_jobs=1 vs n_threads: one gap check (the losses over
    blocks of rows, ``blockwise_losses``, the part that runs on threads) and a whole
    fit, whose epochs stay sequential. Rows: [what, 1 thread, N threads, speed-up, same]."""
    from svmrank.estimators.topk import TopKSVM
    from svmrank.learners.sdca import blockwise_losses
    X, y, _ = load_svmlight(shared_file_or_exit("letter", "letter.scale.svm"))
    classes, codes = np.unique(y, return_inverse=True)
    codes = codes.astype(np.intp)
    W = np.random.default_rng(0).normal(size=(X.shape[1], classes.size))

    def gap(k):
        return blockwise_losses(X, W, codes, 5, "alpha", k)

    same_gap = bool(np.array_equal(gap(1), gap(n_threads)))
    g1, gn = interleaved_times([lambda: gap(1), lambda: gap(n_threads)], repeat=7,
                               min_time=0.2)

    def fit(k):
        return TopKSVM(k=5, random_state=0, n_jobs=k).fit(X, y)

    a = fit(1)
    best = [np.inf, np.inf]
    for _ in range(repeat):  # (interleaved: a slow spell falls on both)
        for j, k in enumerate((1, n_threads)):
            t0 = time.perf_counter()
            b = fit(k)
            best[j] = min(best[j], time.perf_counter() - t0)
    same_fit = bool(np.array_equal(a.coef_, b.coef_) and a.history_[-1][:4] == b.history_[-1][:4])
    return [["one gap check (ms)", f"{g1 * 1e3:.1f}", f"{gn * 1e3:.1f}", f"{g1 / gn:.2f}x",
             same_gap],
            [f"whole fit, {a.n_iter_} epochs (s)", f"{best[0]:.2f}", f"{best[1]:.2f}",
             f"{best[0] / best[1]:.2f}x", same_fit]]


def _spin(n=20_000_000):
    total = 0
    for i in range(n):
        total += i
    return total


def _timed_spin(barrier, times):
    barrier.wait()
    t0 = time.perf_counter()
    _spin()
    times.put(time.perf_counter() - t0)


def free_cores(n_threads, repeat=3):
    """Control: one CPU loop alone against n_threads copies in parallel processes, best
    of ``repeat``; each copy clocks its own loop after a common start (process start-up
    is not counted), so n_threads x t1 / max(tN) is the speed-up the machine has room
    for now."""
    alone = together = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        _spin()
        alone = min(alone, time.perf_counter() - t0)
        barrier, times = multiprocessing.Barrier(n_threads), multiprocessing.Queue()
        procs = [multiprocessing.Process(target=_timed_spin, args=(barrier, times))
                 for _ in range(n_threads)]
        for p in procs:
            p.start()
        together = min(together, max(times.get() for _ in procs))
        for p in procs:
            p.join()
    return n_threads * alone / together


def threads_section(n_threads=2, n_queries=20_000, quick=False):
    """Print the "threads" tables."""
    print(machine_line())
    print(f"Control: {n_threads} processes of a CPU loop run {free_cores(n_threads):.2f}x "
          "as much work per second as one (the speed-up the machine has room for now)")
    path = shared_file_or_exit("mq2008", "Fold1", "train.txt")
    Xm, ym, qm = load_svmlight(path)
    ym = (ym > 0).astype(np.float64)
    Xg, yg, qg = generated_set(n_queries // (10 if quick else 1))
    print(f"\nPer-query inference (lai_queries, AP, qs), 1 vs {n_threads} threads:\n")
    print_table(["data", "rows", "queries", "1 thread ms", f"{n_threads} threads ms",
                 "speed-up", "same result"],
                [inference_row("MQ2008 Fold1 train", Xm, ym, qm, n_threads),
                 inference_row("generated", Xg, yg, qg, n_threads)])
    Xf, yf, qf = generated_set(max(1, n_queries // (100 if quick else 10)), seed=2)
    print(f"\nWhole fit (RankSVM loss='ap' with qid, n_jobs=1 vs {n_threads}):\n")
    print_table(["data", "rows", "iterations", "1 thread s", f"{n_threads} threads s",
                 "speed-up", "same result"],
                [fit_row("MQ2008 Fold1 train, C=1e3", Xm, ym, qm, n_threads, 1e3, 3),
                 fit_row("generated, C=1e2", Xf, yf, qf, n_threads, 1e2, 3)])
    print(f"\nTopKSVM(k=5) on letter (20000 x 16, 26 classes), n_jobs=1 vs {n_threads}:\n")
    print_table(["what", "1 thread", f"{n_threads} threads", "speed-up", "same result"],
                topk_rows(n_threads, 1 if quick else 2))


def main(argv=None):
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--threads", type=positive_int, default=2, help="threads against one (default 2)")
    ap.add_argument("--queries", type=int, default=20_000, help="queries of the generated set")
    ap.add_argument("--quick", action="store_true", help="a tenth of the generated sizes")
    args = ap.parse_args(argv)
    threads_section(args.threads, args.queries, args.quick)


if __name__ == "__main__":
    main()
