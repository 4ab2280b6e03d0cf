"""``svm_learn [options] example_file model_file``: SVM-light V6's linear classification
(``-z c -t 0``) as a dialect: a binary SVM on the per-example hinge loss, written as an
SVM-light V6.02 linear model (the version line SVM-light V6.02's svm_classify
requires; the layout is V6.20's)."""
import os
import sys

import numpy as np

from .. import __version__
from ..io.model_file import SVM_LIGHT_VERSION
from ..io.svmlight import open_data
from .common import (check_outputs, example_place, fit_and_write, load_training, positive_float,
                     run)
from .dialects import (REFUSED, UNUSED, USED, Dialect, Option, e_option, kernel_options,
                       learner_positionals, plot_options, solver_settings)

EPILOG = """\
-c is SVM-light's C: the problem is 1/2|w|^2 + C sum_i hinge_i, BinarySVM(C = c * n)
here (n training examples); the default is what SVM-light computes, 1 / mean(|x|)^2.
-b 1 (default) learns the threshold as the weight of a constant feature 1, which is
regularised (as LinearSVC's intercept), unlike SVM-light's b: the models differ
slightly; -b 0 (no threshold) solves exactly SVM-light's problem.
-e bounds the mean hinge violation of the 1-slack problem (SVM-light's bounds each
example's KKT condition; both are in margin units).
Labels: > 0 positive, < 0 negative; 0 (unlabeled: SVM-light's transduction) is refused,
and so are per-example cost factors (cost:F other than 1), SVM-light's example weights.

Only classification (-z c) with the linear kernel (-t 0) is implemented. The settings
of SVM-light's own solver (-q, -n, -m, -h, -f, -#) and the kernel parameters
(-d -g -s -r -u) are accepted and unused, as are -w (regression's tube) and -o/-k
(the XiAlpha estimate, used only with -x 1). Refused: -z r/p, -j other than 1,
-i 1, -x 1, -p, -y 1, -a, -l.
"""


def _refuse_with(what):
    return "{flag} {value} is not supported: " + what


DIALECT = Dialect(
    "svm_learn", f"svmrank {__version__}: train a linear binary SVM (SVM-light options, "
    "-z c -t 0).", EPILOG,
    positionals=learner_positionals("training data (SVMlight format, labels +1/-1)", "svm_model"),
    options=[
        Option("-z", USED, default="c", metavar="c", only=("c",),
               refuse=_refuse_with("only classification (-z c); for preference ranking "
                                   "(-z p) use svm_rank_learn -l 1 with C = c * number of "
                                   "queries"),
               help="learning task: c = classification (the only one)"),
        Option("-c", USED, type=positive_float("-c"), default=None, metavar="float",
               help="C: trade-off between training error and margin (default "
                    "1 / mean(|x|)^2)", scale="BinarySVM(C = c * n)"),
        Option("-b", USED, dest="biased", type=int, default=1, metavar="[0,1]", only=(0, 1),
               refuse=_refuse_with("-b takes 0 or 1 (biased hyperplane)"),
               help="1: biased hyperplane (x.w - b), 0: unbiased (default 1)",
               scale="BinarySVM(bias=0 or 1)"),
        Option("-j", UNUSED, type=float, default=1.0, metavar="float", only=(1.0,),
               refuse=_refuse_with("cost factors other than 1"),
               help="cost factor of errors on positive examples: 1 only"),
        Option("-i", UNUSED, type=int, default=0, metavar="0", only=(0,),
               refuse=_refuse_with("removing inconsistent examples (-i 0 only)")),
        Option("-x", UNUSED, type=int, default=0, metavar="0", only=(0,),
               refuse=_refuse_with("leave-one-out estimates (-x 0 only)")),
        Option("-o", UNUSED, dest="xa_rho", type=float),
        Option("-k", UNUSED, dest="xa_depth", type=float),
        Option("-w", UNUSED, dest="tube", type=float),
        Option("-p", REFUSED, dest="transduction",
               refuse="-p (transductive learning) is not supported"),
        Option("-l", REFUSED, dest="transduction_file",
               refuse="-l (transductive learning's labels) is not supported"),
        Option("-y", UNUSED, dest="restart", type=int, default=0, metavar="0", only=(0,),
               refuse=_refuse_with("restarting from the dual variables of -a (-y 0 only)")),
        e_option(0.001, "epsilon: tolerance of the termination criterion (default 0.001)"),
        *kernel_options(),
        *solver_settings("qnmf"),
        Option("-#", UNUSED, dest="qp_iterations", type=int, metavar="int"),
        Option("-v", USED, type=int, default=1, metavar="[0..3]",
               check=lambda v: f"-v: expected a verbosity level >= 0, got {v}" if v < 0 else None,
               help="verbosity: 0 quiet, 1 a summary (default 1)"),
        *plot_options("the training curves", learner=True),
    ])


