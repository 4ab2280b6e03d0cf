"""``svm_topk_learn [options] example_file model_file``: svm_multiclass_learn's
interface for the top-k multiclass SVM (Lapin et al. 2015), trained by Prox-SDCA;
writes an SVM-multiclass V2.20 linear model."""
import sys
import time
import warnings

import numpy as np

from .. import __version__
from ..io.estimator_model import MULTICLASS_SCALE, to_model
from ..io.multiclass_model import check_model_size, format_label, write_multiclass_model
from ..learners.sdca import check_sdca_memory
from ..parallel import current_threads
from .common import (CLIError, check_outputs, load_training, plot_if_asked,
                     refuse_overflowing_rows, run, stop_if_interrupted)
from .dialects import (UNUSED, USED, Dialect, Option, c_option, e_option, kernel_options,
                       learner_positionals, plot_options, rescaling_options,
                       solver_settings, verbosity_options)

EPILOG = """\
-c means what it means for svm_multiclass_learn: the objective is
  1/2 sum_c |w_c|^2 + (C/n) sum_i xi_i,  with margins of 100 (the loss in percent).
With -k 1 the optimum is svm_multiclass_learn's; the model stores those weights
(100 times TopKSVM's coef_ for TopKSVM(C = C / (100 n)), see docs/algorithms.md).

-k sets the top-k hinge loss (1 <= k < number of classes; 1 = Crammer-Singer). It is
not SVM-struct's -k (constraints cached for -w 0/1), which has no use here:
  --loss alpha  max(0, mean of the k largest margin violations)   (default)
  --loss beta   mean of the k largest max(0, margin violation)
Objectives printed (-v 1 summary, -v 2 gap checks) are on that same scale. A C that
works is much larger than LinearSVC's: on letter (15,000 examples) -c 1e5 is
TopKSVM(C=0.067), 70% top-1 accuracy; -c 1 is C=6.7e-7, weights near 0 and 61%.
-e is the relative duality gap (P - D) / max(|P|, |D|) at which Prox-SDCA stops,
not SVM-struct's constraint tolerance. -# caps the epochs (passes over the data).

Labels: if every label is a positive integer, the classes are 1..max label, as in
SVM-multiclass; a class without examples is an error unless --keep-empty-classes keeps
it (as svm_multiclass_learn does). Other labels (0, negative or fractional) are sorted
and become classes 1..m in the model file, which keeps the original labels in its
metadata (svm_topk_classify prints them back).
At most 100,000 classes (of any label kind); a problem whose dual would need more
than svmrank.learners.sdca.MAX_SDCA_BYTES (4 GiB: about 5 x 8 bytes per sample and
class) is refused before training. Only the linear kernel is supported. Every error exits with a non-zero status.
"""


DIALECT = Dialect(
    "svm_topk_learn", f"svmrank {__version__}: train a linear top-k multiclass SVM "
    "(svm_multiclass_learn options).", EPILOG,
    positionals=learner_positionals("training data (SVMlight format, class labels)"),
    options=[
        c_option(None, "C: trade-off between training error and margin (required)"),
        e_option(1e-3, "epsilon: relative duality gap to stop at (default 0.001)"),
        Option("-k", USED, type=int, default=1, metavar="int",
               check=lambda v: f"-k: expected an integer >= 1, got {v}" if v < 1 else None,
               help="k of the top-k hinge loss (default 1)"),
        Option("--loss", USED, choices=("alpha", "beta"), default="alpha",
               help="top-k hinge loss variant (default alpha)"),
        Option("-#", USED, dest="max_epoch", type=int, default=1000, metavar="int",
               check=lambda v: (f"-#: expected a positive number of epochs, got {v}"
                                if v < 1 else None),
               help="maximum number of epochs (default 1000)"),
        Option("--gap-every", USED, dest="gap_every", type=int, default=5, metavar="int",
               check=lambda v: (f"--gap-every: expected a positive number of epochs, got {v}"
                                if v < 1 else None),
               help="compute the duality gap every this many epochs (default 5)"),
        Option("--seed", USED, type=int, default=0, metavar="int",
               check=lambda v: f"--seed: expected an integer >= 0, got {v}" if v < 0 else None,
               help="seed of the random order of each epoch (default 0)"),
        Option("--keep-empty-classes", USED, flag_only=True, default=False,
               help="keep classes of 1..max label that have no example (as "
                    "svm_multiclass_learn does) instead of refusing the file"),
        *verbosity_options("verbosity: 0 quiet, 1 summary, 2 the gap at every check "
                           "(default 1)"),
        *plot_options("the training curves", learner=True),
        *kernel_options(),
        *solver_settings("fbnmq"),
        Option("-w", UNUSED, type=int, default=4, metavar="[0..4]", only=(0, 1, 2, 3, 4),
               refuse="{flag} {value} is not supported: only SVM-struct's 0..4",
               help="SVM-struct's algorithm choice: accepted (all reach the same optimum); "
                    "svmrank always uses Prox-SDCA"),
        *rescaling_options()[:1],
        Option("-l", USED, type=int, default=0, metavar="0", only=(0,),
               refuse="{flag} {value} is not supported: only the zero/one loss (-l 0)",
               help="loss: 0 = zero/one (top-k) loss"),
        *rescaling_options()[1:],
    ])


def build_parser():
    """The argparse parser of :data:`DIALECT`."""
    return DIALECT.parser()


