"""``svm_rank_learn [options] example_file model_file``: a drop-in for SVM-rank V1.00's
svm_rank_learn (Joachims 2006): the pairwise loss over all pairs of different relevance
within a query, written as an SVM-light V6.20 linear model."""
import sys

import numpy as np

from .. import __version__
from ..graded import MAX_LEVEL, graded_levels
from .common import check_outputs, dask_client, example_place, fit_and_write, load_training, run
from .dialects import (UNUSED, USED, Dialect, Option, c_option, dask_option, e_option,
                       kernel_options, learner_positionals, plot_options, require_c,
                       rescaling_options, solver_settings, verbosity_options)

# svm_rank_learn's -l: the RankSVM pair_loss of each
PAIR_LOSSES = {1: "count", 2: "fraction"}

EPILOG = """\
Losses (-l):
   1  total number of swapped pairs summed over all queries (default)
   2  fraction of swapped pairs averaged over all queries
A pair is two examples of one query (qid) with different labels (any number of
relevance levels); a swapped pair is one the model does not rank with a margin.

-c is SVM-rank's C: the objective is 1/2|w|^2 + (C/n) sum_q loss_q, n the number of
queries (SVM-light's '-z p' with c_light = c_rank / n). -e is SVM-rank's epsilon: with
-l 1 it is scaled, as SVM-rank does, by the mean number of pairs per query (the NOTE
line prints that value). RankSVM(loss='pairs') averages over the n_r queries with two
labels or more: it trains at C = c n_r / n and epsilon rescaled alike
(svmrank.losses.svm_rank_parameters, docs/algorithms.md). Labels are relevance
levels: any real values, each read as its rank among its query's labels, as SVM-rank
compares them.

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
    positionals=learner_positionals("training data (SVMlight format with qid)"),
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
        *plot_options("the training curves", learner=True),
        dask_option("train", "a query's lines consecutive"),
    ])


def build_parser():
    """The argparse parser of :data:`DIALECT`."""
    return DIALECT.parser()


def parse_options(argv):
    """Parse and check the options; raise CLIError naming the bad one."""
    args = build_parser().parse_args(argv)
    require_c(args, "svm_rank_learn")
    return DIALECT.check(args)


def pairs_per_query(y, qid):
    """Number of pairs of different labels (y_i > y_j) in each query, in qid order."""
    _, query = np.unique(qid, return_inverse=True)
    query = query.ravel()
    sizes = np.bincount(query).astype(np.float64)
    _, level = np.unique(np.column_stack([query, y]), axis=0, return_inverse=True)
    level = level.ravel()
    ties = np.bincount(level).astype(np.float64)
    level_query = np.zeros(len(ties), dtype=np.int64)
    level_query[level] = query
    same = np.bincount(level_query, weights=ties ** 2, minlength=len(sizes))
    return np.rint((sizes ** 2 - same) / 2).astype(np.int64)


def make_estimator(args, pairs):
    """The RankSVM of the options for training queries with these pair counts
    (svm_rank_learn's C and epsilon mapped by :func:`svmrank.losses.svm_rank_parameters`)."""
    from ..estimators import RankSVM  # (imported here: it imports scikit-learn)
    from ..losses import svm_rank_parameters
    return RankSVM(loss="pairs", max_iter=100000, verbose=int(args.v >= 1),
                   **svm_rank_parameters(args.c, args.e, args.l, pairs))


def learn(argv):
    """Train and write the model; errors propagate (see :func:`main`)."""
    args = parse_options(argv)
    if args.dask is not None:
        return learn_on_dask(args)
    check_outputs(args, args.model_file, inputs=(args.example_file,))
    if args.v >= 1:
        print("Reading training examples...", end="", flush=True)
    X, y, qid = load_training(args.example_file)
    y = label_order(y, qid, args.example_file)
    estimator = estimator_for(args, pairs_per_query(y, qid), X.shape)
    fit_and_write(estimator, X, y, args, "Writing learned model...done", tool_c=args.c,
                  qid=qid)
    return 0


def label_order(y, qid, path):
    """Labels that the pairwise loss reads as SVM-rank does: only their order within a
    query matters, so labels that are not relevance levels (-1/0/1, 0.5 steps, any
    real value) become each label's rank among its query's distinct labels, which
    gives the same pairs; levels stay as they are. A ValueError naming the file when a
    query has more than ``MAX_LEVEL + 1`` distinct labels."""
    try:
        graded_levels(y)
        return y
    except ValueError:
        pass
    _, query = np.unique(qid, return_inverse=True)
    keys, pair = np.unique(np.column_stack([query.ravel(), y]), axis=0, return_inverse=True)
    first = np.searchsorted(keys[:, 0], keys[:, 0], side="left")
    rank = (np.arange(len(keys)) - first)[pair.ravel()]
    if rank.max() > MAX_LEVEL:
        k = int(np.argmax(rank > MAX_LEVEL))
        raise ValueError(f"{example_place(path, k)}: the query of this line has more "
                         f"than {MAX_LEVEL + 1} distinct labels, the most the pairwise "
                         "inference orders")
    return rank.astype(np.float64)


def estimator_for(args, pairs, shape):
    """The RankSVM of the options for training data of this ``shape`` whose queries have
    these pair counts, after the training set's -v lines; a ValueError naming the
    file when no query has a pair."""
    if args.v >= 1:
        print(f"done\nTraining set properties: {shape[1]} features, {len(pairs)} rankings, "
              f"{shape[0]} examples", flush=True)
        if args.l == 1:  # (svm_rank_learn's epsilon; RankSVM's is rescaled, see EPILOG)
            print("NOTE: Adjusted stopping criterion relative to maximum loss: "
                  f"eps={args.e * pairs.sum() / len(pairs):f}", flush=True)
    if pairs.sum() == 0:
        raise ValueError(f"{args.example_file}: no query has two examples of different "
                         "labels: there is no pair to rank")
    return make_estimator(args, pairs)


def learn_on_dask(args):
    """--dask: read the shards into the cluster, train there, write the model."""
    check_outputs(args, args.model_file, inputs=[])
    with dask_client(args) as (svmrank_dask, client):
        if args.v >= 1:
            print("Reading training examples...", end="", flush=True)
        data = svmrank_dask.read_svmlight(args.example_file, n_features="max",
                                          client=client)
        estimator = estimator_for(args, data.query_pairs(), data.shape)
        fit_and_write(estimator, data, None, args, "Writing learned model...done",
                      tool_c=args.c)
    return 0


def main(argv=None):
    """Entry point of ``svm_rank_learn``: returns the exit status."""
    return run(learn, argv, prog="svm_rank_learn")


if __name__ == "__main__":
    sys.exit(main())
