"""Load time of svmrank.io.load_svmlight against sklearn.datasets.load_svmlight_file.

Usage: python benchmarks/bench_svmlight_io.py [--repeat 5]

Both readers load the same files in the same run (best of ``--repeat`` rounds); the
script also checks that they return identical X, y and qid (scikit-learn keeps
explicit zeros in X and we do not, so its zeros are removed before comparing).
"""
import argparse
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_time, description, machine_line  # noqa: E402
from _common import positive_int, print_table, shared_file_or_exit  # noqa: E402

from svmrank.io import load_svmlight  # noqa: E402

FILES = [("w8a", ("w8a", "w8a")), ("MQ2008 Fold1 train", ("mq2008", "Fold1", "train.txt"))]


def check_identical(name, ours, theirs):
    X, y, qid = ours
    X2, y2 = sp.csr_matrix(theirs[0]), theirs[1]
    qid2 = theirs[2] if len(theirs) > 2 and len(theirs[2]) else np.zeros(len(y2), dtype=np.int64)
    X2.eliminate_zeros()
    same = (X.shape == X2.shape and np.array_equal(X.indptr, X2.indptr)
            and np.array_equal(X.indices, X2.indices) and np.array_equal(X.data, X2.data)
            and np.array_equal(y, y2) and np.array_equal(qid, qid2))
    if not same:
        sys.exit(f"MISMATCH on {name}: svmrank and scikit-learn disagree")
    return same


def main(argv=None):
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--repeat", type=positive_int, default=5, help="timing rounds (best is kept)")
    args = parser.parse_args(argv)
    try:
        from sklearn.datasets import load_svmlight_file
    except ImportError:
        print("SKIP: scikit-learn is not installed (pip install scikit-learn)")
        return 0
    rows = []
    for name, parts in FILES:
        path = shared_file_or_exit(*parts)
        uses_qid = "mq2008" in parts

        def ours():
            return load_svmlight(path)

        def theirs():
            return load_svmlight_file(str(path), query_id=uses_qid)

        same = check_identical(name, ours(), theirs())
        t_ours = best_time(ours, repeat=args.repeat, min_time=0.0)
        t_theirs = best_time(theirs, repeat=args.repeat, min_time=0.0)
        X = ours()[0]
        rows.append([name, f"{X.shape[0]} x {X.shape[1]}", f"{path.stat().st_size / 1e6:.1f}",
                     f"{t_theirs * 1e3:.1f}", f"{t_ours * 1e3:.1f}", f"{t_theirs / t_ours:.1f}x",
                     "yes" if same else "no"])
    print(machine_line())
    print()
    print_table(["file", "shape", "MB", "sklearn load_svmlight_file (ms)", "svmrank load_svmlight (ms)",
                 "speed-up", "identical X, y, qid"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
