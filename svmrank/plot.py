"""Figures of fits and rankings (optional extra ``svmrank[plot]``: matplotlib).

Every function draws on ``ax`` (a new figure's axes when None) and returns the
matplotlib Axes, so figures compose::

    import matplotlib.pyplot as plt
    from svmrank import plot
    fig, (a, b) = plt.subplots(1, 2)
    plot.training_curves(model, ax=a)
    plot.pr_curve(y_test, model.decision_function(X_test), qid_test, kind="mean", ax=b)
"""
import numbers

import numpy as np

try:
    import matplotlib
    from matplotlib.figure import Figure
except ImportError as exc:  # (the extra is optional: say how to get it)
    raise ImportError("svmrank.plot needs matplotlib: pip install 'svmrank[plot]' "
                      f"(import matplotlib failed: {exc})") from exc

from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._validation import check_vector
from .inference import loss_augmented_inference
from .metrics import average_precision, top_k_accuracies

__all__ = ["new_figure", "precision_recall", "pr_curve", "training_curves", "topk_accuracy",
           "interleaving", "max_marginals"]

#: the quantities :func:`training_curves` draws, with their legend labels
CURVES = {"objective": "primal objective", "dual": "dual bound", "gap": "duality gap",
          "violation": "violation"}


def new_figure(figsize=(6.4, 4.8)):
    """A matplotlib Figure that belongs to no GUI (pyplot is not involved), for saving."""
    return Figure(figsize=figsize)


def _axes(ax):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt
    return plt.subplots()[1]


def precision_recall(y, scores):
    """Recall and precision at each score threshold that admits a relevant sample, by
    decreasing score: a tie group is one threshold (as scikit-learn's
    ``precision_recall_curve``), so the step curve's area is :func:`average_precision`
    whatever the order of tied samples.

    Returns
    -------
    recall, precision : ndarray, shape (n_thresholds,)
    """
    scores = check_vector(scores, "scores")
    relevant = check_vector(y, "y", n=scores.shape[0]) > 0
    order = np.argsort(-scores, kind="stable")
    ranked = scores[order]
    last_of_tie = np.r_[ranked[1:] != ranked[:-1], True]
    found = np.cumsum(relevant[order])[last_of_tie]
    seen = np.flatnonzero(last_of_tie) + 1
    admits = np.diff(np.r_[0, found]) > 0
    return found[admits] / max(found[-1] if len(found) else 0, 1), found[admits] / seen[admits]


def _queries(y, scores, qid):
    scores = check_vector(scores, "scores")
    y = check_vector(y, "y", n=scores.shape[0])
    if qid is None:
        return [(y, scores)]
    qid = check_vector(qid, "qid", n=scores.shape[0], dtype=None, finite=False)
    out = []
    for q in np.unique(qid):
        y_q, s_q = y[qid == q], scores[qid == q]
        if (y_q > 0).any() and (y_q <= 0).any():  # (queries that rank anything)
            out.append((y_q, s_q))
    return out


