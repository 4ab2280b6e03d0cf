"""``svm_ap_classify [options] example_file model_file output_file``: score examples
with a linear SVM-light model (ours, or svm_learn / svm_perf_learn / svm_rank_learn's),
write one score per line and print svm_perf_classify-style statistics."""
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

from .. import __version__
from ..bags import check_bag_labels, check_bags, load_bags
from ..graph import edges_for_examples
from ..io.atomic import atomic_write
from ..io.estimator_model import HIGH_ORDER_MODELS, from_model, training_info
from ..io.model_file import read_model
from ..io.svmlight import load_svmlight
from .._validation import query_segments
from ..metrics import (average_precision, is_ranked, ndcg, precision_at_k, reciprocal_rank,
                       roc_auc)
from .common import (CLIError, check_outputs, nonempty, plot_pr_if_asked,
                     refuse_overflowing_rows, run, scores_on_dask, write_no_predictions)
from .dialects import (UNUSED, USED, Dialect, Option, classifier_positionals, dask_option,
                       plot_options, verbosity_options)

_LOSS_MEASURES = {"ap": ("1 - AP", average_precision), "ndcg": ("1 - NDCG, binary relevance", ndcg),
                  "roc": ("1 - ROC area", roc_auc)}


DIALECT = Dialect(
    "svm_ap_classify", f"svmrank {__version__}: apply a linear model to examples.",
    "Features beyond the model's highest index are ignored, as SVM-light does\n"
    "(a warning counts them).\n"
    "Scores (w.x - b) are written one per line, %.8f, in input order; a ranking\n"
    "sorts them in decreasing order. AP, NDCG and ROC area are averaged over\n"
    "queries (qid) when the file has them. svm_perf_classify's --d (dense\n"
    "representation) is accepted and unused.",
    positionals=classifier_positionals("examples to classify (SVMlight format)",
                                       "linear SVM-light model"),
    learner=False,
    options=[
        *verbosity_options("verbosity: 0 quiet, 1 statistics (default 1)"),
        *plot_options("the precision-recall curve (the mean over queries with a band, "
                      "when there are several)"),
        Option("-f", USED, type=int, default=1, metavar="1", only=(1,),
               refuse="{flag} {value} is not supported: only -f 1 (decision values)",
               help="output format: 1 = value of the decision function (the only one)"),
        Option("--d", UNUSED, dest="perf_d", type=float),
        Option("--latent", USED, flag_only=True, default=False,
               help="bags of candidates (qid = bag id, contiguous): write one score per "
                    "bag, its highest candidate score, in order of first appearance, "
                    "and report the bag ranking's statistics"),
        Option("--edges", USED, type=nonempty("a file name"), metavar="FILE", default=None,
               help="high-order models (svm_ap_learn --model): links among the examples, "
                    "'u v' per line (0-based rows); scores are max-marginal differences"),
        Option("--groups", USED, type=nonempty("a key"), metavar="KEY", default=None,
               help="high-order models: link examples sharing 'qid' or KEY=value in the "
                    "comment"),
        dask_option("score", "written in input order"),
    ])


def build_parser():
    """The argparse parser of :data:`DIALECT`."""
    return DIALECT.parser()


