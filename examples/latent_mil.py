"""Latent AP-SVM against latent SVM on multiple-instance bags (musk1).

Reproduces the comparison of Behl et al. 2014, Table 1 (latent AP-SVM, which optimises
AP over bags with the best instance of each positive bag imputed by CCCP, against the
latent SVM baseline on the 0-1 loss) on the public musk1 data set: test AP over bags of
a random half of the bags, and the training curves of latent AP-SVM with its CCCP
rounds marked as the figure.

    python examples/latent_mil.py [--quick] [--C 10] [--figure latent_mil.png]
"""
import time

import numpy as np

from example_data import data_file, parser, positive, run, save, table
from svmrank import LatentAPSVM, LatentSVM
from svmrank.bags import load_bags
from svmrank.metrics import average_precision
from svmrank.plot import new_figure, training_curves


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--C", type=positive(float), default=10.0)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    X, y, bags, known = load_bags(data_file("musk1", "musk1.mil.svm"))
    X = X / abs(X).max()  # (features in the hundreds: scale to [-1, 1])
    ids = np.unique(bags)
    rng = np.random.default_rng(args.seed)
    test_bags = rng.permutation(ids)[:len(ids) // 2]
    test = np.isin(bags, test_bags)
    train = ~test
    n_init = 1 if args.quick else 3
    rows, figure = [], new_figure((6, 4.5))
    for name, model in (("latent SVM (0-1 loss)", LatentSVM(C=args.C, n_init=n_init,
                                                             init="instances")),
                        ("latent AP-SVM (AP loss)", LatentAPSVM(C=args.C, n_init=n_init,
                                                                 init="instances"))):
        start = time.perf_counter()
        model.fit(X[train], y[train], bags=bags[train])
        seconds = time.perf_counter() - start
        scores = model.decision_function(X[test], bags=bags[test])
        _, first = np.unique(bags[test], return_index=True)
        bag_labels = y[test][np.sort(first)]  # (bags in order of first appearance)
        rows.append((name, average_precision((bag_labels > 0).astype(float), scores),
                     model.n_outer_iter_, f"{seconds:.2f}s"))
    print(f"musk1: {len(ids) - len(test_bags)} training bags, {len(test_bags)} test bags, "
          f"C = {args.C:g}")
    table(rows, ("model", "test AP (bags)", "CCCP rounds", "time"))
    ax = training_curves(model, ax=figure.add_subplot(), quantities=("objective", "gap"))
    ax.set_title("latent AP-SVM on musk1: cutting-plane iterations")
    save(figure, args, __file__)


if __name__ == "__main__":
    run(main)