def parse_options(argv):
    """Parse and check the options; raise CLIError naming the bad one."""
    args = build_parser().parse_args(argv)
    if args.c is None:
        raise CLIError("-c is required: the trade-off C > 0, as for svm_multiclass_learn")
    return DIALECT.check(args)


MAX_CLASSES = 100_000  # weights and dual variables grow with the number of classes


def class_labels(y, source, keep_empty=False):
    """Sorted class labels of a training file (see EPILOG for the convention)."""
    present = np.unique(y)
    if len(present) < 2:
        raise ValueError(f"{source}: needs examples of at least 2 classes, found "
                         f"{len(present)}")
    if len(present) > MAX_CLASSES:  # (every label kind: integers, fractional, negative)
        raise ValueError(f"{source}: {len(present)} distinct labels make as many classes; "
                         f"at most {MAX_CLASSES} are supported")
    if not np.all((present >= 1) & (present == np.round(present))):
        return present
    if present[-1] > MAX_CLASSES:  # (checked before an array of max label entries exists)
        raise ValueError(f"{source}: label {format_label(present[-1])} makes "
                         f"{format_label(present[-1])} classes (SVM-multiclass classes are "
                         f"1..max label); at most {MAX_CLASSES} are supported")
    classes = np.arange(1.0, present[-1] + 1.0)
    empty = classes[~np.isin(classes, present)]
    if len(empty) and not keep_empty:
        raise ValueError(f"{source}: class {format_label(empty[0])} has no example ({len(empty)} "
                         f"of the classes 1..{format_label(present[-1])} have none); "
                         "--keep-empty-classes keeps them, as svm_multiclass_learn does")
    if len(empty):
        warnings.warn(f"{source}: {len(empty)} of the classes 1..{format_label(present[-1])} "
                      f"have no example (the first: {format_label(empty[0])}); they are kept "
                      "(--keep-empty-classes)", UserWarning, stacklevel=2)
    return classes


def learn(argv):
    """Train and write the model; errors propagate (see :func:`main`)."""
    args = parse_options(argv)
    check_outputs(args, args.model_file, inputs=(args.example_file,))  # before training
    start = time.perf_counter()
    X, y, _ = load_training(args.example_file, warn_mixed_qid=False)
    classes = class_labels(y, args.example_file, args.keep_empty_classes)
    with np.errstate(over="ignore"):
        refuse_overflowing_rows(np.asarray(X.multiply(X).sum(axis=1)).ravel(),
                                args.example_file, "the squared norm of the example")
    n, m = X.shape[0], len(classes)
    check_model_size(m, X.shape[1], args.example_file)  # (before training, not after)
    try:
        check_sdca_memory(n, m, X.shape[1])
    except ValueError as exc:
        raise ValueError(f"{args.example_file}: {exc}") from None
    if args.k >= m:
        raise ValueError(f"-k {args.k}: must be smaller than the number of classes ({m}) "
                         f"in {args.example_file}")
    if args.v >= 1:
        print(f"Reading training examples... {n} examples, {X.shape[1]} features, "
              f"{m} classes.", flush=True)
    from ..estimators.topk import TopKSVM  # (imported here: it imports scikit-learn)
    # SVM-multiclass counts the 0/1 loss in percent (100 * Delta) and divides C by n
    estimator = TopKSVM(k=args.k, loss=args.loss, C=args.c / (MULTICLASS_SCALE * n),
                        epsilon=args.e, max_epoch=args.max_epoch,
                        check_gap_every=args.gap_every, random_state=args.seed,
                        verbose=0, n_jobs=current_threads())  # (--threads)
    estimator.fit(X, y, classes=classes)
    elapsed = time.perf_counter() - start
    scale = MULTICLASS_SCALE ** 2  # objectives on svm_multiclass_learn's scale, as -c
    if args.v >= 2:  # (the gap checks, in the unit of the summary below)
        for epoch, primal, dual, gap, _ in estimator.history_:
            print(f"epoch {epoch}: primal {scale * primal:.10g} dual {scale * dual:.10g} "
                  f"gap {gap:.3g}", flush=True)
    stop_if_interrupted(args, estimator)
    plot_if_asked(args, "training_curves", [(e, scale * p, scale * d, gap, t) for e, p, d, gap, t
                                            in estimator.history_], quantities=("objective", "dual", "gap"))
    # (C as given: the estimator's C times MULTICLASS_SCALE * n, up to rounding)
    write_multiclass_model(args.model_file, to_model(estimator, n_train=n, C=args.c))
    if args.v >= 1:
        converged = estimator.duality_gap_ <= args.e
        status = ("Converged" if converged else "Interrupted (not converged)"
                  if estimator.interrupted_ else "Stopped at -# (not converged)")
        print(f"{status} after "
              f"{estimator.n_iter_} epochs; objective {scale * estimator.primal_objective_:.8g}, "
              f"dual {scale * estimator.dual_objective_:.8g}, relative duality gap "
              f"{estimator.duality_gap_:.3g}; {elapsed:.2f}s.\n"
              f"Writing model file {args.model_file}... done", flush=True)
    return 0


def main(argv=None):
    """Entry point of ``svm_topk_learn``: returns the exit status."""
    return run(learn, argv, prog="svm_topk_learn")


if __name__ == "__main__":
    sys.exit(main())
