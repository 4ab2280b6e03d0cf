"""``svm_topk_classify [options] example_file model_file output_file``: apply a linear
SVM-multiclass model (ours or svm_multiclass_learn's), write svm_multiclass_classify's
prediction lines ``label score_1 ... score_m`` (scores ``%f``, as there) and print
top-1..top-5 accuracy."""
import sys
import time

import numpy as np

from .. import __version__
from ..io.atomic import atomic_write
from ..io.multiclass_model import format_label, read_multiclass_model
from ..io.svmlight import open_data, parse_svmlight_bytes
from ..metrics import top_k_accuracies
from .common import (check_outputs, plot_if_asked, refuse_overflowing_rows, run,
                     write_no_predictions)
from .dialects import (USED, Dialect, Option, classifier_positionals, plot_options,
                       verbosity_options)

EPILOG = """\
Each output line holds the predicted label and the score of every class, in the
model's class order (1..m, or the original labels the model's metadata lists).
A feature index beyond the model's number of base features is an error naming
the line; --ignore-extra-features drops such features instead, as SVM-light's
classifiers do. Test examples whose label is not a class of the model count as errors.
Top-k accuracy: the true class is among the k highest scores (ties go to the
class listed first).
"""


DIALECT = Dialect(
    "svm_topk_classify", f"svmrank {__version__}: apply a linear multiclass model to "
    "examples.", EPILOG,
    positionals=classifier_positionals("examples to classify (SVMlight format)",
                                       "linear SVM-multiclass model", "the predictions"),
    learner=False,
    options=[
        Option("--ignore-extra-features", USED, flag_only=True, default=False,
               help="drop features beyond the model's instead of failing"),
        *verbosity_options("verbosity: 0 quiet, 1 statistics (default 1)"),
        *plot_options("the top-k accuracy against k"),
    ])


def build_parser():
    """The argparse parser of :data:`DIALECT`."""
    return DIALECT.parser()


def classify(argv):
    """Predict, write the output file atomically, print the statistics."""
    args = DIALECT.check(build_parser().parse_args(argv))
    check_outputs(args, args.output_file, inputs=(args.example_file, args.model_file))
    model = read_multiclass_model(args.model_file)
    with open_data(args.example_file) as (fh, _):
        X, y, _, _ = parse_svmlight_bytes(
            fh.read(), args.example_file, n_features=model.coef.shape[1],
            ignore_extra_features=args.ignore_extra_features,
            extra_hint=" (the model's number of base features; --ignore-extra-features "
                       "drops larger ones)", allow_empty=True)
    if X.shape[0] == 0:
        return write_no_predictions(args)
    start = time.process_time()
    scores = model.scores(X)
    refuse_overflowing_rows(scores, args.example_file, "a class score w_c·x")
    best = np.argmax(scores, axis=1)
    runtime = time.process_time() - start
    labels = [format_label(c) for c in model.classes]
    with atomic_write(args.output_file) as fh:
        fh.write("".join(labels[j] + "".join(f" {s:f}" for s in row) + "\n"
                         for j, row in zip(best.tolist(), scores.tolist())))
    plot_if_asked(args, "topk_accuracy", {args.model_file: (scores, model.classes)}, y=y)
    if args.v >= 1:
        print(summary(y, scores, model.classes, runtime), flush=True)
    return 0


def summary(y, scores, classes, runtime):
    """The statistics block: svm_multiclass_classify's lines plus top-1..top-5 accuracy."""
    n, m = scores.shape
    known = np.isin(y, classes)
    ks = list(range(1, min(5, m) + 1))
    if known.any():
        accs = top_k_accuracies(y[known], scores[known], ks, classes) * known.sum() / n
    else:
        accs = np.zeros(len(ks))
    correct = int(np.sum(classes[np.argmax(scores, axis=1)] == y))
    lines = [f"Classified {n} examples ({m} classes).",
             f"Runtime (without IO) in cpu-seconds: {runtime:.2f}",
             # svm_multiclass's loss is 100 per error
             f"Average loss on test set: {100.0 * (n - correct) / n:.4f}",
             f"Zero/one-error on test set: {100.0 * (n - correct) / n:.2f}% "
             f"({correct} correct, {n - correct} incorrect, {n} total)"]
    if not known.all():
        lines.append(f"{int((~known).sum())} examples have a label that is not a class of the "
                     f"model (counted as errors).")
    lines.append("Top-k accuracy: " + ", ".join(f"top-{k} {100 * a:.2f}%" for k, a in zip(ks, accs)))
    return "\n".join(lines)


def main(argv=None):
    """Entry point of ``svm_topk_classify``: returns the exit status."""
    return run(classify, argv, prog="svm_topk_classify")


if __name__ == "__main__":
    sys.exit(main())
