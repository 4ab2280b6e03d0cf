"""``svm_perf_learn [options] example_file model_file``: a drop-in for SVM-perf V3.00's
learner (linear models), with its defaults (-l 2, -w 9, -e 0.1, --b 1; -c required) and
its C, ε and weight scales, trained by svmrank's 1-slack cutting-plane learner."""
import math
import sys
import time

import numpy as np

from .. import __version__
from ..io.estimator_model import to_model
from ..io.model_file import LinearModel, write_model
from ..problems.perf import DEFAULT_K, perf_scale
from .common import (CLIError, check_outputs, load_training, plot_if_asked, run,
                     stop_if_interrupted)
from .dialects import (REFUSED, UNUSED, USED, Dialect, Option, c_option, e_option,
                       kernel_options, learner_positionals, plot_options, require_c,
                       rescaling_options, solver_settings, verbosity_options)

# SVM-perf's -l numbers
LOSSES = {0: "zero_one", 1: "f1", 2: "error", 3: "prbep", 4: "prec@k", 5: "rec@k", 10: "roc",
          11: "ap"}
ALGORITHMS = (0, 1, 2, 3, 4, 9)  # (one structured example: every -w solves the 1-slack problem)

EPILOG = """\
Losses (-l), in percent as SVM-perf counts them:
   0  zero/one loss: 1 if the vector of predictions contains an error, 0 otherwise
   1  F1: 100 minus the F1-score
   2  error rate: percentage of errors in the prediction vector (default)
   3  precision/recall break-even: 100 minus PRBEP
   4  Prec@k: 100 minus precision at k
   5  Rec@k: 100 minus recall at k
  10  ROC area: percentage of swapped positive/negative pairs
  11  average precision: 100 minus AP (SVM-perf's undocumented -l 11)
--p frac: k = frac * #pos for Prec@k (0 < frac <= 1) and Rec@k (frac >= 1); 0 (default)
means 0.5 * #pos for Prec@k and 2 * #pos for Rec@k.

C and epsilon are SVM-perf's: the model written is the one SVM-perf's problem has at
that C (docs/algorithms.md gives each loss's factor to svmrank's scale). The whole file
is one structured example (qid is ignored, as SVM-perf does), so every -w (0-4, 9)
solves the same 1-slack problem exactly; -w 9, SVM-perf's default, only for -l 2, as
SVM-perf allows. Only linear models (-t 0): the sparse-kernel options --i, --k, --r,
--f and --t other than 0 are refused. --s (shrinking) and the SVM-struct solver settings
(-f, -b, -k, -n, -m, -q, -h N) are accepted and unused. Every error exits non-zero
(2: usage, 1: input).
"""


def _refused_sparse(name):
    return Option(f"--{name}", REFUSED, dest=f"sparse_{name}",
                  refuse="{flag} (sparse kernel approximation) is not supported: only "
                         "linear models")


DIALECT = Dialect(
    "svm_perf_learn", f"svmrank {__version__}: SVM-perf's learner for linear models "
    "(multivariate losses).", EPILOG,
    positionals=learner_positionals("training data (SVMlight format)"),
    options=[
        c_option(None, "C: trade-off between training error and margin (required, as for "
                       "svm_perf_learn)"),
        e_option(0.1, "epsilon: tolerance of the termination criterion (default 0.1)"),
        Option("-l", USED, type=int, default=2, metavar="[0..]", only=tuple(LOSSES),
               refuse="{flag} {value}: unknown loss function; use 0, 1, 2, 3, 4, 5, 10 or 11",
               help="loss function, see below (default 2)",
               scale="per loss: docs/algorithms.md#the-scale-of-c"),
        Option("-w", USED, type=int, default=9, metavar="[0..9]", only=ALGORITHMS,
               refuse="{flag} {value}: unknown algorithm; use 0, 1, 2, 3, 4 or 9",
               help="structural learning algorithm (default 9; all solve the same "
                    "problem, see below)"),
        *rescaling_options(),
        *kernel_options(),
        *solver_settings("fbknmq"),
        *verbosity_options("verbosity: 0 quiet, 1 progress and a summary (default 1)"),
        *plot_options("the training curves", learner=True),
        Option("-#", USED, dest="max_iter", type=int, default=100000, metavar="int",
               help="maximum cutting-plane iterations (default 100000)",
               check=lambda v: None if v >= 1 else
               f"-#: expected a positive number of iterations, got {v}"),
        Option("--b", USED, dest="bias", type=float, default=1.0, metavar="float",
               help="value of the L2-bias feature; 0: none (default 1)",
               check=lambda v: None if v >= 0 and math.isfinite(v) else
               f"--b: expected a finite value >= 0, got {v}"),
        Option("--p", USED, dest="k_frac", type=float, default=0.0, metavar="[0..]",
               help="k of Prec@k and Rec@k as a fraction of the positives (default 0)",
               check=lambda v: None if v >= 0 and math.isfinite(v) else
               f"--p: expected a finite value >= 0, got {v:g}"),
        Option("--s", UNUSED, dest="shrinking", type=float, metavar="[0,1]"),
        *[_refused_sparse(name) for name in "ikrf"],
        Option("--t", USED, dest="sparse_t", type=int, default=0, metavar="0", only=(0,),
               refuse="{flag} {value} (sparse kernel approximation) is not supported: "
                      "only linear models"),
    ])


