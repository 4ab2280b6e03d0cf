"""``svm_rank_classify [options] example_file model_file output_file``: score examples
with a linear SVM-light model (svm_rank_learn's, ours, or any linear SVM-light model),
write one score per line (``%.8f``, as SVM-rank) and print SVM-rank's statistics."""
import sys
import time

import numpy as np

from .. import __version__
from .._validation import query_segments
from ..io.atomic import atomic_write
from ..io.model_file import read_model
from ..io.svmlight import load_svmlight
from .ap_classify import to_model_width
from .common import (check_outputs, plot_pr_if_asked, refuse_overflowing_rows, run,
                     scores_on_dask, write_no_predictions)
from .dialects import (Dialect, classifier_positionals, dask_option, plot_options,
                       verbosity_options)

DIALECT = Dialect(
    "svm_rank_classify", f"svmrank {__version__}: apply a linear ranking model to examples "
    "(SVM-rank V1.00 options).",
    "Scores w.x - b are written one per line, %.8f, in input order, as svm_rank_classify\n"
    "does. Features beyond the model's highest index are ignored (a warning counts\n"
    "them). The statistics count, per query (qid), the pairs of different labels the\n"
    "scores do not order strictly (a tie counts as swapped, as in SVM-rank).",
    positionals=classifier_positionals("examples to rank (SVMlight format with qid)",
                                       "linear SVM-light model"),
    learner=False,
    options=[*verbosity_options("verbosity: 0 quiet, 1 statistics (default 1)"),
             *plot_options("the precision-recall curve (the mean over queries with a band, "
                           "when there are several)"),
             dask_option("score each shard", "written in input order")])


def build_parser():
    """The argparse parser of :data:`DIALECT`."""
    return DIALECT.parser()


def swapped_pairs(y, scores):
    """(swapped, pairs) of one query: pairs with y_i > y_j, and those of them with
    s_i <= s_j."""
    levels = np.unique(y)
    swapped = pairs = 0
    for level in levels[1:]:
        below = np.sort(scores[y < level])
        here = scores[y == level]
        pairs += len(below) * len(here)
        swapped += int(np.sum(len(below) - np.searchsorted(below, here, side="left")))
    return swapped, pairs


def classify(argv):
    """Score the examples, write the output file, print the statistics."""
    args = DIALECT.check(build_parser().parse_args(argv))
    check_outputs(args, args.output_file,
                   inputs=[args.model_file] + ([] if args.dask else [args.example_file]))
    if args.v >= 1:
        print("Reading model...", end="", flush=True)
    model = read_model(args.model_file)
    if args.v >= 1:
        print("done.\nReading test examples...", end="", flush=True)
    if args.dask is not None:  # (read and scored on the workers)
        scores, y, qid, runtime = scores_on_dask(args, model.w, -model.b, model.n_features)
        if args.v >= 1:
            print(f" ({len(y)} examples) done.\nClassifying test examples...", end="",
                  flush=True)
        start = time.process_time() - runtime  # (timed from the scoring call)
    else:
        X, y, qid = load_svmlight(args.example_file, allow_empty=True)
        if X.shape[0] == 0:
            return write_no_predictions(args, after_progress=True)
        X = to_model_width(X, model.n_features, args.example_file)
        if args.v >= 1:
            print(f" ({X.shape[0]} examples) done.\nClassifying test examples...", end="",
                  flush=True)
        start = time.process_time()
        scores = model.decision_function(X)
        refuse_overflowing_rows(scores, args.example_file, "the score w·x")
    order, offsets = query_segments(qid if (qid != 0).any() else None, len(y))
    counts = [swapped_pairs(y[order[a:b]], scores[order[a:b]])
              for a, b in zip(offsets[:-1], offsets[1:])]
    runtime = time.process_time() - start
    with atomic_write(args.output_file) as fh:
        fh.write("".join(f"{s:.8f}\n" for s in scores.tolist()))
    plot_pr_if_asked(args, y, scores, qid)
    if args.v >= 1:
        print("done", flush=True)
    print(summary(counts, runtime, args.v), flush=True)
    return 0


def summary(counts, runtime, verbosity=1):
    """svm_rank_classify's statistics from each query's (swapped, pairs): the loss lines
    at verbosity >= 1, the swapped-pair lines always (as SVM-rank prints them)."""
    n = len(counts)
    fractions = [s / p if p else 0.0 for s, p in counts]
    correct = sum(f == 0 for f in fractions)
    loss = float(np.mean(fractions)) if n else 0.0
    lines = [
        f"Runtime (without IO) in cpu-seconds: {runtime:.2f}",
        f"Average loss on test set: {loss:.4f}",
        f"Zero/one-error on test set: {100.0 * (n - correct) / max(n, 1):.2f}% ({correct} "
        f"correct, {n - correct} incorrect, {n} total)"] if verbosity >= 1 else []
    return "\n".join(lines + [
        "NOTE: The loss reported above is the fraction of swapped pairs averaged over",
        "      all rankings. The zero/one-error is fraction of perfectly correct",
        "      rankings!",
        f"Total Num Swappedpairs  : {sum(s for s, _ in counts):6.0f}",
        f"Avg Swappedpairs Percent: {100.0 * loss:6.2f}"])


def main(argv=None):
    """Entry point of ``svm_rank_classify``: returns the exit status."""
    return run(classify, argv, prog="svm_rank_classify")


if __name__ == "__main__":
    sys.exit(main())
