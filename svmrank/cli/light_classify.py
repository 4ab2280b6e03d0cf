"""``svm_classify [options] example_file model_file output_file``: SVM-light's
classifier for linear models: one decision value ``w·x − b`` per line (``%.8g``, as
svm_classify writes) and its accuracy and precision/recall lines."""
import sys
import time

import numpy as np

from .. import __version__
from ..io.atomic import atomic_write
from ..io.model_file import read_model
from ..io.svmlight import load_svmlight
from .ap_classify import to_model_width
from .common import (check_outputs, plot_pr_if_asked, refuse_overflowing_rows, run,
                     write_no_predictions)
from .dialects import USED, Dialect, Option, classifier_positionals, plot_options

DIALECT = Dialect(
    "svm_classify", f"svmrank {__version__}: apply a linear SVM-light model to examples "
    "(SVM-light options).",
    "Decision values w.x - b are written one per line, %.8g, as svm_classify -f 1\n"
    "does (the only output format). Features beyond the model's highest index are\n"
    "ignored (a warning counts them). As svm_classify, the accuracy and\n"
    "precision/recall lines are printed only when every label is -1 or +1.",
    positionals=classifier_positionals("examples to classify (SVMlight format)",
                                       "linear SVM-light model", "the decision values"),
    learner=False,
    options=[
        Option("-v", USED, type=int, default=1, metavar="[0..3]",
               check=lambda v: f"-v: expected a verbosity level >= 0, got {v}" if v < 0 else None,
               help="verbosity: 0 quiet, 1 statistics (default 1)"),
        Option("-f", USED, type=int, default=1, metavar="1", only=(1,),
               refuse="{flag} {value} is not supported: only -f 1 (decision values)",
               help="output format: 1 = value of the decision function (the only one)"),
        *plot_options("the precision-recall curve"),
    ])


def build_parser():
    """The argparse parser of :data:`DIALECT`."""
    return DIALECT.parser()


def classify(argv):
    """Score the examples, write the output file, print the statistics."""
    args = DIALECT.check(build_parser().parse_args(argv))
    check_outputs(args, args.output_file, inputs=(args.example_file, args.model_file))
    model = read_model(args.model_file)
    X, y, _ = load_svmlight(args.example_file, warn_mixed_qid=False, allow_empty=True)
    if X.shape[0] == 0:
        return write_no_predictions(args)
    X = to_model_width(X, model.n_features, args.example_file)
    start = time.process_time()
    scores = model.decision_function(X)
    refuse_overflowing_rows(scores, args.example_file, "the score w·x - b")
    runtime = time.process_time() - start
    with atomic_write(args.output_file) as fh:
        fh.write("".join(f"{s:.8g}\n" for s in scores.tolist()))
    plot_pr_if_asked(args, y, scores, None)
    if args.v >= 1:
        print(summary(y, scores, runtime), flush=True)
    return 0


def summary(y, scores, runtime):
    """svm_classify's statistics: the accuracy and precision/recall lines only when
    every label is -1 or +1 (svm_classify's test: int(0.01 + y²) = 1 on every line)."""
    lines = [f"Runtime (without IO) in cpu-seconds: {runtime:.2f}"]
    if not np.all((0.01 + y * y).astype(np.int64) == 1):
        return lines[0]
    positive, predicted = y > 0, scores > 0
    n = len(y)
    correct = int(np.sum(positive == predicted))
    tp = int(np.sum(positive & predicted))
    precision = 100.0 * tp / max(int(predicted.sum()), 1)
    recall = 100.0 * tp / max(int(positive.sum()), 1)
    return "\n".join(lines + [
        f"Accuracy on test set: {100.0 * correct / n:.2f}% ({correct} correct, "
        f"{n - correct} incorrect, {n} total)",
        f"Precision/recall on test set: {precision:.2f}%/{recall:.2f}%"])


def main(argv=None):
    """Entry point of ``svm_classify``: returns the exit status."""
    return run(classify, argv, prog="svm_classify")


if __name__ == "__main__":
    sys.exit(main())