def build_parser():
    """The argparse parser of :data:`DIALECT`."""
    return DIALECT.parser()


def parse_options(argv):
    """Parse and check the options; raise CLIError naming the bad one."""
    args = DIALECT.check(build_parser().parse_args(argv))
    args.loss = LOSSES[args.l]
    if args.w == 9 and args.loss != "error":
        raise CLIError(f"-w 9: the custom algorithm can only optimize the error rate (-l 2), "
                       f"not -l {args.l}; use -w 3")
    if args.loss == "prec@k" and args.k_frac > 1:
        raise CLIError(f"--p {args.k_frac:g}: for Prec@k it must not be larger than 1.0")
    if args.loss == "rec@k" and 0 < args.k_frac < 1:
        raise CLIError(f"--p {args.k_frac:g}: for Rec@k it must not be smaller than 1.0")
    args.k = (args.k_frac or DEFAULT_K[args.loss]) if args.loss in DEFAULT_K else None
    require_c(args, "svm_perf_learn")
    return args


def make_estimator(args, n_positive, n_negative):
    """The estimator of the options on svmrank's scale, and SVM-perf's scale."""
    from ..estimators import BinarySVM, RankSVM
    scale = perf_scale(args.loss, n_positive, n_negative)
    c_factor, eps_factor, _ = scale
    common = dict(C=args.c * c_factor, epsilon=args.e * eps_factor, max_iter=args.max_iter,
                  verbose=int(args.v >= 2))
    if args.loss in ("roc", "ap"):
        return RankSVM(loss=args.loss, **common), scale
    return BinarySVM(loss=args.loss, k=args.k, bias=args.bias, **common), scale


def learn(argv):
    """Train and write the model; errors propagate (see :func:`main`)."""
    args = parse_options(argv)
    check_outputs(args, args.model_file, inputs=[args.example_file])
    if args.v >= 1:
        print("Reading training examples...", end="", flush=True)
    X, y, _ = load_training(args.example_file, warn_mixed_qid=False)
    n_pos = int((y > 0).sum())
    n_neg = len(y) - n_pos
    if args.v >= 1:
        print(f" ({len(y)} examples) done\nTraining set properties: {X.shape[1]} features, "
              f"{len(y)} examples ({n_pos} pos / {n_neg} neg)", flush=True)
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"{args.example_file}: -l {args.l} needs positive (label > 0) and "
                         f"negative examples; got {n_pos} pos / {n_neg} neg")
    estimator, (c_factor, _, w_factor) = make_estimator(args, n_pos, n_neg)
    start = time.process_time()
    try:
        estimator.fit(X, y)
    except ValueError as exc:  # the data cannot be trained on: say which file
        raise ValueError(f"{args.example_file}: {exc}") from None
    runtime = time.process_time() - start
    stop_if_interrupted(args, estimator)
    plot_if_asked(args, "training_curves", estimator)
    # SVM-perf's weights (and threshold, -bias * w_bias) are w_factor times ours; the
    # metadata (C, epsilon: svmrank's) says so, so that from_model reads it back right
    ours = to_model(estimator, n_train=X.shape[0], w_scale=None if w_factor == 1 else w_factor)
    model = LinearModel(w=w_factor * ours.w, b=w_factor * ours.b, metadata=ours.metadata)
    write_model(args.model_file, model)
    if args.v >= 1:
        r = estimator.result_
        # SVM-perf's objective and slack: w_factor² times ours (docs/algorithms.md)
        w_norm = float(np.sqrt(model.w @ model.w + (model.b / args.bias) ** 2
                               if args.bias and args.loss not in ("roc", "ap")
                               else model.w @ model.w))
        print(f"{'Converged' if r.converged else 'Stopped at -# (not converged)'} after "
              f"{r.n_iter} iterations.\n"
              f"Primal objective value: pval={w_factor ** 2 * r.primal_objective:.8g}\n"
              f"Dual objective value: dval={w_factor ** 2 * r.dual_objective:.8g}\n"
              f"Total number of constraints in final working set: {r.n_constraints}\n"
              f"Number of iterations: {r.n_iter}\n"
              f"Norm of weight vector: |w|={w_norm:.5f}\n"
              f"Value of slack variable (global): xi={w_factor ** 2 * c_factor * r.xi:.5f}\n"
              f"Runtime in cpu-seconds: {runtime:.2f}\n"
              f"Writing learned model...done", flush=True)
    return 0


def main(argv=None):
    """Entry point of ``svm_perf_learn``: returns the exit status."""
    return run(learn, argv, prog="svm_perf_learn")


if __name__ == "__main__":
    sys.exit(main())
