"""``svm_ap_learn [options] example_file model_file``: a drop-in for svm_map_learn /
svm_perf_learn that trains on AP (or NDCG, ROC area, error rate) and writes an
SVM-light V6.20 linear model."""
import math
import sys
import time
import warnings

from .. import __version__
from ..bags import load_bags
from ..graph import edges_for_examples
from ..exceptions import InputFormatError
from ..problems.appx import APPX_BIAS
from ..inference import METHODS, SEARCH_LOSSES, SEARCH_METHODS
from ..io.estimator_model import to_model
from ..io.model_file import write_model
from .common import (CLIError, check_outputs, dask_client, load_training, nonempty, plot_if_asked,
                     positive_float, run, stop_if_interrupted, strict_int, training_summary)
from .dialects import (PERF_SETTINGS, USED, Dialect, Option, c_option, dask_option, e_option,
                       kernel_options, learner_positionals, plot_options, rescaling_options,
                       solver_settings, verbosity_options)

# SVM-perf's -l numbers where they overlap, plus names
LOSS_CODES = {"2": "error", "10": "roc", "11": "ap", "ap": "ap", "ndcg": "ndcg", "roc": "roc",
              "error": "error"}
MODEL_LOSSES = {"hob": "error", "hoap": "ap"}  # what --model hob / hoap train
MODEL_LOSS_NAMES = {"hob": "a weighted error rate", "hoap": "AP"}
UNSUPPORTED_LOSSES = {"0": "zero/one", "1": "F1", "3": "Prec/Rec break-even", "4": "Prec@k",
                      "5": "Rec@k"}

EPILOG = """\
Losses (-l): 11 or ap = 1 - average precision (default), ndcg = 1 - NDCG (binary
relevance), 10 or roc = 1 - ROC area, 2 or error = error rate (the binary SVM).

C is on SVM^map's scale: the loss lies in [0, 1]. svm_perf_learn counts losses in
percent, so a C tuned for svm_perf_learn corresponds to -c (100 * C_perf) here for the
error rate and -c (25 * C_perf) for ROC area (docs/algorithms.md), and its epsilon to
-e (epsilon_perf / 100). svm_perf_learn itself takes SVM-perf's C and its losses 0-5.
C times the squared norm of a cutting plane (about that of an example) must stay
below 1e18, what float64 training resolves: a larger C or larger features are refused
(scaling the features by s acts as multiplying C by s^2).
With -l 2 the problem is 1/2|w|^2 + (C/n) sum_i hinge_i: SVM-light's C is C/n; a
file with several queries is refused (svm_perf_learn -l 2 ignores qid). Lines with
qid:N form queries: one ranking each, the loss averaged over queries; queries without a
relevant (label > 0) or without a non-relevant example are skipped with a warning.

Only the 1-slack algorithm with margin rescaling is implemented: -w 3 and -w 4 (the
default) both select it, -o 2 and -p 1 are the only accepted values. The settings
of SVM-struct's own solver (-f, -b, -k, -n, -m, -q, and -h N) are accepted and unused:
the QP here is solved exactly. So are svm_perf_learn's --s (shrinking), --p (k of
Prec@k, a loss not offered) and its sparse-kernel settings --i, --k, --r, --f (--t
only as 0). Unlike SVM-struct, every error exits with a non-zero status.
"""