def pr_curve(y, scores, qid=None, kind="overall", ax=None, label=None, n_points=101):
    """Precision-recall curve with AP in the legend.

    Parameters
    ----------
    y, scores : array-like (n,)
        Labels (> 0 relevant) and scores.
    qid : array-like (n,), optional
        Queries; needed for ``kind`` "per_query" and "mean".
    kind : {"overall", "per_query", "mean"}
        One curve over all samples (as one ranking); one curve per query (with a
        relevant and a non-relevant sample); or their mean, interpolated (precision at
        recall r: the best precision at recall >= r) on ``n_points`` recall levels,
        with a band of one standard deviation and the mean AP in the legend.
    ax : matplotlib Axes, optional
    label : str, optional
        Legend text before the AP.

    Returns
    -------
    matplotlib Axes
    """
    if kind not in ("overall", "per_query", "mean"):
        raise ValueError(f"kind must be 'overall', 'per_query' or 'mean', got {kind!r}")
    if kind != "overall" and qid is None:
        raise ValueError(f"qid: kind={kind!r} needs the queries")
    if kind == "mean" and (isinstance(n_points, bool) or not isinstance(n_points, numbers.Integral)
                           or n_points < 2):
        raise ValueError(f"n_points must be an integer >= 2, got {n_points!r}")
    queries = _queries(y, scores, None if kind == "overall" else qid)
    if not queries or not (queries[0][0] > 0).any():
        raise ValueError("y: no relevant sample (y > 0)" if kind == "overall" else
                         "y: no query has both a relevant and a non-relevant sample")
    ax = _axes(ax)
    prefix = f"{label}: " if label else ""
    if kind == "overall":
        y, scores = queries[0]
        recall, precision = precision_recall(y, scores)
        ap = average_precision((y > 0).astype(np.float64), scores)
        ax.step(recall, precision, where="post", label=f"{prefix}AP = {ap:.3f}")
    else:
        aps = [average_precision((y_q > 0).astype(np.float64), s_q) for y_q, s_q in queries]
        if kind == "per_query":
            for k, (y_q, s_q) in enumerate(queries):
                recall, precision = precision_recall(y_q, s_q)
                ax.step(recall, precision, where="post", linewidth=0.7, alpha=0.6,
                        label=f"{prefix}mean AP = {np.mean(aps):.3f} ({len(aps)} queries)"
                        if k == 0 else None)
        else:
            grid = np.linspace(0.0, 1.0, n_points)
            curves = np.array([_interpolated(*precision_recall(y_q, s_q), grid)
                               for y_q, s_q in queries])
            mean, std = curves.mean(axis=0), curves.std(axis=0)
            line, = ax.plot(grid, mean, label=f"{prefix}mean AP = {np.mean(aps):.3f} "
                                              f"({len(aps)} queries)")
            ax.fill_between(grid, np.clip(mean - std, 0, 1), np.clip(mean + std, 0, 1),
                            color=line.get_color(), alpha=0.2)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower left")
    return ax


def _interpolated(recall, precision, grid):
    """Precision at each recall level of ``grid``: the best precision at recall >= it."""
    best_after = np.maximum.accumulate(precision[::-1])[::-1]
    k = np.searchsorted(recall, grid, side="left")
    return np.where(k < recall.size, best_after[np.minimum(k, recall.size - 1)], 0.0)


def _records(source):
    """Per-iteration records (dicts) of an estimator, a learner result or a history."""
    if isinstance(source, BaseEstimator) and not any(
            hasattr(source, name) for name in ("trace_", "history_", "result_")):
        check_is_fitted(source)  # (NotFittedError; a fitted one, e.g. from a file, has none)
        raise ValueError(f"source: {type(source).__name__} keeps no per-iteration records")
    for name in ("trace_", "history_", "result_"):
        if hasattr(source, name) and not isinstance(source, (list, tuple)):
            value = getattr(source, name)
            if name == "history_" and value and not isinstance(value[0], (dict, tuple)):
                continue  # (CCCP's history_: one objective per round)
            return _records(value)
    if hasattr(source, "history"):
        return _records(source.history)
    if isinstance(source, (str, bytes, dict)) or not np.iterable(source):
        raise ValueError(f"source: expected a fitted estimator, a learner result or a list "
                         f"of records, got {type(source).__name__}")
    records = []
    for entry in source:
        if isinstance(entry, dict):
            records.append(entry)
        elif not isinstance(entry, (tuple, list)) or len(entry) != 5:
            raise ValueError(f"source: expected records (dicts, or Prox-SDCA's (epoch, primal, "
                             f"dual, gap, seconds) tuples), got {entry!r}")
        else:  # Prox-SDCA's (epoch, primal, dual, gap, seconds)
            epoch, primal, dual, gap, seconds = entry
            records.append({"iteration": epoch, "objective": primal, "dual": dual, "gap": gap,
                            "time": seconds})
    if not records:
        raise ValueError("no iterations recorded")
    return records


