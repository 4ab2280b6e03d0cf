"""APSVM's fit on w8a.train at C = 1e5: objective and iterations, to compare checkouts.

Prints the primal objective, duality gap and iteration count with %.17g, so that two
checkouts (before and after a refactoring) can be compared to the last digit. It uses
the svmrank that the running Python imports (printed), so run it with each checkout's
environment:

    python benchmarks/check_w8a_objective.py [--C 1e5] [--epsilon 1e-3]
"""
import argparse
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def data_file(*parts):
    """$SVMRANK_SHARED_DATA, else ../shared/data beside the repository."""
    env = os.environ.get("SVMRANK_SHARED_DATA")
    root = Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"
    path = root.joinpath(*parts)
    if not path.exists():
        print(f"SKIP: shared data file {path} is absent (set SVMRANK_SHARED_DATA)")
        sys.exit(0)
    return path


def main():
    parser = argparse.ArgumentParser(description=" ".join(__doc__.strip().split("\n\n")[0].split()))
    parser.add_argument("--C", type=float, default=1e5)
    parser.add_argument("--epsilon", type=float, default=1e-3)
    args = parser.parse_args()
    import svmrank
    from svmrank import APSVM
    from svmrank.io import load_svmlight
    X, y, _ = load_svmlight(data_file("w8a", "w8a.train"))
    t0 = time.perf_counter()
    model = APSVM(C=args.C, epsilon=args.epsilon).fit(X, y)
    seconds = time.perf_counter() - t0
    print(f"svmrank: {Path(svmrank.__file__).parent}")
    print(f"w8a.train {X.shape[0]} x {X.shape[1]}, C = {args.C:g}, epsilon = {args.epsilon:g}")
    print(f"objective {model.objective_:.17g}")
    print(f"duality_gap {model.duality_gap_:.17g}")
    print(f"iterations {model.n_iter_:d}")
    print(f"fit seconds {seconds:.3f}")


if __name__ == "__main__":
    main()