def build_parser():
    """The argparse parser of :data:`DIALECT`."""
    return DIALECT.parser()


def parse_options(argv):
    """Parse and check the options; raise CLIError naming the bad one."""
    return DIALECT.check(build_parser().parse_args(argv))


def default_c(X, path):
    """SVM-light's default C, 1 / (mean |x|)^2 (svm_learn.c's estimate_r_delta_average),
    each norm scaled by its row's largest value (no overflow or underflow of x.x)."""
    top = np.asarray(abs(X).max(axis=1).todense()).ravel()
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    scaled = X.data / np.where(top > 0, top, 1.0)[rows]
    norms = top * np.sqrt(np.bincount(rows, weights=scaled ** 2, minlength=X.shape[0]))
    mean = float(np.mean(norms))
    if mean == 0:
        raise ValueError(f"{path}: every example is zero: no default C (give -c)")
    with np.errstate(over="ignore", divide="ignore"):
        c = float(1.0 / np.float64(mean) ** 2) if np.isfinite(mean) else 0.0
    if not 0 < c < np.inf:
        raise ValueError(f"{path}: the default C, 1 / (mean |x|)^2 with mean |x| = {mean:g}, "
                         f"is {'0' if c == 0 else 'infinite'} in float64: scale the features "
                         f"{'down' if c == 0 else 'up'} or give -c")
    return c


def refuse_cost_factors(path):
    """SVM-light's per-example cost factors (``cost:F``, F != 1) weight the examples'
    hinge terms, which BinarySVM does not: refused at their line (a file read from a
    pipe cannot be read again and is not checked)."""
    if not os.path.isfile(path):
        return
    with open_data(path) as (fh, _):  # (decompressed, as load_svmlight read it)
        buf = fh.read()
    if b"cost:" not in buf:
        return
    for number, line in enumerate(buf.split(b"\n"), start=1):
        for token in line.split(b"#", 1)[0].split():
            if token.startswith(b"cost:") and float(token[5:]) != 1.0:
                raise ValueError(f"{path}:{number}: {token.decode()}: per-example cost factors "
                                 "(SVM-light's example weights) are not supported; remove them")


def learn(argv):
    """Train and write the model; errors propagate (see :func:`main`)."""
    args = parse_options(argv)
    check_outputs(args, args.model_file, inputs=(args.example_file,))
    X, y, _ = load_training(args.example_file, warn_mixed_qid=False)
    n = X.shape[0]
    if (y == 0).any():
        raise ValueError(f"{example_place(args.example_file, int(np.argmax(y == 0)))}: label "
                         "0 marks an unlabeled example (SVM-light's transduction), which is "
                         "not supported")
    if (y > 0).all() or (y < 0).all():
        raise ValueError(f"{args.example_file}: needs positive and negative examples")
    refuse_cost_factors(args.example_file)
    c_light = args.c if args.c is not None else default_c(X, args.example_file)
    if args.v >= 1:
        print(f"Reading examples...done ({n} examples, {X.shape[1]} features; "
              f"C = {c_light:.8g}).", flush=True)
    from ..estimators import BinarySVM  # (imported here: it imports scikit-learn)
    # SVM-light: 1/2|w|^2 + c sum_i hinge_i; BinarySVM: 1/2|w|^2 + (C/n) sum_i hinge_i
    estimator = BinarySVM(C=c_light * n, epsilon=args.e, bias=float(args.biased),
                          max_iter=100000, verbose=0)
    fit_and_write(estimator, X, np.where(y > 0, 1.0, -1.0), args,
                  "(objective on BinarySVM's scale)\nWriting model file...done",
                  version=SVM_LIGHT_VERSION, tool_c=c_light)
    return 0


def main(argv=None):
    """Entry point of ``svm_learn``: returns the exit status."""
    return run(learn, argv, prog="svm_learn")


if __name__ == "__main__":
    sys.exit(main())
