"""Helpers shared by the benchmark scripts: data location, timing, table printing."""
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

# the checkout's svmrank (built in place) is the one timed, whatever is installed; every
# script imports this module before svmrank
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


def description(doc):
    """A script's --help text: its docstring's first paragraph, on one line."""
    return " ".join(doc.strip().split("\n\n")[0].split())


def positive_int(text):
    """An argparse type: an integer >= 1 (a count of runs, passes, threads or nodes)."""
    import argparse
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def shared_data_dir():
    """$SVMRANK_SHARED_DATA, else ../shared/data beside the repository."""
    env = os.environ.get("SVMRANK_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_file_or_exit(*parts):
    """Path of a shared data file; exits with a message (status 0) when absent."""
    path = shared_data_dir().joinpath(*parts)
    if not path.exists():
        print(f"SKIP: shared data file {path} is absent (set SVMRANK_SHARED_DATA)")
        sys.exit(0)
    return path


def cv_score(make, X, y, measure=None, n_folds=3, seed=0):
    """Mean of ``measure(y_test, model.decision_function(X_test))`` (default: AP) over
    ``n_folds`` folds of one seeded random split, each model from ``make()`` fitted on
    the other folds (single-query data)."""
    from svmrank.metrics import average_precision
    measure = average_precision if measure is None else measure
    fold = np.random.default_rng(seed).permutation(X.shape[0]) % n_folds
    scores = []
    for k in range(n_folds):
        tr, te = fold != k, fold == k
        model = make().fit(X[tr], y[tr])
        scores.append(measure(y[te], model.decision_function(X[te])))
    return float(np.mean(scores))


def best_time(fn, repeat=5, min_time=0.2):
    """Best wall-clock time of one call of ``fn`` over ``repeat`` rounds; a round runs
    ``fn`` as often as needed to last ``min_time`` seconds (so fast calls are not noise)."""
    return interleaved_times([fn], repeat, min_time)[0]


def interleaved_times(fns, repeat=7, min_time=0.05):
    """:func:`best_time` of each callable, timed in turns (each round runs every one), so
    that a slow spell of a shared machine does not fall on one of them alone."""
    for fn in fns:
        fn()  # warm-up
    best = [np.inf] * len(fns)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            n, t0 = 0, time.perf_counter()
            while True:
                fn()
                n += 1
                elapsed = time.perf_counter() - t0
                if elapsed >= min_time:
                    break
            best[k] = min(best[k], elapsed / n)
    return best


def machine_line():
    """One line describing this machine for the results table."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, NumPy {np.__version__}"


def print_table(header, rows):
    """Print a Markdown table (header: list of column names, rows: lists of cells)."""
    fmt = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(fmt(v) for v in row) + " |")
