"""AP-SVM against the binary (0-1 loss) SVM on w8a: test AP and training time.

Reproduces the comparison of Mohapatra et al. 2018, Table 3 (models trained on the 0-1
loss and on the AP loss, measured by test AP) on the public w8a data set, with the
precision-recall curves of both models as the figure.

    python examples/apsvm_w8a.py [--quick] [--C 10] [--figure apsvm_w8a.png]
"""
import time

from example_data import data_file, parser, positive, run, save, table
from svmrank import APSVM, BinarySVM
from svmrank.io.svmlight import load_svmlight
from svmrank.metrics import average_precision
from svmrank.plot import new_figure, pr_curve


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--C", type=positive(float), default=10.0)
    args = p.parse_args(argv)
    X, y, _ = load_svmlight(data_file("w8a", "w8a.train"))
    X_test, y_test, _ = load_svmlight(data_file("w8a", "w8a.test"), n_features=X.shape[1])
    if args.quick:  # every 10th training sample, every 5th test sample
        X, y, X_test, y_test = X[::10], y[::10], X_test[::5], y_test[::5]
    rows, figure = [], new_figure((6, 4.5))
    ax = figure.add_subplot()
    for name, model in (("binary SVM (0-1 loss)", BinarySVM(C=args.C)),
                        ("AP-SVM (AP loss)", APSVM(C=args.C))):
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
        scores = model.decision_function(X_test)
        rows.append((name, average_precision((y_test > 0).astype(float), scores),
                     model.n_iter_, f"{seconds:.2f}s"))
        pr_curve(y_test, scores, ax=ax, label=name)
    print(f"w8a ({X.shape[0]} training, {X_test.shape[0]} test samples, "
          f"{int((y > 0).sum())} training positives), C = {args.C:g}")
    table(rows, ("model", "test AP", "iterations", "time"))
    ax.set_title("w8a test set")
    save(figure, args, __file__)


if __name__ == "__main__":
    run(main)