def training_curves(source, x="iteration", quantities=("objective", "dual", "gap", "violation"),
                    ax=None, log=True):
    """Training curves: primal objective, dual bound, duality gap and violation
    against iteration or time, CCCP rounds (and the starts of ``n_init``) marked, and a
    recorded validation score.

    Parameters
    ----------
    source : estimator, learner result or list of records
        A fitted estimator (its ``trace_``, ``history_`` or ``result_``), a
        ``CuttingPlaneResult``/``SDCAResult``, or records (dicts with ``iteration``,
        ``time`` and the quantities; Prox-SDCA's tuples too).
    x : {"iteration", "time"}
        The horizontal axis (time: seconds since the fit started).
    quantities : sequence of str
        Which of ``CURVES`` to draw (those a record lacks are skipped).
    ax : matplotlib Axes, optional
    log : bool
        Log-scale vertical axis (values <= 0 are left out).

    Returns
    -------
    matplotlib Axes
        A validation score (a record key starting with ``valid``) goes on a twin axis,
        ``ax.svmrank_eval_axes``.
    """
    if x not in ("iteration", "time"):
        raise ValueError(f"x must be 'iteration' or 'time', got {x!r}")
    if isinstance(quantities, (str, bytes)):
        raise ValueError(f"quantities: expected a sequence of names, got the string "
                         f"{quantities!r} (write [{quantities!r}])")
    unknown = [q for q in quantities if q not in CURVES]
    if unknown:
        raise ValueError(f"quantities: unknown {unknown[0]!r}; choose from {list(CURVES)}")
    records = _records(source)
    ax = _axes(ax)
    if x == "iteration":
        xs = np.arange(1, len(records) + 1, dtype=np.float64)
    else:
        if not all("elapsed" in r or "time" in r for r in records):
            raise ValueError("x='time': the records have no 'time'; use x='iteration'")
        xs = np.array([r.get("elapsed", r.get("time")) for r in records], dtype=np.float64)
    for name in quantities:
        if not any(name in r for r in records):
            continue
        values = np.array([r.get(name, np.nan) for r in records], dtype=np.float64)
        if log:
            values = np.where(values > 0, values, np.nan)
        ax.plot(xs, values, label=CURVES[name])
    rounds = [r.get("round") for r in records]
    starts = [k for k in range(1, len(records)) if rounds[k] != rounds[k - 1]]
    # (a round number that drops begins another start of n_init: its objective is
    # another run's, not a rise of the one before)
    restarts = {k for k in starts if None not in (rounds[k], rounds[k - 1])
                and rounds[k] < rounds[k - 1]}
    for n, k in enumerate(k for k in starts if k not in restarts):
        ax.axvline(xs[k], color="0.6", linestyle=":", linewidth=1,
                   label="CCCP round" if n == 0 else None)
    for n, k in enumerate(sorted(restarts)):
        ax.axvline(xs[k], color="0.3", linestyle="-", linewidth=1,
                   label="another CCCP start (n_init)" if n == 0 else None)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("iteration" if x == "iteration" else "time (s)")
    ax.set_ylabel("value")
    names = [k for k in records[-1] if isinstance(k, str) and k.startswith("valid")]
    if names:
        twin = ax.twinx()
        values = np.array([r.get(names[0], np.nan) for r in records], dtype=np.float64)
        twin.plot(xs, values, color="k", linestyle="--", label=names[0])
        twin.set_ylabel(names[0])
        twin.legend(loc="upper center")
        ax.svmrank_eval_axes = twin
    ax.legend(loc="upper right")
    return ax