def classify(argv):
    """Score the examples, write the output file, print the statistics."""
    args = DIALECT.check(build_parser().parse_args(argv))
    if args.dask is not None and (args.latent or args.edges or args.groups):
        raise CLIError("--dask cannot be combined with --latent, --edges or --groups")
    check_outputs(args, args.output_file, inputs=[f for f in (args.example_file, args.model_file,
                                                         args.edges) if f and not args.dask])
    model = read_model(args.model_file)
    info = training_info(model)
    if args.dask is not None:
        return classify_on_dask(args, model, info)
    load = load_bags if args.latent else load_svmlight
    high_order = info.get("model") in HIGH_ORDER_MODELS
    if (args.edges or args.groups) and (not high_order or args.latent):
        raise CLIError("--edges and --groups need a high-order model (svm_ap_learn --model)")
    if args.edges and args.groups:
        raise CLIError("--edges and --groups: give one of them")
    options = {"return_comments": True} if args.groups not in (None, "qid") else {}
    if not args.latent:
        options["allow_empty"] = True
    X, y, qid, *rest = load(args.example_file, **options)
    if X.shape[0] == 0:
        return write_no_predictions(args)
    X = to_model_width(X, model.n_features, args.example_file)
    # (before the clock: the estimators' first import, scikit-learn's, is not run time)
    try:  # --latent reads any model's linear part as a scorer of candidates
        estimator = from_model(model, latent=True if args.latent else None)
    except ValueError as exc:  # its message starts "model: "
        raise ValueError(f"{args.model_file}: {str(exc).removeprefix('model: ')}") from None
    start = time.process_time()
    # (the file's own score, what SVM-light's svm_classify computes, finite on every line)
    refuse_overflowing_rows(model.decision_function(X), args.example_file, "the score w·x - b")
    links = {}
    if high_order and not (args.edges or args.groups):
        warnings.warn(f"{args.model_file}: a {info['model'].upper()}-SVM model "
                      "ranks by its pairwise terms too; without --edges or --groups the "
                      "examples are unlinked and only the unary part scores them",
                      UserWarning, stacklevel=2)
    if high_order and not args.latent:  # Dokania et al. 2014 eq. 11: s_i = m_i+ - m_i-
        links["edges"] = edges_for_examples(X.shape[0], args.edges, args.groups, qid,
                                            rest[0] if rest else None)
        if (args.edges or args.groups) and len(links["edges"]) == 0:  # (as the learner)
            given = f"--edges {args.edges}" if args.edges else f"--groups {args.groups}"
            warnings.warn(f"{given} links no two examples: they are unlinked and only "
                          "the unary part scores them", UserWarning, stacklevel=2)
    if info.get("latent", False) != args.latent:
        warnings.warn(f"{args.model_file}: the model was trained with --latent; without "
                      "--latent every line is scored on its own, not as a candidate of its "
                      "bag (qid)" if not args.latent else
                      f"{args.model_file}: --latent, but the model was not trained with "
                      "--latent (svm_ap_learn --latent writes latent=1 in its metadata)",
                      UserWarning, stacklevel=2)
    if args.latent:  # behl2014 eq. 6-7: a bag scores its best candidate
        bags = check_bags(qid, X.shape[0])
        links["bags"] = qid
        y, qid = check_bag_labels(y, bags), np.zeros(bags.n_bags)
    scores = estimator.decision_function(X, **links)
    runtime = time.process_time() - start
    return write_and_report(args, model, info, y, qid, scores, runtime)


def write_and_report(args, model, info, y, qid, scores, runtime):
    """Write the scores (%.8f, one a line, atomically), the --plot figure, and with -v
    the statistics."""
    # (scores equal up to rounding, as the max-marginal gaps of nodes that drag the same
    # labels, are ties already: distinct means beyond 1e-12 of the largest score)
    noise = 1e-12 * float(np.abs(scores).max(initial=0.0))
    n_exact = len(np.unique(np.round(scores / noise))) if noise > 0 else 1
    n_written = len(np.unique(np.round(scores, 8)))
    if n_written < n_exact:
        warnings.warn(f"{args.output_file}: %.8f rounds the {n_exact} distinct scores to "
                      f"{n_written} values (scores this small come with a small C): the "
                      "file's ranking has ties the model's has not; the statistics use the "
                      "exact scores", UserWarning, stacklevel=3)
    with atomic_write(args.output_file) as fh:
        fh.write("".join(f"{s:.8f}\n" for s in scores.tolist()))
    plot_pr_if_asked(args, y, scores, qid)
    if args.v >= 1:
        queries = qid if (qid != 0).any() else None
        print(summary(y, scores, queries, info, runtime,
                      ltr=is_ltr(y, queries, model.b)), flush=True)
    return 0


def classify_on_dask(args, model, info):
    """--dask: every shard is read and scored on a worker (svmrank.dask.score_svmlight);
    the scores, labels and qids come back in input order and are written as without
    --dask."""
    try:
        estimator = from_model(model)
    except ValueError as exc:
        raise ValueError(f"{args.model_file}: {str(exc).removeprefix('model: ')}") from None
    if info.get("model") in HIGH_ORDER_MODELS or info.get("latent", False):
        raise CLIError(f"--dask: {args.model_file} is a high-order or latent model; "
                       "--dask scores linear models")
    scores, y, qid, runtime = scores_on_dask(args, estimator.coef_, estimator.intercept_,
                                             model.n_features)
    return write_and_report(args, model, info, y, qid, scores, runtime)


def to_model_width(X, n_features, source):
    """X with the model's number of columns: padded, or cut as SVM-light does, with a
    warning that counts the values cut (SVM-light drops them silently)."""
    if X.shape[1] > n_features:
        extra = X[:, n_features:]
        warnings.warn(f"{source}: {extra.nnz} feature values on "
                      f"{int(np.count_nonzero(np.diff(extra.indptr)))} lines have an index "
                      f"above the model's highest ({n_features}); they are ignored, as "
                      "SVM-light does", UserWarning, stacklevel=2)
        return X[:, :n_features].tocsr()
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))


def is_ltr(y, qid, bias):
    """Whether the statistics are learning-to-rank measures rather than the zero/one
    error: the file has queries, or graded labels (more than one positive label), or
    the model has no bias (b = 0: its sign means nothing)."""
    return qid is not None or len(np.unique(y[y > 0])) > 1 or bias == 0


def is_graded_loss(info):
    """Whether the model's metadata ``info`` names a graded loss (pairs, graded NDCG)."""
    return info.get("loss") == "pairs" or (info.get("loss") == "ndcg" and "gains" in info)


