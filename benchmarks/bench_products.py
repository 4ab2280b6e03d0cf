"""The learners' sparse products on w8a and MQ2008, against scipy's, in one run.

X w and Xᵀd as the ranking and binary problems compute them (``SparseProducts``: X and
Xᵀ stored with their rows sorted by length, a 0/1 matrix without its values), the
kernel on X in its own order (``matrix_product`` / ``transpose_product``, the scatter
over the rows where d is non-zero), and scipy's ``X @ w`` / ``X.T @ d``; Xᵀd for d with
a fraction of its entries non-zero (rank losses make d dense on these data; a binary
SVM's d is non-zero on its margin violators only). The variants of one cell are timed
in turns (7 rounds, each running every variant for at least 0.05 s), each keeping its
best round, so that a slow spell of the machine does not fall on one variant; the ratios
are to scipy's time. One thread, as the learners' benchmarks.

    python benchmarks/bench_products.py
"""
import argparse
import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import numpy as np  # noqa: E402

from _common import description, interleaved_times, machine_line  # noqa: E402
from _common import print_table, shared_file_or_exit  # noqa: E402
from svmrank.io import load_svmlight  # noqa: E402
from svmrank.problems.linear import (SPARSE_D_FRACTION, SparseProducts,  # noqa: E402
                                     matrix_product, transpose_product)

FRACTIONS = [0.05, 0.1, 0.2, 0.3, 0.5, 1.0]


def main(argv=None):
    argparse.ArgumentParser(description=description(__doc__)).parse_args(argv)
    data = {"w8a": ("w8a", "w8a.train"), "MQ2008 Fold1": ("mq2008", "Fold1", "train.txt")}
    rng = np.random.default_rng(0)
    rows = []
    for name, parts in data.items():
        X = load_svmlight(shared_file_or_exit(*parts))[0]
        products = SparseProducts(X)
        w = rng.normal(size=X.shape[1])
        scipy_t, own, ours = interleaved_times([lambda: X @ w, lambda: matrix_product(X, w),
                                                lambda: products.matvec(w)])
        rows.append([name, "X w", "", scipy_t * 1e3, own / scipy_t, "", ours / scipy_t])
        for fraction in FRACTIONS:
            d = rng.normal(size=X.shape[0]) * (rng.random(X.shape[0]) < fraction)
            scipy_t, scatter, gather, ours = interleaved_times([
                lambda: X.T @ d, lambda: transpose_product(X, d),
                lambda: products._by_cols.product(d), lambda: products.rmatvec(d)])
            rows.append([name, "Xᵀd", fraction, scipy_t * 1e3, scatter / scipy_t,
                         gather / scipy_t, ours / scipy_t])
        print(f"{name}: {X.shape[0]} x {X.shape[1]}, {X.nnz} stored values, "
              f"0/1: {products._by_rows.data is None}", flush=True)
    print(f"machine: {machine_line()}; threads: OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}; "
          f"SparseProducts takes the scatter while at most {SPARSE_D_FRACTION} of d is non-zero")
    print()
    print_table(["data", "product", "d non-zero", "scipy (ms)", "X's order / scipy",
                 "gather over Xᵀ / scipy", "SparseProducts / scipy"], rows)


if __name__ == "__main__":
    sys.exit(main())
