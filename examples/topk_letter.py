"""Top-k multiclass SVMs on letter: top-k accuracy against k.

Reproduces Lapin, Hein & Schiele 2015, Table 1 (top-1..top-10 accuracy of the top-k
SVMs for several k, against the multiclass SVM, k = 1) on the public letter data set
(the first 15,000 samples for training, the last 5,000 for testing, as usual). The
figure is the top-k accuracy against k of each model.

C is TopKSVM's (the C form ½‖W‖² + C Σ loss_i); svm_topk_learn's -c is SVM-multiclass's,
C × 100 n: the default C = 0.067 is `svm_topk_learn -c 1e5` on letter.

    python examples/topk_letter.py [--quick] [--C 0.067] [--figure topk_letter.png]
"""
import time

from example_data import data_file, parser, positive, run, save, table
from svmrank import TopKSVM
from svmrank.io.svmlight import load_svmlight
from svmrank.metrics import top_k_accuracies
from svmrank.plot import new_figure, topk_accuracy


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--C", type=positive(float), default=0.067)
    args = p.parse_args(argv)
    X, y, _ = load_svmlight(data_file("letter", "letter.scale.svm"))
    X_train, y_train, X_test, y_test = X[:15000], y[:15000], X[15000:], y[15000:]
    if args.quick:
        X_train, y_train, X_test, y_test = X_train[:3000], y_train[:3000], X_test[:1000], \
            y_test[:1000]
    ks = (1, 3, 5) if not args.quick else (1, 5)
    models, rows = {}, []
    for k in ks:
        start = time.perf_counter()
        model = TopKSVM(k=k, C=args.C, max_epoch=30 if args.quick else 200,
                        random_state=0).fit(X_train, y_train)
        seconds = time.perf_counter() - start
        name = f"top-{k} SVM (alpha)" if k > 1 else "multiclass SVM (k = 1)"
        models[name] = model
        acc = top_k_accuracies(y_test, model.decision_function(X_test), [1, 3, 5, 10],
                               model.classes_)
        rows.append([name] + [float(a) for a in acc] + [f"{seconds:.1f}s"])
    print(f"letter: {X_train.shape[0]} training, {X_test.shape[0]} test samples, 26 classes, "
          f"C = {args.C:g}")
    table(rows, ("model", "top-1", "top-3", "top-5", "top-10", "time"))
    figure = new_figure((6, 4.5))
    ax = topk_accuracy(models, X_test, y_test, ax=figure.add_subplot())
    ax.set_title("letter test set")
    save(figure, args, __file__)


if __name__ == "__main__":
    run(main)
