"""Scaling benchmarks of issue 28, one section each.

cv: APSVMCV (7 values of C, 3 folds, each fold's path warm-started; also with the fold
    fits at the refit's epsilon) against
    GridSearchCV(LinearSVC) over 7 values (each grid three decades around its model's
    best C on this set) and the same 3 folds on w8a.train: time of the
    whole search including the refit (wall clock and CPU time of the process, each the
    best of --repeat runs timed in turns; ratios to GridSearchCV's), the chosen C, and
    AP of the refitted model on w8a.test. Both searches run on one core, so the CPU
    time is their work, less exposed than the wall clock to other processes on a
    shared machine.

    python benchmarks/bench_scale.py cv [--repeat 3]
"""
import argparse
import os
import sys
import time
import warnings

# one core for both, as liblinear has (APSVMCV: n_jobs=1)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import numpy as np  # noqa: E402

from _common import machine_line, print_table, shared_file_or_exit  # noqa: E402
from svmrank import APSVMCV  # noqa: E402
from svmrank.estimators.cv import FOLD_EPSILON_FACTOR  # noqa: E402
from svmrank.io import load_svmlight  # noqa: E402
from svmrank.metrics import average_precision  # noqa: E402

APSVM_CS = [1e3, 3e3, 1e4, 3e4, 1e5, 3e5, 1e6]
LINEARSVC_CS = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
EPSILON = 1e-3


def best_runs(fits, repeat):
    """{name: (wall seconds, CPU seconds, fitted model)}: the least wall clock and the
    least process CPU time of ``repeat`` calls of each of ``fits`` ({name: callable}),
    timed in turns so that a slow spell of a shared machine does not fall on one alone."""
    best = {}
    for _ in range(repeat):
        for name, fit in fits.items():
            t0, c0 = time.perf_counter(), time.process_time()
            model = fit()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            old = best.get(name, (np.inf, np.inf, None))
            best[name] = (min(wall, old[0]), min(cpu, old[1]), model)
    return best


def section_cv(args):
    try:
        from sklearn.model_selection import GridSearchCV, StratifiedKFold
        from sklearn.svm import LinearSVC
    except ImportError:  # pragma: no cover - benchmark-only dependency
        print("SKIP: scikit-learn is needed for this benchmark")
        return
    X, y, _ = load_svmlight(shared_file_or_exit("w8a", "w8a.train"))
    Xt, yt, _ = load_svmlight(shared_file_or_exit("w8a", "w8a.test"), n_features=X.shape[1],
                              ignore_extra_features=True)
    # w8a.train's rows are not in random order: the folds are shuffled (the same for both)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    warnings.simplefilter("ignore")  # LinearSVC's convergence chatter
    runs = {
        "GridSearchCV(LinearSVC)": lambda: GridSearchCV(
            LinearSVC(), {"C": LINEARSVC_CS}, cv=folds, scoring="average_precision").fit(X, y),
        "APSVMCV": lambda: APSVMCV(Cs=APSVM_CS, cv=folds, epsilon=EPSILON, n_jobs=1).fit(X, y),
        # the fold fits as tight as the refit (the path before fold_epsilon)
        "APSVMCV(fold_epsilon=epsilon)": lambda: APSVMCV(
            Cs=APSVM_CS, cv=folds, epsilon=EPSILON, fold_epsilon=EPSILON, n_jobs=1).fit(X, y),
    }
    results = best_runs(runs, args.repeat)
    base, base_cpu = results["GridSearchCV(LinearSVC)"][:2]
    rows, test_ap = [], {}
    for name, (seconds, cpu, model) in results.items():
        if name.startswith("APSVMCV"):
            fold_epsilon = model.fold_epsilon or FOLD_EPSILON_FACTOR * model.epsilon
            C, cv_ap, notes = model.C_, model.best_score_, (
                f"{int(model.n_iter_path_.sum())} iterations over the 21 fold fits at "
                f"fold_epsilon {fold_epsilon:g} (refit at C_ from the "
                f"folds' mean w: {model.n_iter_})")
        else:
            C, cv_ap, notes = model.best_params_["C"], model.best_score_, ""
        test_ap[name] = average_precision(yt, model.decision_function(Xt))
        rows.append([name, f"{C:g}", round(cv_ap, 4), round(test_ap[name], 4), round(seconds, 2),
                     round(seconds / base, 2), round(cpu, 2), round(cpu / base_cpu, 2), notes])
    print(f"w8a: train {X.shape[0]} x {X.shape[1]}, test {Xt.shape[0]}; 7 values of C, "
          f"3 folds (StratifiedKFold, shuffled), refit included; APSVM epsilon={EPSILON}; best of "
          f"{args.repeat}, timed in turns")
    print(f"machine: {machine_line()}; threads: OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}; "
          f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print()
    print_table(["search", "C chosen", "CV AP", "test AP", "time (s)", "time / GridSearchCV",
                 "CPU (s)", "CPU / GridSearchCV", "notes"], rows)
    ratio = results["APSVMCV"][0] / base
    cpu_ratio = results["APSVMCV"][1] / base_cpu
    gap = max(test_ap.values()) - test_ap["APSVMCV"]
    print()
    print(f"targets: no slower: {'met' if ratio <= 1 else 'MISSED'} ({ratio:.2f}x wall, "
          f"{cpu_ratio:.2f}x CPU); test AP within 0.005 of the better: "
          f"{'met' if gap <= 0.005 else 'MISSED'} ({gap:.4f} below)")


SECTIONS = {"cv": section_cv}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("section", choices=sorted(SECTIONS))
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (best is kept)")
    args = parser.parse_args()
    SECTIONS[args.section](args)


if __name__ == "__main__":
    sys.exit(main())
