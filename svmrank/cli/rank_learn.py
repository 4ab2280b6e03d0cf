"""``svm_rank_learn [options] example_file model_file``: a drop-in for SVM-rank V1.00's
svm_rank_learn (Joachims 2006): the pairwise loss over all pairs of different relevance
within a query, written as an SVM-light V6.20 linear model."""
import sys
import time

import numpy as np

from .. import __version__
from .._validation import MAX_TRAIN_FEATURES
from ..io.atomic import check_writable
from ..io.estimator_model import to_model
from ..io.model_file import write_model
from ..io.svmlight import load_svmlight
from .common import CLIError, run
from .dialects import (UNUSED, USED, Dialect, Option, c_option, e_option,
                       kernel_options, rescaling_options, solver_settings, verbosity_options)

# svm_rank_learn's -l: the RankSVM pair_loss of each
PAIR_LOSSES = {1: "count", 2: "fraction"}

EPILOG = """\
Losses (-l):
   1  total number of swapped pairs summed over all queries (default)
   2  fraction of swapped pairs averaged over all queries
A pair is two examples of one query (qid) with different labels (any number of
relevance levels); a swapped pair is one the model does not rank with a margin.

-c is SVM-rank's C: the objective is 1/2|w|^2 + (C/n) sum_q loss_q, n the number of
queries (SVM-light's '-z p' with c_light = c_rank / n), RankSVM(C=c) here. -e is
SVM-rank's epsilon: with -l 1 it is scaled, as SVM-rank does, by the mean number of
pairs per query (the NOTE line prints the value used).

Only the 1-slack algorithm with margin rescaling is implemented: -w 0..4 all select it
(they reach the same optimum), -o 2 and -p 1 are the only accepted values. The settings
of SVM-struct's own solver (-k, -f, -b, -n, -m, -q, -h N, -#) and SVM-light's kernel
parameters (-d -g -s -r -u) are accepted and unused. -a (write the dual variables) and
-w 9 (a custom algorithm) are refused. Unlike SVM-rank, every error exits with a
non-zero status, and queries need not be sorted by qid.
"""

DIALECT = Dialect(
    "svm_rank_learn", f"svmrank {__version__}: train a linear ranking SVM on SVM-rank's "
    "pairwise loss (SVM-rank V1.00 options).", EPILOG,
    positionals=[("example_file", dict(help="training data (SVMlight format with qid)")),
                 ("model_file", dict(nargs="?", default="svm_struct_model",
                                     help="where to write the learned model (default "
                                          "svm_struct_model)"))],
    options=[
        c_option(None, "C: trade-off between training error and margin (required, as "
                       "for svm_rank_learn)"),
        e_option(0.001, "epsilon: allowed violation of the most violated constraint "
                        "(default 0.001; with -l 1 scaled as SVM-rank does)"),
        Option("-l", USED, type=int, default=1, metavar="[1,2]", only=tuple(PAIR_LOSSES),
               refuse="{flag} {value} is not supported: SVM-rank's losses are 1 (swapped "
                      "pairs summed over queries) and 2 (their fraction averaged over "
                      "queries)",
               help="loss function, see below (default 1)",
               scale="1: RankSVM(loss='pairs', pair_loss='count'), "
                     "2: pair_loss='fraction'"),
        Option("-w", UNUSED, type=int, default=3, metavar="[0..4]", only=(0, 1, 2, 3, 4),
               refuse="{flag} {value} is not supported: only SVM-struct's algorithms "
                      "0..4 (all solve the same problem; svmrank uses the 1-slack "
                      "cutting plane)",
               help="SVM-struct's algorithm choice: accepted (all reach the same optimum); "
                    "svmrank always uses the 1-slack cutting plane"),
        *rescaling_options(),
        *kernel_options(),
        *solver_settings("fbknmq"),
        Option("-#", UNUSED, dest="qp_iterations", type=int, metavar="int"),
        *verbosity_options("verbosity: 0 quiet, 1 one line per cutting-plane iteration "
                           "and a summary (default 1)"),
    ])