DIALECT = Dialect(
    "svm_ap_learn", f"svmrank {__version__}: train a linear structural SVM on a rank loss "
    "(SVM-struct options).", EPILOG,
    positionals=learner_positionals("training data (SVMlight format, qid allowed)"),
    options=[
        c_option(0.01, "C: trade-off between training error and margin (default 0.01)"),
        e_option(0.1, "epsilon: allowed violation of the most violated constraint "
                      "(default 0.1)"),
        Option("-l", USED, default=None, metavar="loss",
               help="loss function, see below (default ap)"),
        Option("-w", USED, type=int, default=4, metavar="[3,4]", only=(3, 4),
               refuse="{flag} {value} is not supported: only the 1-slack algorithm "
                      "(-w 3 or 4)",
               help="structural learning algorithm: 3 and 4 = 1-slack cutting plane "
                    "(default 4)"),
        *rescaling_options(),
        *kernel_options(),
        *solver_settings("fbknmq"),
        *PERF_SETTINGS,
        *verbosity_options("verbosity: 0 quiet, 1 one line per cutting-plane iteration "
                           "and a summary (default 1); with --latent 1 prints the summary "
                           "and 2 adds a line per CCCP iteration; with --model hoap 1 "
                           "prints a line per CCCP iteration"),
        *plot_options("the training curves", learner=True),
        Option("-#", USED, dest="max_iter", type=int, default=100000, metavar="int",
               check=lambda v: (f"-#: expected a positive number of iterations, got {v}"
                                if v < 1 else None),
               help="maximum cutting-plane iterations (default 100000; SVM-struct's -# "
                    "bounds its inner QP solver, which here is exact)"),
        Option("--b", USED, dest="bias", type=float, default=1.0, metavar="float",
               check=lambda v: (None if v >= 0 and math.isfinite(v) else
                                f"--b: expected a finite value >= 0, got {v}"),
               help="value of the bias feature for -l 2 and --model hob|hoap (0: none; "
                    "default 1); --approx fixes it at 1; the other rank losses have no "
                    "threshold and ignore it"),
        Option("--lai", USED, choices=sorted(METHODS), default="qs",
               help="loss-augmented inference algorithm (default qs)"),
        Option("--approx", USED, type=float, default=None, metavar="K",
               help="AP-SVM-APPX: keep the top K%% (0-100) of the samples a binary SVM "
                    "classifies with margin >= 1 as hard constraints and optimise the "
                    "rank loss on the rest (default: exact problem)"),
        Option("--latent", USED, flag_only=True, default=False,
               help="bags of candidates: one candidate per line, qid = bag id, '# known' "
                    "marks a bag's known candidate; trains latent AP-SVM (-l ap) or "
                    "latent SVM (-l 2) by CCCP"),
        Option("--model", USED, choices=["hob", "hoap"], default=None,
               help="high-order ranking (Dokania et al. 2014) over linked examples: "
                    "HOB-SVM or HOAP-SVM"),
        Option("--eta", USED, type=float, default=None, metavar="float",
               help="with --model: weight of the pairwise term (default 1; 0: none)"),
        Option("--pairwise-features", USED, default=None, metavar="LIST",
               help="with --model: features of the pairwise term, 'all' (default), "
                    "'none' (only the constant bias feature: a learned Potts term) or "
                    "comma-separated 1-based feature numbers, e.g. 1,5,7"),
        Option("-j", USED, dest="J", type=positive_float("-j"), default=None, metavar="float",
               help="cost factor of errors on positive examples (SVM-light's -j): "
                    "latent SVM's J (default 1) and HOB-SVM's J (default |N|/|P|)"),
        Option("--robust", USED, type=float, default=None, metavar="FRACTION",
               help="with --latent -l 2: ignore this fraction (0 <= c < 1) of the "
                    "negative candidates, the most confusing (those whose removal "
                    "lowers the objective most); every negative bag keeps one "
                    "(default 0)"),
        Option("--n-init", USED, type=int, default=None, metavar="int",
               help="with --latent: random initialisations, the best objective wins "
                    "(default 1)"),
        Option("--seed", USED, type=int, default=None, metavar="int",
               help="with --latent: seed of the random initialisations (default 0)"),
        Option("--edges", USED, type=nonempty("a file name"), metavar="FILE", default=None,
               help="with --model: links, 'u v' per line (0-based example rows)"),
        Option("--groups", USED, type=nonempty("a key"), metavar="KEY", default=None,
               help="with --model: link examples sharing a key: 'qid', or KEY=value "
                    "in the example's comment"),
        dask_option("train", "a query's lines consecutive"),
    ])


def build_parser():
    """The argparse parser of :data:`DIALECT`."""
    return DIALECT.parser()