def loss_line(info, y, scores, queries):
    """"Average loss on test set" of the rank loss the model was trained on (its
    metadata ``info``), in percent as svm_perf_classify prints its losses, over the
    queries it trains on: binary AP, NDCG and ROC area over those with a relevant and a
    non-relevant example; graded NDCG (its gains and k) and the pairwise loss (SVM-rank's
    swapped pairs, ties swapped: their fraction or count per query, averaged over
    queries as in training) over those with two levels (NDCG: and a positive gain). None
    for a model of another tool or one trained on the error rate (the zero/one line
    reports that)."""
    loss = info.get("loss")
    if is_graded_loss(info):
        graded = [q for q in queries if len(np.unique(y[q])) > 1
                  and (loss == "pairs" or y[q].max() > 0)]
        if loss == "pairs":
            from .rank_classify import swapped_pairs
            count = info.get("pair_loss") == "count"
            value = np.mean([s if count else s / p for s, p in
                             (swapped_pairs(y[q], scores[q]) for q in graded)]) \
                if graded else np.nan
            name = "swapped pairs per query" if count else "100 x fraction of swapped pairs"
            return f"Average loss on test set: {value if count else 100 * value:.4f} ({name})"
        k, gains = info.get("k"), info["gains"]
        value = np.mean([ndcg(y[q], scores[q], k=k, gains=gains) for q in graded]) \
            if graded else np.nan
        name = f"1 - NDCG{'' if k is None else f'@{k}'}, {gains} gains"
        return f"Average loss on test set: {100 * (1 - value):.4f} (100 x ({name}))"
    if loss not in _LOSS_MEASURES:
        return None
    name, measure = _LOSS_MEASURES[loss]
    relevant = (y > 0).astype(float)
    scored = [q for q in queries if is_ranked(relevant[q] > 0)]
    value = np.mean([measure(relevant[q], scores[q]) for q in scored]) if scored else np.nan
    return f"Average loss on test set: {100 * (1 - value):.4f} (100 x ({name}))"


def summary(y, scores, qid, info, runtime, ltr=False):
    """The statistics block printed after classification. AP, NDCG, ROC area and
    (``ltr``) NDCG@1,3,5, MRR and P@10 are averaged over the same queries: those with
    a relevant and a non-relevant example (the others are counted in one warning, as in
    training); the NDCG lines use graded gains 2^label - 1. The loss line is
    :func:`loss_line` of the model's metadata ``info``. ``ltr`` (:func:`is_ltr`) prints
    the LTR measures in place of the zero/one error."""
    relevant = y > 0
    correct = int(((scores > 0) == relevant).sum())
    n = len(y)
    order, offsets = query_segments(qid, n)
    queries = [order[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
    scored = [q for q in queries if is_ranked(relevant[q])]
    if len(scored) < len(queries):
        measures = "AP, NDCG and ROC area" if is_graded_loss(info) else \
            "AP, NDCG, ROC area and the loss"  # (a graded loss: over queries of two levels)
        warnings.warn(f"{len(queries) - len(scored)} of {len(queries)} queries have no relevant "
                      f"or no non-relevant example: {measures} are averaged over the "
                      "others" if scored else
                      "no query has both a relevant and a non-relevant example: "
                      f"{measures} are undefined (nan)", UserWarning, stacklevel=2)

    def mean(measure):
        return float(np.mean([measure(y[q], scores[q]) for q in scored])) if scored else np.nan

    lines = [f"Classified {n} examples ({len(queries)} {'query' if len(queries) == 1 else 'queries'}).",
             f"Runtime (without IO) in cpu-seconds: {runtime:.2f}"]
    line = loss_line(info, y, scores, queries)
    if line is not None:
        lines.append(line)
    if not ltr:
        lines.append(f"Zero/one-error on test set: {100.0 * (n - correct) / n:.2f}% "
                     f"({correct} correct, {n - correct} incorrect, {n} total)")
    lines += [
        f"Relevant (label > 0): {int(relevant.sum())}, non-relevant: {int((~relevant).sum())}",
        f"{'AP' if qid is None else 'MAP'}: {mean(average_precision):.4f}",
        f"NDCG: {mean(ndcg):.4f}"]
    lines += [f"NDCG@{k}: {mean(lambda labels, s: ndcg(labels, s, k=k)):.4f}"
              for k in ((1, 3, 5, 10) if ltr else (10,))]
    if ltr:
        lines += [f"MRR: {mean(reciprocal_rank):.4f}",
                  f"P@10: {mean(lambda labels, s: precision_at_k(labels, s, k=10)):.4f}"]
    lines.append(f"ROCArea: {mean(roc_auc):.4f}")
    return "\n".join(lines)


def main(argv=None):
    """Entry point of ``svm_ap_classify``: returns the exit status."""
    return run(classify, argv, prog="svm_ap_classify")


if __name__ == "__main__":
    sys.exit(main())