def build_parser():
    """The argparse parser of :data:`DIALECT`."""
    return DIALECT.parser()


def parse_options(argv):
    """Parse and check the options; raise CLIError naming the bad one."""
    args = build_parser().parse_args(argv)
    if args.c is None:
        raise CLIError("you have to specify a value for the parameter '-c' (C > 0), as "
                       "for svm_rank_learn")
    return DIALECT.check(args)


def count_pairs(y, qid):
    """Number of pairs of different labels within each query, summed, and the number
    of queries."""
    queries, inverse = np.unique(qid, return_inverse=True)
    sizes = np.bincount(inverse).astype(np.float64)
    _, level = np.unique(np.column_stack([inverse, y]), axis=0, return_inverse=True)
    ties = np.bincount(level.ravel()).astype(np.float64)
    return int(round((np.sum(sizes ** 2) - np.sum(ties ** 2)) / 2)), len(queries)


def rank_epsilon(epsilon, loss, n_pairs, n_queries):
    """The epsilon svm_rank_learn uses: with -l 1, scaled by the mean number of pairs
    per query (its stopping criterion relative to the largest loss)."""
    return epsilon * n_pairs / n_queries if loss == 1 else epsilon


def make_estimator(args, n_pairs, n_queries):
    """The RankSVM of the options, for data with these pair and query counts."""
    from ..estimators import RankSVM  # (imported here: it imports scikit-learn)
    return RankSVM(loss="pairs", pair_loss=PAIR_LOSSES[args.l], C=args.c,
                   epsilon=rank_epsilon(args.e, args.l, n_pairs, n_queries),
                   max_iter=100000, verbose=int(args.v >= 1))


def learn(argv):
    """Train and write the model; errors propagate (see :func:`main`)."""
    args = parse_options(argv)
    check_writable(args.model_file, inputs=(args.example_file,))
    if args.v >= 1:
        print("Reading training examples...", end="", flush=True)
    X, y, qid = load_svmlight(args.example_file, max_index=MAX_TRAIN_FEATURES)
    n_pairs, n_queries = count_pairs(y, qid)
    if args.v >= 1:
        print(f"done\nTraining set properties: {X.shape[1]} features, {n_queries} rankings, "
              f"{X.shape[0]} examples", flush=True)
        if args.l == 1:
            print("NOTE: Adjusted stopping criterion relative to maximum loss: "
                  f"eps={rank_epsilon(args.e, args.l, n_pairs, n_queries):f}", flush=True)
    if n_pairs == 0:
        raise ValueError(f"{args.example_file}: no query has two examples of different "
                         "labels: there is no pair to rank")
    estimator = make_estimator(args, n_pairs, n_queries)
    start = time.perf_counter()
    try:
        estimator.fit(X, y, qid=qid)
    except ValueError as exc:  # the data cannot be trained on: say which file
        raise ValueError(f"{args.example_file}: {exc}") from None
    elapsed = time.perf_counter() - start
    write_model(args.model_file, to_model(estimator, n_train=X.shape[0]))
    if args.v >= 1:
        r = estimator.result_
        print(f"{'Converged' if r.converged else 'Stopped (not converged)'} after "
              f"{r.n_iter} iteration{'s' * (r.n_iter != 1)}, {r.n_constraints} "
              f"constraint{'s' * (r.n_constraints != 1)}; objective "
              f"{r.primal_objective:.8g}, duality gap {r.duality_gap:.3g}; "
              f"{elapsed:.2f}s.\nWriting learned model...done", flush=True)
    return 0


def main(argv=None):
    """Entry point of ``svm_rank_learn``: returns the exit status."""
    return run(learn, argv, prog="svm_rank_learn")


if __name__ == "__main__":
    sys.exit(main())
