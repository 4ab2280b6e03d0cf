"""Latent AP-SVM against latent SVM and latent SSVM (behl2014 §5), and the cost of its
loss-augmented inference.

Three tables:

1. musk1, elephant, fox, tiger (../shared/data): nested cross-validation over bags. The
   outer loop is 5-fold (stratified by bag label, the same folds for every method); in
   each outer training set an inner stratified k-fold CV (default 3) chooses every
   method's hyper-parameters from its grid by mean inner AP, and the method is refitted
   on the whole outer training set with them and scored on the outer test fold. The
   outer test folds are never used to choose anything, so a larger grid (latent SVM's
   C × J × c) cannot inflate the reported AP. Features are standardised on each
   training set.
2. A synthetic supervision study (svmrank.datasets.make_bags in the one-vs-rest setting
   of behl2014 §5.1): the supervision level S (fraction of bags whose true candidate is
   known) from 100% to 0%, the shape of the paper's Figure 1. Every draw of the
   generator is split into independent training, validation and test bags (same
   hidden concepts); each method's grid point is chosen on the validation bags and its
   test AP reported, averaged over several seeded draws (the paper averages over its
   10 action classes).
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
from collections import Counter
from multiprocessing import Pool

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import best_time, description, machine_line  # noqa: E402
from _common import print_table, shared_file_or_exit  # noqa: E402

from svmrank.bags import check_bag_labels, check_bags, check_known, load_bags  # noqa: E402
from svmrank.datasets import make_bags  # noqa: E402
from svmrank.estimators.latent import LatentAPSVM, LatentSSVM, LatentSVM  # noqa: E402
from svmrank.exceptions import ConvergenceWarning  # noqa: E402
from svmrank.inference import lai_queries_unchecked  # noqa: E402
from svmrank.problems.latent import LatentAPProblem, LatentBinaryProblem  # noqa: E402
from svmrank.problems.ranking import RankingProblem  # noqa: E402

MIL_SETS = ["musk1", "elephant", "fox", "tiger"]
METHODS = ["latent AP-SVM", "latent SVM", "latent SSVM"]
EPSILON = 0.01
FOLD_SEED = 20140623
# the synthetic setting (behl2014 §5.1): one-vs-rest over 10 balanced classes (10%
# positive bags), T = 10 candidate "detections" per bag that overlap the true one partly
SYNTHETIC = dict(bag_size=10, positive_fraction=0.1, negative_classes=9, overlap=True,
                 separation=3.0, clutter=1.2)


def grids(C_grid, J_values, c_grid):
    """(method, params) pairs of the hyper-parameter grid. J_values may hold the string
    "ratio": (|P|+|N|)/|P| of the training bags it is fitted on."""
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


def fit_score(task):
    """Fit one grid point on the training rows; AP on each list of test rows.

    task = (X, y, bags, known, train_rows, test_row_masks, method, params, n_init, init).
    Returns (list of APs, fit seconds, number of warnings)."""
    X, y, bags, known, train, tests, method, params, n_init, init = task
    Xtr = X[train]
    mean, std = Xtr.mean(axis=0), Xtr.std(axis=0)
    std[std == 0] = 1.0
    Xtr = (Xtr - mean) / std
    params = dict(params)
    if params.get("J") == "ratio":
        index = check_bags(bags[train], Xtr.shape[0])
        labels = check_bag_labels(y[train], index)
        params["J"] = len(labels) / max(1, int((labels > 0).sum()))
    est = make(method, params, n_init, init)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        est.fit(Xtr, y[train], bags=bags[train], known=None if known is None else known[train])
        elapsed = time.perf_counter() - t0
    aps = [est.score((X[t] - mean) / std, y[t], bags=bags[t]) for t in tests]
    return aps, elapsed, sum(issubclass(w.category, ConvergenceWarning) for w in caught)


def run(pool, tasks):
    return pool.map(fit_score, tasks, chunksize=1) if pool else list(map(fit_score, tasks))


def fmt_params(params):
    return ", ".join(f"{k}={v:g}" if not isinstance(v, str) else f"{k}={v}"
                     for k, v in params.items())


def nested_cv(pool, X, y, bags, labels, folds, grid, args):
    """Nested CV (see the module doc). Returns {method: dict(aps, chosen, time)} and the
    number of warnings over all fits."""
    bag_of_row = check_bags(bags, X.shape[0]).bag_of_row()
    n_outer = int(folds.max()) + 1
    inner_tasks, keys = [], []
    for f in range(n_outer):
        train_bags = np.flatnonzero(folds != f)
        inner = np.full(len(labels), -1)
        inner[train_bags] = stratified_folds(labels[train_bags], args.inner_folds, FOLD_SEED + 1 + f)
        inner_of_row = inner[bag_of_row]
        for g in range(args.inner_folds):
            train, test = (inner_of_row >= 0) & (inner_of_row != g), inner_of_row == g
            for k, (m, p) in enumerate(grid):
                inner_tasks.append((X, y, bags, None, train, [test], m, p, args.n_init, args.init))
                keys.append((f, k))
    inner_scores = {}
    n_warn = 0
    for key, (aps, _, w) in zip(keys, run(pool, inner_tasks)):
        inner_scores.setdefault(key, []).append(aps[0])
        n_warn += w
    outer_tasks, chosen = [], []
    for f in range(n_outer):
        for method in METHODS:
            ks = [k for k, (m, _) in enumerate(grid) if m == method]
            best = max(ks, key=lambda k: (np.mean(inner_scores[(f, k)]), -k))  # ties: first
            chosen.append((method, grid[best][1]))
            train, test = folds[bag_of_row] != f, folds[bag_of_row] == f
            outer_tasks.append((X, y, bags, None, train, [test], method, grid[best][1],
                                args.n_init, args.init))
    out = {m: dict(aps=[], chosen=[], time=[]) for m in METHODS}
    for (method, params), (aps, t, w) in zip(chosen, run(pool, outer_tasks)):
        out[method]["aps"].append(aps[0])
        out[method]["chosen"].append(params)
        out[method]["time"].append(t)
        n_warn += w
    return out, n_warn


def chosen_summary(chosen):
    """The hyper-parameters chosen over the outer folds, most frequent first."""
    counts = Counter(fmt_params(p) for p in chosen)
    return "; ".join(f"{p} ×{n}" if n > 1 else p for p, n in counts.most_common())


def mil_table(pool, args):
    rows, choice_rows, wins, total_warn = [], [], 0, 0
    for name in args.datasets:
        t0 = time.perf_counter()
        X, y, bags, known = load_bags(shared_file_or_exit(name, f"{name}.mil.svm"))
        X = X.toarray()
        index = check_bags(bags, X.shape[0])
        labels = check_bag_labels(y, index)
        folds = stratified_folds(labels, 5, FOLD_SEED)
        grid = grids(args.C, [1.0, "ratio"], args.c)
        res, n_warn = nested_cv(pool, X, y, bags, labels, folds, grid, args)
        total_warn += n_warn
        mean = {m: float(np.mean(res[m]["aps"])) for m in METHODS}
        std = {m: float(np.std(res[m]["aps"])) for m in METHODS}
        diff = np.array(res["latent AP-SVM"]["aps"]) - np.array(res["latent SVM"]["aps"])
        wins += mean["latent AP-SVM"] >= mean["latent SVM"]
        rows.append([name] + [f"{mean[m]:.3f} ± {std[m]:.3f}" for m in METHODS]
                    + [f"{diff.mean():+.3f}", f"{int((diff > 0).sum())}/{int((diff < 0).sum())}",
                       " / ".join(f"{np.mean(res[m]['time']):.2f}" for m in METHODS),
                       f"{time.perf_counter() - t0:.0f}"])
        choice_rows.append([name] + [chosen_summary(res[m]["chosen"]) for m in METHODS])
        print(f"  {name} done in {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    print(f"\n### Bag-ranking AP, nested CV (5 outer folds, {args.inner_folds} inner folds; "
          "mean ± std over the outer test folds)\n")
    print_table(["data set", "latent AP-SVM", "latent SVM", "latent SSVM", "AP-SVM − SVM",
                 "folds AP-SVM better/worse", "refit time s (AP / SVM / SSVM)", "wall s"], rows)
    print("\nHyper-parameters chosen by the inner CV over the 5 outer folds:\n")
    print_table(["data set", "latent AP-SVM", "latent SVM", "latent SSVM"], choice_rows)
    print(f"\nLatent AP-SVM >= latent SVM on {wins} of {len(args.datasets)} data sets "
          f"(target: >= 3 of 4). {total_warn} warnings (ConvergenceWarning) over all fits.")


def supervision_table(pool, args, n_features):
    rows, choice_rows = [], []
    n = args.synthetic_bags
    for S in args.levels:
        tasks, meta = [], []
        for seed in args.draws:
            X, y, bags, known = make_bags(n_bags=3 * n, supervision=S / 100.0, random_state=seed,
                                          n_features=n_features, **SYNTHETIC)
            train, val, test = bags <= n, (bags > n) & (bags <= 2 * n), bags > 2 * n
            for m, p in grids(args.C, [1.0, "ratio"], args.c):
                tasks.append((X, y, bags, known, train, [val, test], m, p, args.n_init, args.init))
                meta.append((seed, m, p))
        results = run(pool, tasks)
        test_ap = {m: [] for m in METHODS}
        chosen = {m: [] for m in METHODS}
        for seed in args.draws:
            for method in METHODS:
                cand = [(r[0][0], -i, r[0][1], mt[2]) for i, (mt, r) in enumerate(zip(meta, results))
                        if mt[0] == seed and mt[1] == method]
                val_ap, _, t_ap, params = max(cand, key=lambda c: (c[0], c[1]))
                test_ap[method].append(t_ap)
                chosen[method].append(params)
        mean = {m: float(np.mean(test_ap[m])) for m in METHODS}
        std = {m: float(np.std(test_ap[m])) for m in METHODS}
        ap = np.array(test_ap["latent AP-SVM"])
        d_svm, d_ssvm = ap - np.array(test_ap["latent SVM"]), ap - np.array(test_ap["latent SSVM"])
        rows.append([f"{S}%"] + [f"{mean[m]:.3f} ± {std[m]:.3f}" for m in METHODS]
                    + [f"{d.mean():+.3f} ± {d.std():.3f} ({int((d > 0).sum())}/{int((d < 0).sum())})"
                       for d in (d_svm, d_ssvm)])
        choice_rows.append([f"{S}%"] + [chosen_summary(chosen[m]) for m in METHODS])
        print(f"  S={S}% done: " + " | ".join(rows[-1] + choice_rows[-1][1:]), file=sys.stderr,
              flush=True)
    print(f"\n### Supervision study, {n_features} features (make_bags, {SYNTHETIC}; "
          f"{len(args.draws)} draws of {n} training, {n} validation and {n} test bags; test AP "
          "of the grid point best on the validation bags, mean ± std over draws; differences "
          "paired by draw, with the number of draws where latent AP-SVM is better/worse)\n")
    print_table(["S (known candidates)", "latent AP-SVM", "latent SVM", "latent SSVM",
                 "AP-SVM − SVM", "AP-SVM − SSVM"], rows)
    print("\nHyper-parameters chosen on the validation bags (over the draws):\n")
    print_table(["S", "latent AP-SVM", "latent SVM", "latent SSVM"], choice_rows)


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
        off_rows = np.array([0, len(s)], np.int64)  # rows in place, as the learners call it
        off_bags = np.array([0, index.n_bags], np.int64)

        def latent_lai():
            _, values = index.argmax(s, known=latent.state)
            lai_queries_unchecked(values, latent.relevant, None, off_bags, "ap", "qs")

        def supervised_lai():
            lai_queries_unchecked(s, rel_rows, None, off_rows, "ap", "qs")

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
    p = argparse.ArgumentParser(description=description(__doc__))
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--n-init", type=int, default=3, help="CCCP initialisations (default 3)")
    p.add_argument("--init", choices=["random", "instances"], default="instances",
                   help="CCCP initialisation of every method (default instances: the first of "
                        "the n_init starts is instance-level, the others random)")
    p.add_argument("--inner-folds", type=int, default=3, help="inner CV folds (default 3)")
    p.add_argument("--datasets", nargs="+", default=MIL_SETS)
    p.add_argument("--synthetic-features", nargs="+", type=int, default=[20, 200],
                   help="feature dimensions of the supervision studies (default 20 200)")
    p.add_argument("--quick", action="store_true", help="tiny grids, for a smoke run")
    p.add_argument("--skip", nargs="*", default=[], choices=["mil", "supervision", "inference"])
    p.add_argument("--levels", nargs="+", type=int, default=[100, 75, 50, 25, 0],
                   help="supervision levels S in percent (default 100 75 50 25 0)")
    args = p.parse_args(argv)
    args.C = [1e-4, 1e-3, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 1e4]
    args.c = [0.0, 0.2]
    args.synthetic_bags = 300
    args.draws = [1, 2, 3, 4, 5]
    if args.quick:
        args.C, args.c, args.n_init, args.inner_folds = [0.1, 10.0], [0.0], 1, 2
        args.levels, args.synthetic_bags, args.draws = [100, 0], 100, [1]
    print("## Latent AP-SVM\n")
    print(f"Machine: {machine_line()}  ")
    print(f"Command: python benchmarks/bench_latent.py {' '.join(argv if argv is not None else sys.argv[1:])}  ")
    print(f"Grids (every method, MIL and synthetic): C in {args.C}; latent SVM also "
          f"J in {{1, (|P|+|N|)/|P|}}, c in {args.c}; epsilon = {EPSILON}, n_init = {args.n_init}, "
          f"init = {args.init}, tol = 1e-3; {args.jobs} worker process(es).")
    start = time.perf_counter()
    pool = Pool(args.jobs) if args.jobs > 1 else None
    try:
        if "mil" not in args.skip:
            mil_table(pool, args)
        if "supervision" not in args.skip:
            for d in args.synthetic_features:
                supervision_table(pool, args, d)
    finally:
        if pool:
            pool.close()
            pool.join()
    if "inference" not in args.skip:
        inference_table(args)
    print(f"\nTotal wall time: {time.perf_counter() - start:.0f}s.")


if __name__ == "__main__":
    main()