def parse_options(argv):
    """Parse and check the options; raise CLIError naming the bad one."""
    args = build_parser().parse_args(argv)
    if args.l in UNSUPPORTED_LOSSES:
        raise CLIError(f"-l {args.l} ({UNSUPPORTED_LOSSES[args.l]}) is not supported; "
                       "use 11/ap, ndcg, 10/roc or 2/error (svm_perf_learn trains "
                       f"-l {args.l})")
    if args.l is not None and args.l not in LOSS_CODES:
        raise CLIError(f"-l: unknown loss {args.l!r}; use 11/ap, ndcg, 10/roc or 2/error")
    if args.model and args.l is not None and LOSS_CODES[args.l] != MODEL_LOSSES[args.model]:
        raise CLIError(f"-l {args.l}: --model {args.model} trains its own loss "
                       f"({MODEL_LOSS_NAMES[args.model]}); leave -l out")
    if args.l is None:
        args.l = MODEL_LOSSES[args.model] if args.model else "ap"
    if args.model == "hoap" and args.lai not in ("qs", "greedy"):
        raise CLIError(f"--lai {args.lai}: --model hoap takes qs or greedy")
    DIALECT.check(args)
    if args.approx is not None and not 0 <= args.approx <= 100:
        raise CLIError(f"--approx: expected a percentage in [0, 100], got {args.approx:g}")
    if args.approx is not None and args.bias != APPX_BIAS:
        raise CLIError(f"--b: the --approx model's bias feature is fixed at {APPX_BIAS:g}, "
                       f"got {args.bias:g}")
    args.loss = LOSS_CODES[args.l]
    if (args.edges or args.groups) and not args.model:
        raise CLIError("--edges and --groups need --model hob or hoap")
    if args.model and not (args.edges or args.groups):
        raise CLIError(f"--model {args.model} needs --edges FILE or --groups KEY")
    if args.edges and args.groups:
        raise CLIError("--edges and --groups: give one of them")
    if args.model and (args.latent or args.approx is not None):
        raise CLIError("--model cannot be combined with --latent or --approx")
    # the options of one mode are refused without it, even at their default value
    if not args.model and (args.eta is not None or args.pairwise_features is not None):
        raise CLIError("--eta and --pairwise-features need --model hob or hoap")
    latent_svm = args.latent and args.loss == "error"
    if args.J is not None and not (latent_svm or args.model == "hob"):
        raise CLIError("-j needs --latent -l 2 (latent SVM) or --model hob")
    if args.robust is not None and not latent_svm:
        raise CLIError("--robust needs --latent -l 2 (latent SVM)")
    if (args.n_init is not None or args.seed is not None) and not args.latent:
        raise CLIError("--n-init and --seed need --latent")
    for name, default in (("eta", 1.0), ("pairwise_features", "all"), ("robust", 0.0),
                          ("n_init", 1), ("seed", 0)):
        if getattr(args, name) is None:
            setattr(args, name, default)
    if not (args.eta >= 0 and math.isfinite(args.eta)):
        raise CLIError(f"--eta: expected a finite value >= 0, got {args.eta}")
    if not 0 <= args.robust < 1:
        raise CLIError(f"--robust: expected a fraction in [0, 1), got {args.robust}")
    if args.n_init < 1:
        raise CLIError(f"--n-init: expected a positive number, got {args.n_init}")
    args.pairwise = parse_feature_list(args.pairwise_features)
    if args.seed < 0:
        raise CLIError(f"--seed: expected an integer >= 0, got {args.seed}")
    if args.lai in SEARCH_METHODS and args.loss not in SEARCH_LOSSES and args.loss != "error":
        raise CLIError(f"--lai {args.lai} needs -l ap or roc (its f_j must be unimodal); "
                       "use qs, greedy or select")
    if args.approx is not None and (args.latent or args.loss == "error"):
        raise CLIError("--approx needs a rank loss (-l ap, ndcg or roc) without --latent")
    if args.dask is not None and (args.latent or args.model or args.approx is not None):
        raise CLIError("--dask cannot be combined with --latent, --model or --approx")
    return args


def parse_feature_list(text):
    """--pairwise-features: None (all), [] (none) or 0-based indices of 1-based numbers."""
    if text == "all":
        return None
    if text == "none":
        return []
    try:
        numbers = [strict_int(tok) for tok in text.split(",")]
    except ValueError:
        raise CLIError(f"--pairwise-features: expected 'all', 'none' or comma-separated "
                       f"feature numbers, got {text!r}") from None
    if min(numbers) < 1:
        raise CLIError(f"--pairwise-features: feature numbers start at 1, got {min(numbers)}")
    return [n - 1 for n in numbers]


def make_estimator(args):
    """The estimator the options describe."""
    # (imported here: the estimators import scikit-learn, which -? and option errors skip)
    from ..estimators import HOAPSVM, HOBSVM, BinarySVM, LatentAPSVM, LatentSVM, RankSVM
    common = dict(C=args.c, epsilon=args.e, max_iter=args.max_iter, verbose=int(args.v >= 1))
    if args.model:
        high_order = dict(bias=args.bias, eta=args.eta, pairwise_features=args.pairwise, **common)
        if args.model == "hob":
            return HOBSVM(J=args.J, **high_order)
        return HOAPSVM(lai=args.lai, **high_order)
    if args.latent:
        if args.loss not in ("ap", "error"):
            raise CLIError(f"--latent supports -l ap (latent AP-SVM) and -l 2 (latent SVM), "
                           f"not {args.l!r}")
        common["verbose"] = int(args.v >= 2)  # CCCP lines only at -v 2
        common.update(n_init=args.n_init, random_state=args.seed)
        if args.loss == "error":
            return LatentSVM(bias=args.bias, J=1.0 if args.J is None else args.J,
                             c=args.robust, **common)
        return LatentAPSVM(lai=args.lai, **common)
    if args.loss == "error":
        return BinarySVM(bias=args.bias, **common)
    return RankSVM(loss=args.loss, lai=args.lai, approx=args.approx, **common)


