"""``svm_perf_classify [options] example_file model_file output_file``: SVM-perf V3.00's
classifier for linear models: one score w·x − b a line (``%.8f``) and its statistics."""
import sys
import time

import numpy as np

from .. import __version__
from ..io.atomic import atomic_write
from ..io.model_file import read_model
from ..io.svmlight import load_svmlight
from ..metrics import average_precision, roc_auc
from .ap_classify import to_model_width
from .common import (check_outputs, plot_pr_if_asked, refuse_overflowing_rows, run,
                     write_no_predictions)
from .dialects import (UNUSED, Dialect, Option, classifier_positionals, plot_options,
                       verbosity_options)


DIALECT = Dialect(
    "svm_perf_classify", f"svmrank {__version__}: apply a linear SVM-perf (SVM-light) "
    "model to examples.",
    "Scores w.x - b are written one per line, %.8f, in input order. Features beyond\n"
    "the model's highest index are ignored, as SVM-perf does (a warning counts them).\n"
    "The statistics are SVM-perf's: the sign of the score predicts the class;\n"
    "PRBEP, ROC area and AvgPrec rank by score, ties broken pessimistically.",
    positionals=classifier_positionals("examples to classify (SVMlight format)",
                                       "linear SVM-light model"),
    learner=False,
    options=[*verbosity_options("verbosity: 0 quiet, 1 statistics (default 1)"),
             Option("--d", UNUSED, dest="dense", type=float, metavar="[0,1]"),
             *plot_options("the precision-recall curve")])


def build_parser():
    """The argparse parser of :data:`DIALECT`."""
    return DIALECT.parser()


def statistics(y, scores):
    """SVM-perf's test statistics in percent (labels > 0 positive, the others negative):
    accuracy, precision, recall and F1 of the sign prediction, PRBEP, ROC area and
    AvgPrec of the ranking (ties broken pessimistically: a negative tied with a positive
    ranks above it)."""
    relevant = y > 0
    predicted = scores > 0
    a = int((relevant & predicted).sum())
    b = int((~relevant & predicted).sum())
    P = int(relevant.sum())
    n = len(y)
    precision = a / (a + b) if a + b else 0.0
    recall = a / P if P else 0.0
    f1 = 2 * precision * recall / (precision + recall) if a else 0.0
    # pessimistic ties: negatives first among equal scores
    order = np.lexsort((relevant, -scores))
    prbep = relevant[order][:P].sum() / P if P else 0.0
    ranked = relevant[order].astype(float)
    rank_scores = -np.arange(n, dtype=float)  # strictly decreasing along the pessimistic order
    # (undefined on one class: nan, where SVM-perf prints -nan)
    roc = roc_auc(ranked, rank_scores) if 0 < P < n else float("nan")
    ap = average_precision(ranked, rank_scores) if P else float("nan")
    return {"Accuracy ": 100.0 * ((predicted == relevant).sum()) / n,
            "Precision": 100.0 * precision, "Recall   ": 100.0 * recall,
            "F1       ": 100.0 * f1, "PRBEP    ": 100.0 * prbep, "ROCArea  ": 100.0 * roc,
            "AvgPrec  ": 100.0 * ap}


def classify(argv):
    """Score the examples, write the output file, print the statistics."""
    args = DIALECT.check(build_parser().parse_args(argv))
    check_outputs(args, args.output_file, inputs=[args.example_file, args.model_file])
    if args.v >= 1:
        print("Reading model...", end="", flush=True)
    model = read_model(args.model_file)
    if args.v >= 1:
        print("done.\nReading test examples...", end="", flush=True)
    X, y, _ = load_svmlight(args.example_file, warn_mixed_qid=False, allow_empty=True)
    if X.shape[0] == 0:
        return write_no_predictions(args, after_progress=True)
    if args.v >= 1:
        print(f" ({X.shape[0]} examples) done.\nClassifying test examples...", end="",
              flush=True)
    X = to_model_width(X, model.n_features, args.example_file)
    start = time.process_time()
    scores = model.decision_function(X)
    runtime = time.process_time() - start
    refuse_overflowing_rows(scores, args.example_file, "the score w·x - b")
    with atomic_write(args.output_file) as fh:
        fh.write("".join(f"{s:.8f}\n" for s in scores.tolist()))
    plot_pr_if_asked(args, y, scores, None)  # (one ranking: SVM-perf ignores qid)
    n = len(y)
    errors = int(((scores > 0) != (y > 0)).sum())
    lines = ["done", f"Runtime (without IO) in cpu-seconds: {runtime:.2f}",
             f"Average loss on test set: {100.0 * errors / n:.4f}",
             f"Zero/one-error on test set: {100.0 * (errors > 0):.2f}% "
             f"({int(errors == 0)} correct, {int(errors > 0)} incorrect, 1 total)"
             ] if args.v >= 1 else []
    # (SVM-perf reads every label <= 0 as negative, 0 too: none is unlabeled; it prints
    # the NOTE and the statistics whatever -v)
    lines += ["NOTE: The loss reported above is the percentage of errors. The "
              "zero/one-error", "      is the multivariate zero/one-error regarding "
              "the whole prediction vector!"]
    lines += [f"{name}: {value:5.2f}" for name, value in statistics(y, scores).items()]
    print("\n".join(lines), flush=True)
    return 0


def main(argv=None):
    """Entry point of ``svm_perf_classify``: returns the exit status."""
    return run(classify, argv, prog="svm_perf_classify")


if __name__ == "__main__":
    sys.exit(main())