def topk_accuracy(models, X=None, y=None, ks=None, ax=None):
    """Top-k accuracy against k for several models.

    Parameters
    ----------
    models : dict
        Name -> a fitted multiclass estimator (``decision_function`` of shape
        (n, n_classes) and ``classes_``), or name -> (scores, classes).
    X, y : test samples and labels (y is needed; X only for estimators).
    ks : sequence of int, optional
        Default 1..min(10, n_classes).
    ax : matplotlib Axes, optional
        Where to draw (a new figure when None).

    Returns
    -------
    matplotlib Axes
    """
    if y is None:
        raise ValueError("y: the test labels are needed")
    ax = _axes(ax)
    for name, model in models.items():
        if isinstance(model, tuple):
            scores, classes = model
        else:
            if X is None:
                raise ValueError(f"X: model {name!r} is an estimator, which needs X")
            scores, classes = model.decision_function(X), model.classes_
        scores = check_vector(scores, f"models[{name!r}] scores", ndim=2)  # (n, n_classes)
        k_values = list(range(1, min(10, scores.shape[1]) + 1)) if ks is None else list(ks)
        ax.plot(k_values, top_k_accuracies(np.asarray(y), scores, k_values, classes),
                marker="o", label=name)
    ax.set_xlabel("k")
    ax.set_ylabel("top-k accuracy")
    ax.legend(loc="lower right")
    return ax


def interleaving(scores, y, loss="ap", method="qs", ax=None):
    """The 2014 paper's interleaving picture for one inference call: each negative's
    optimal position in the most violated ranking (one plus the positives above it)
    against its rank among the negatives by score (Mohapatra et al. 2014, Fig. 1).

    Parameters
    ----------
    scores, y : array-like (n,)
        One query's scores and binary labels (0/1 or −1/+1).
    loss, method : as :func:`svmrank.inference.loss_augmented_inference`
    ax : matplotlib Axes, optional
        Where to draw (a new figure when None).

    Returns
    -------
    matplotlib Axes
    """
    scores = check_vector(scores, "scores")
    result = loss_augmented_inference(scores, y, loss=loss, method=method)
    negative = np.asarray(y) <= 0
    order = np.argsort(-scores[negative], kind="stable")
    positions = result.ranks[negative][order]
    ax = _axes(ax)
    ax.step(np.arange(1, positions.size + 1), positions, where="post",
            label=f"{getattr(loss, 'name', loss)} inference ({method})")
    ax.set_xlabel("negative's rank by score")
    ax.set_ylabel("optimal interleaving position (1 + positives above)")
    ax.legend(loc="upper left")
    return ax


def max_marginals(estimator, X, y, edges=None, ax=None):
    """HOAP-SVM's (or HOB-SVM's) max-marginal scatter: m_i⁻ against m_i⁺ for every
    sample, relevant and non-relevant apart; above the diagonal the ranking score
    s_i = m_i⁺ − m_i⁻ (Dokania et al. 2014, eq. 11) is positive.

    Returns
    -------
    matplotlib Axes
    """
    m0, m1 = estimator.max_marginals(X, edges)
    labels = np.asarray(y)
    try:  # (numbers, strings of numbers; other texts: the relevant class, as score reads them)
        labels = labels.astype(np.float64)
    except (TypeError, ValueError):
        from .estimators.base import class_relevance
        classes = estimator.classes_
        labels = labels == classes[np.argmax(class_relevance(classes))]
    relevant = check_vector(labels, "y", n=m0.shape[0]) > 0
    ax = _axes(ax)
    ax.scatter(m0[~relevant], m1[~relevant], s=8, alpha=0.6, label="non-relevant")
    ax.scatter(m0[relevant], m1[relevant], s=8, alpha=0.6, label="relevant")
    both = np.concatenate([m0, m1])
    ax.plot([both.min(), both.max()], [both.min(), both.max()], color="0.5", linewidth=1)
    ax.set_xlabel("m⁻ (best score with y_i = 0)")
    ax.set_ylabel("m⁺ (best score with y_i = 1)")
    ax.legend(loc="upper left")
    return ax
