"""Latent AP-SVM against latent SVM and latent SSVM (behl2014 §5), and the cost of its
loss-augmented inference.

Three tables:

1. musk1, elephant, fox, tiger (../shared/data): 5-fold cross-validation over bags
   (stratified, the same folds for every method), features standardised on each
   training fold; grid C for latent AP-SVM and latent SSVM, C × J × c for latent SVM;
   the best grid point's mean ± std of bag-ranking AP, and the mean fit time.
2. A synthetic supervision study (svmrank.datasets.make_bags): the supervision level S
   (fraction of bags whose true candidate is known) from 100% to 0%, the shape of the
   paper's Figure 1.
3. The per-iteration loss-augmented inference of latent AP-SVM (each negative bag's
   argmax, Prop. 3, then the AP inference over bags) against supervised AP-SVM's on the
   same candidates taken as samples, and the whole most-violated-constraint call of both
   (with the two mat-vecs) and of latent SVM.

Usage: python benchmarks/bench_latent.py [--jobs 2] [--n-init 3] [--quick]
"""
import argparse
import itertools
import os
import sys
import time
import warnings
from multiprocessing import Pool

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import best_time, machine_line, print_table, shared_file_or_exit  # noqa: E402

from svmrank.bags import check_bag_labels, check_bags, check_known, load_bags  # noqa: E402
from svmrank.datasets import make_bags  # noqa: E402
from svmrank.estimators.latent import LatentAPSVM, LatentSSVM, LatentSVM  # noqa: E402
from svmrank.inference import lai_queries  # noqa: E402
from svmrank.problems.latent import LatentAPProblem, LatentBinaryProblem  # noqa: E402
from svmrank.problems.ranking import RankingProblem  # noqa: E402

MIL_SETS = ["musk1", "elephant", "fox", "tiger"]
METHODS = ["latent AP-SVM", "latent SVM", "latent SSVM"]
EPSILON = 0.01
FOLD_SEED = 20140623


def grids(C_grid, J_values, c_grid):
    """(method, params) pairs of the hyper-parameter grid."""
    out = [("latent AP-SVM", dict(C=C)) for C in C_grid]
    out += [("latent SSVM", dict(C=C)) for C in C_grid]
    out += [("latent SVM", dict(C=C, J=J, c=c)) for C, J, c in itertools.product(C_grid, J_values, c_grid)]
    return out


def make(method, params, n_init, init):
    common = dict(epsilon=EPSILON, n_init=n_init, random_state=0, init=init)
    cls = {"latent AP-SVM": LatentAPSVM, "latent SVM": LatentSVM, "latent SSVM": LatentSSVM}[method]
    return cls(**params, **common)


def stratified_folds(labels, k, seed):
    """Fold number of every bag, each class spread evenly over the k folds."""
    rng = np.random.default_rng(seed)
    fold = np.empty(len(labels), dtype=np.int64)
    for cls in (labels > 0, labels <= 0):
        members = rng.permutation(np.flatnonzero(cls))
        fold[members] = np.arange(members.size) % k
    return fold


def cross_validate(task):
    """Mean/std AP and mean fit time of one grid point over the folds."""
    X, y, bags, known, folds, method, params, n_init, init = task
    index = check_bags(bags, X.shape[0])
    bag_of_row = index.bag_of_row()
    aps, times, n_warn = [], [], 0
    for f in np.unique(folds):
        train_rows = folds[bag_of_row] != f
        Xtr, Xte = X[train_rows], X[~train_rows]
        mean, std = Xtr.mean(axis=0), Xtr.std(axis=0)
        std[std == 0] = 1.0
        Xtr, Xte = (Xtr - mean) / std, (Xte - mean) / std
        est = make(method, params, n_init, init)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            est.fit(Xtr, y[train_rows], bags=bags[train_rows],
                    known=None if known is None else known[train_rows])
            times.append(time.perf_counter() - t0)
        n_warn += len(caught)
        aps.append(est.score(Xte, y[~train_rows], bags=bags[~train_rows]))
    return method, params, float(np.mean(aps)), float(np.std(aps)), float(np.mean(times)), n_warn


def best_per_method(results):
    best = {}
    for method, params, mean, std, t, n_warn in results:
        if method not in best or mean > best[method][2]:
            best[method] = (method, params, mean, std, t, n_warn)
    return best


def fmt_params(params):
    return ", ".join(f"{k}={v:g}" for k, v in params.items())