def learn(argv):
    """Train and write the model; errors propagate (see :func:`main`)."""
    args = parse_options(argv)
    estimator = make_estimator(args)
    if args.dask is not None:
        return learn_on_dask(args, estimator)
    check_outputs(args, args.model_file, inputs=[f for f in (args.example_file, args.edges) if f])
    start = time.perf_counter()
    if args.latent:
        X, y, qid, known = load_training(args.example_file, load_bags)
    elif args.model and args.groups not in (None, "qid"):  # group keys in the comments
        X, y, qid, comments = load_training(args.example_file, return_comments=True)
    else:
        X, y, qid = load_training(args.example_file)
    if args.model and args.pairwise and max(args.pairwise) >= X.shape[1]:
        raise CLIError(f"--pairwise-features: feature {max(args.pairwise) + 1} exceeds the "
                       f"highest feature number {X.shape[1]} of {args.example_file}")
    if args.v >= 1:
        print(f"Reading training examples... {X.shape[0]} examples, {X.shape[1]} features, "
              f"{len(set(qid.tolist()))} queries.", flush=True)
    try:
        if args.latent:
            estimator.fit(X, y, bags=qid, known=known)
        elif args.model:
            if args.groups != "qid" and len(set(qid.tolist()) - {0}) > 1:
                warnings.warn(f"{args.example_file}: --model ranks all examples as one "
                              "query (Dokania et al.); qid is used only by --groups qid",
                              UserWarning, stacklevel=2)
            keys = comments if args.groups not in (None, "qid") else None
            estimator.fit(X, y, edges=edges_for_examples(X.shape[0], args.edges, args.groups,
                                                         qid, keys))
        else:
            if args.loss == "error":
                refuse_queries(len(set(qid.tolist())))
            estimator.fit(X, y, qid=qid if (qid != 0).any() else None)
    except InputFormatError:  # (a malformed --edges file: its message names it)
        raise
    except ValueError as exc:  # the data cannot be trained on: say which file
        raise ValueError(f"{args.example_file}: {exc}") from None
    return write_and_report(args, estimator, X.shape[0], time.perf_counter() - start)


def refuse_queries(n_queries):
    """-l 2 on a file of several queries: refused, never a silent merge (issue 25)."""
    if n_queries > 1:
        raise ValueError(f"-l 2 trains one binary classifier (label > 0 against the rest) "
                         f"and cannot honour its {n_queries} queries (qid); rank within "
                         "queries with -l ap, ndcg or roc (or svm_rank_learn), or train the "
                         "error rate over all lines with svm_perf_learn -l 2")


def write_and_report(args, estimator, n_train, elapsed):
    """Write the model file (not after Ctrl-C without --save-on-interrupt; --plot's
    figure first); with -v, the learner's summary line."""
    stop_if_interrupted(args, estimator)
    plot_if_asked(args, "training_curves", estimator)
    write_model(args.model_file, to_model(estimator, n_train=n_train))
    if args.v >= 1:
        summary = training_summary(estimator.result_, elapsed,
                                   interrupted=getattr(estimator, "interrupted_", False),
                                   converged=estimator.converged_)
        print(f"{summary}\n"
              f"Writing model file {args.model_file}... done", flush=True)
    return 0


def learn_on_dask(args, estimator):
    """--dask: read the shards into the cluster, train there, write the model."""
    check_outputs(args, args.model_file, inputs=[])
    start = time.perf_counter()
    with dask_client(args) as (svmrank_dask, client):
        data = svmrank_dask.read_svmlight(args.example_file, n_features="max",
                                          client=client)
        if args.v >= 1:
            print(f"Reading training examples... {data.shape[0]} examples, {data.shape[1]} "
                  f"features, {len(data.paths)} shards.", flush=True)
        try:
            if args.loss == "error":
                refuse_queries(len(data.query_pairs()))
            estimator.fit(data)
        except ValueError as exc:
            raise ValueError(f"{args.example_file}: {exc}") from None
    return write_and_report(args, estimator, data.shape[0], time.perf_counter() - start)


def main(argv=None):
    """Entry point of ``svm_ap_learn``: returns the exit status."""
    return run(learn, argv, prog="svm_ap_learn")


if __name__ == "__main__":
    sys.exit(main())