def run_grid(pool, X, y, bags, known, folds, grid, args):
    tasks = [(X, y, bags, known, folds, m, p, args.n_init, args.init) for m, p in grid]
    results = pool.map(cross_validate, tasks, chunksize=1) if pool else list(map(cross_validate, tasks))
    return results, best_per_method(results)


def mil_table(pool, args):
    rows, wins, total_warn = [], 0, 0
    for name in args.datasets:
        t0 = time.perf_counter()
        X, y, bags, known = load_bags(shared_file_or_exit(name, f"{name}.mil.svm"))
        X = X.toarray()
        index = check_bags(bags, X.shape[0])
        labels = check_bag_labels(y, index)
        folds = stratified_folds(labels, 5, FOLD_SEED)
        ratio = len(labels) / max(1, int((labels > 0).sum()))
        grid = grids(args.C, [1.0, ratio], args.c)
        results, best = run_grid(pool, X, y, bags, None, folds, grid, args)
        total_warn += sum(r[5] for r in results)
        ap, svm, ssvm = (best[m] for m in METHODS)
        wins += ap[2] >= svm[2]
        rows.append([name, f"{ap[2]:.3f} ± {ap[3]:.3f} ({fmt_params(ap[1])})",
                     f"{svm[2]:.3f} ± {svm[3]:.3f} ({fmt_params(svm[1])})",
                     f"{ssvm[2]:.3f} ± {ssvm[3]:.3f} ({fmt_params(ssvm[1])})",
                     f"{ap[2] - svm[2]:+.3f}",
                     f"{ap[4]:.2f} / {svm[4]:.2f} / {ssvm[4]:.2f}",
                     f"{time.perf_counter() - t0:.0f}"])
        print(f"  {name} done in {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    print("\n### Bag-ranking AP, 5-fold CV (best grid point per method)\n")
    print_table(["data set", "latent AP-SVM", "latent SVM", "latent SSVM",
                 "AP-SVM − SVM", "fit time s (AP / SVM / SSVM)", "grid wall s"], rows)
    print(f"\nLatent AP-SVM >= latent SVM on {wins} of {len(args.datasets)} data sets "
          f"(target: >= 3 of 4). {total_warn} warnings (ConvergenceWarning) over all fits.")


def supervision_table(pool, args):
    rows = []
    for S in args.levels:
        X, y, bags, known = make_bags(n_bags=args.synthetic_bags, bag_size=(2, 8),
                                      positive_fraction=0.2, separation=3.0, clutter=1.2,
                                      supervision=S / 100.0, random_state=7)
        index = check_bags(bags, X.shape[0])
        labels = check_bag_labels(y, index)
        folds = stratified_folds(labels, 5, FOLD_SEED)
        grid = grids(args.C_synthetic, [1.0, len(labels) / (labels > 0).sum()], args.c)
        _, best = run_grid(pool, X, y, bags, known, folds, grid, args)
        ap, svm, ssvm = (best[m] for m in METHODS)
        rows.append([f"{S}%", f"{ap[2]:.3f} ± {ap[3]:.3f}", f"{svm[2]:.3f} ± {svm[3]:.3f}",
                     f"{ssvm[2]:.3f} ± {ssvm[3]:.3f}", f"{ap[2] - svm[2]:+.3f}",
                     f"{ap[2] - ssvm[2]:+.3f}"])
        print(f"  S={S}% done", file=sys.stderr, flush=True)
    print(f"\n### Supervision study (make_bags: {args.synthetic_bags} bags of 2-8 candidates, "
          "20% positive, separation 3, clutter 1.2; 5-fold CV, best grid point)\n")
    print_table(["S (known candidates)", "latent AP-SVM", "latent SVM", "latent SSVM",
                 "AP-SVM − SVM", "AP-SVM − SSVM"], rows)


def inference_table(args):
    rows = []
    cases = [(name, load_bags(shared_file_or_exit(name, f"{name}.mil.svm"))) for name in args.datasets]
    cases.append(("synthetic 20k bags", make_bags(n_bags=20000, bag_size=(5, 15), n_features=50,
                                                  random_state=3)))
    worst = 0.0
    for name, (X, y, bags, _) in cases:
        index = check_bags(bags, X.shape[0])
        labels = check_bag_labels(y, index)
        known = check_known(None, index)
        w = np.random.default_rng(0).normal(size=X.shape[1])
        latent = LatentAPProblem(X, index, labels, known)
        latent.set_state(latent.impute(w))
        supervised = RankingProblem(X, y)  # every candidate a sample with its bag's label
        binary = LatentBinaryProblem(X, index, labels, known)
        binary.set_state(binary.impute(np.r_[w, 0.0]))
        s = latent.scores(w)
        rel_rows = y > 0
        order_rows, off_rows = np.arange(len(s), dtype=np.int64), np.array([0, len(s)], np.int64)
        order_bags = np.arange(index.n_bags, dtype=np.int64)
        off_bags = np.array([0, index.n_bags], np.int64)

        def latent_lai():
            _, values = index.argmax(s, known=latent.state)
            lai_queries(values, latent.relevant, order_bags, off_bags, "ap", "qs")

        def supervised_lai():
            lai_queries(s, rel_rows, order_rows, off_rows, "ap", "qs")

        t_lat, t_sup = best_time(latent_lai), best_time(supervised_lai)
        t_lat_mv = best_time(lambda: latent.most_violated(w))
        t_sup_mv = best_time(lambda: supervised.most_violated(w))
        t_bin_mv = best_time(lambda: binary.most_violated(np.r_[w, 0.0]))
        worst = max(worst, t_lat / t_sup)
        rows.append([name, X.shape[0], index.n_bags, f"{t_sup * 1e6:.0f}", f"{t_lat * 1e6:.0f}",
                     f"{t_lat / t_sup:.2f}", f"{t_sup_mv * 1e6:.0f}", f"{t_lat_mv * 1e6:.0f}",
                     f"{t_lat_mv / t_sup_mv:.2f}", f"{t_bin_mv * 1e6:.0f}",
                     f"{t_lat_mv / t_bin_mv:.2f}"])
    print("\n### Loss-augmented inference per cutting-plane iteration (µs, best of 5)\n")
    print_table(["data", "candidates", "bags", "AP-SVM LAI", "latent AP-SVM LAI",
                 "ratio (target <= 5)", "AP-SVM most_violated", "latent AP-SVM most_violated",
                 "ratio", "latent SVM most_violated", "latent AP / latent SVM"], rows)
    print(f"\nWorst latent / supervised LAI ratio: {worst:.2f} (target <= 5).")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--n-init", type=int, default=3, help="random initialisations (default 3)")
    p.add_argument("--init", choices=["random", "instances"], default="instances",
                   help="CCCP initialisation of every method (default instances: the first of "
                        "the n_init starts is instance-level, the others random)")
    p.add_argument("--datasets", nargs="+", default=MIL_SETS)
    p.add_argument("--quick", action="store_true", help="tiny grids, for a smoke run")
    p.add_argument("--skip", nargs="*", default=[], choices=["mil", "supervision", "inference"])
    args = p.parse_args(argv)
    args.C = [0.001, 0.01, 0.1, 1.0, 10.0]
    args.C_synthetic = [0.01, 0.1, 1.0, 10.0]
    args.c = [0.0, 0.2]
    args.levels = [100, 75, 50, 25, 0]
    args.synthetic_bags = 400
    if args.quick:
        args.C, args.C_synthetic, args.c, args.n_init = [0.1], [0.1], [0.0], 1
        args.levels, args.synthetic_bags = [100, 0], 100
    print("## Latent AP-SVM\n")
    print(f"Machine: {machine_line()}  ")
    print(f"Command: python benchmarks/bench_latent.py {' '.join(argv if argv is not None else sys.argv[1:])}  ")
    print(f"Grids: C in {args.C} (synthetic: {args.C_synthetic}); latent SVM also "
          f"J in {{1, (|P|+|N|)/|P|}}, c in {args.c}; epsilon = {EPSILON}, n_init = {args.n_init}, "
          f"init = {args.init}, tol = 1e-3; {args.jobs} worker process(es).")
    start = time.perf_counter()
    pool = Pool(args.jobs) if args.jobs > 1 else None
    try:
        if "mil" not in args.skip:
            mil_table(pool, args)
        if "supervision" not in args.skip:
            supervision_table(pool, args)
    finally:
        if pool:
            pool.close()
            pool.join()
    if "inference" not in args.skip:
        inference_table(args)
    print(f"\nTotal wall time: {time.perf_counter() - start:.0f}s.")


if __name__ == "__main__":
    main()
