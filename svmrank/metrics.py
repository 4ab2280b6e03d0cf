"""Ranking and classification measures: AP, NDCG, ROC area, top-k accuracy, and
their means over queries."""
import warnings

import numpy as np

from ._validation import check_vector, query_segments


def _check_pair(y_true, scores):
    scores = check_vector(scores, "scores")
    y_true = check_vector(y_true, "y_true", n=scores.shape[0])
    return y_true > 0, scores


def _tie_groups(sorted_scores):
    """Start and size of each run of equal values in a sorted score array."""
    s = sorted_scores
    starts = np.r_[0, np.flatnonzero(s[1:] != s[:-1]) + 1]
    return starts, np.diff(np.r_[starts, len(s)])


def average_precision(y_true, scores):
    """Average precision of the ranking by decreasing score.

    Relevant means ``y_true > 0``. Tied scores form one threshold (as in
    scikit-learn's ``average_precision_score``). Returns NaN without relevant samples.
    """
    rel, scores = _check_pair(y_true, scores)
    n_rel = rel.sum()
    if n_rel == 0:
        return float("nan")
    order = np.argsort(-scores, kind="stable")
    s, r = scores[order], rel[order]
    last_of_tie = np.r_[s[1:] != s[:-1], True]
    tp = np.cumsum(r)[last_of_tie]
    n_seen = np.flatnonzero(last_of_tie) + 1
    new_tp = np.diff(np.r_[0, tp])
    return float(np.sum(new_tp * tp / n_seen) / n_rel)


def ndcg(y_true, scores, k=None, gains="exp"):
    """NDCG (at k) with gains ``2**rel - 1`` (``gains="exp"``; binary labels: 1 for
    relevant) or ``rel`` (``gains="linear"``) for graded labels, labels <= 0 gaining 0,
    and discount ``1 / log2(1 + rank)``. Tied scores share the mean gain of their group
    (as in scikit-learn's ``ndcg_score``), so the order of tied samples does not matter.
    NaN without relevant samples."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ValueError(f"k must be a positive integer or None, got {k!r}")
    if gains not in ("exp", "linear"):
        raise ValueError(f"gains must be 'exp' or 'linear', got {gains!r}")
    scores = check_vector(scores, "scores")
    y_true = check_vector(y_true, "y_true", n=scores.shape[0])
    labels = np.clip(y_true, 0, None)
    top = labels.max(initial=0.0)
    # 2^l - 1 in units of 2^top (the ratio is unchanged, and no label overflows), as
    # 2^(l - top) (1 - 2^-l), which does not cancel for small labels
    with np.errstate(over="ignore"):  # (-expm1 of a huge negative is 1)
        gains = labels if gains == "linear" else np.where(
            y_true > 0, np.exp2(labels - top) * -np.expm1(-labels * np.log(2.0)), 0.0)
    n = len(scores) if k is None else min(int(k), len(scores))
    discount = 1.0 / np.log2(np.arange(2, n + 2))
    ideal = np.sort(gains)[::-1][:n] @ discount
    if ideal == 0:
        return float("nan")
    order = np.argsort(-scores, kind="stable")
    starts, sizes = _tie_groups(scores[order])
    tied = np.repeat(np.add.reduceat(gains[order], starts) / sizes, sizes)
    return float(tied[:n] @ discount / ideal)


def roc_auc(y_true, scores):
    """Area under the ROC curve (ties count one half). NaN unless both classes occur."""
    rel, scores = _check_pair(y_true, scores)
    n_pos, n_neg = rel.sum(), (~rel).sum()
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(scores, kind="stable")
    s = scores[order]
    ranks = np.empty(len(s))
    # average rank of each tie group (1-based)
    starts, sizes = _tie_groups(s)
    ranks_sorted = np.repeat(starts + (sizes + 1) / 2.0, sizes)
    ranks[order] = ranks_sorted
    return float((ranks[rel].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def _true_class_rank(y_true, scores, classes):
    """0-based rank of each sample's true class in its row of scores (n, m): the classes
    scored higher, plus the equally scored classes of lower index (ties go to the lower
    class index, as ``argmax`` does)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2:
        raise ValueError(f"scores: expected a 2-d array (n_samples, n_classes), got {scores.ndim}-d")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores: contains NaN or infinite values")
    n, m = scores.shape
    classes = np.arange(m) if classes is None else np.asarray(classes)
    if classes.shape != (m,):
        raise ValueError(f"classes: expected {m} labels (one per score column), got shape {classes.shape}")
    if len(np.unique(classes)) != m:
        raise ValueError("classes: expected distinct labels, one per score column")
    y_true = np.asarray(y_true)
    if y_true.shape != (n,):
        raise ValueError(f"y_true: expected shape ({n},), got {y_true.shape}")
    order = np.argsort(classes, kind="stable")
    pos = np.clip(np.searchsorted(classes, y_true, sorter=order), 0, m - 1)
    idx = order[pos]
    unknown = classes[idx] != y_true
    if np.any(unknown):
        bad = y_true[unknown][0]
        bad = bad.item() if isinstance(bad, np.generic) else bad
        raise ValueError(f"y_true: label {bad!r} is not one of classes")
    true_score = scores[np.arange(n), idx][:, None]
    lower = np.arange(m)[None, :] < idx[:, None]
    return np.sum((scores > true_score) | ((scores == true_score) & lower), axis=1)


def top_k_accuracy(y_true, scores, k=1, classes=None):
    """Fraction of samples whose true class is among the k highest scored classes.

    Parameters
    ----------
    y_true : array-like, shape (n,)
        True labels: class indices 0..m-1, or labels from ``classes``.
    scores : array-like, shape (n, m)
        One score per class (e.g. ``TopKSVM.decision_function``).
    k : int
        1 <= k <= m.
    classes : array-like, shape (m,), optional
        The label of each score column (e.g. ``estimator.classes_``).

    Ties go to the lower column index, so top-1 accuracy agrees with ``argmax``.
    """
    return float(top_k_accuracies(y_true, scores, [k], classes)[0])


def top_k_accuracies(y_true, scores, ks=None, classes=None):
    """Top-k accuracy for each k in ``ks`` (default 1..min(10, m); each 1 <= k <= m) as
    a float array; see :func:`top_k_accuracy`."""
    rank = _true_class_rank(y_true, scores, classes)
    m = np.shape(scores)[1]
    ks = range(1, min(10, m) + 1) if ks is None else ks
    out = []
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= m:
            raise ValueError(f"k must be an integer in 1..{m} (the number of classes), got {k!r}")
        out.append(np.mean(rank < k) if len(rank) else np.nan)
    return np.array(out, dtype=np.float64)


def mean_over_queries(metric, y_true, scores, qid=None, **kwargs):
    """Mean of ``metric`` over queries, skipping queries where it is undefined (NaN).

    Returns NaN when it is undefined on every query. AP and NDCG are defined (1) on a
    query whose samples are all relevant, ROC area is not; the estimators' ``score``
    and svm_ap_classify skip every query without a relevant and a non-relevant sample,
    as training does.
    """
    scores = check_vector(scores, "scores")
    y_true = check_vector(y_true, "y_true", n=scores.shape[0])
    order, offsets = query_segments(qid, len(scores))
    values = [metric(y_true[order[a:b]], scores[order[a:b]], **kwargs)
              for a, b in zip(offsets[:-1], offsets[1:])]
    values = np.array([v for v in values if not np.isnan(v)])
    if not len(values):
        warnings.warn(f"{getattr(metric, '__name__', 'the metric')} is undefined (NaN) on "
                      "every query: returning nan", UserWarning, stacklevel=2)
        return float("nan")
    return float(values.mean())


def ranked_queries(relevant, offsets):
    """Which queries have a relevant and a non-relevant sample: the queries a rank loss
    is defined on, which training and scoring use.

    Parameters
    ----------
    relevant : ndarray of bool, grouped by query
    offsets : ndarray of int
        Query q holds ``relevant[offsets[q]:offsets[q + 1]]`` (an empty one is not ranked).
    """
    offsets = np.asarray(offsets)
    # counts from cumulative sums (np.add.reduceat mishandles empty queries)
    cum = np.concatenate([[0], np.cumsum(relevant, dtype=np.int64)])
    n_rel = cum[offsets[1:]] - cum[offsets[:-1]]
    return (n_rel > 0) & (n_rel < np.diff(offsets))


def is_ranked(relevant):
    """:func:`ranked_queries` of one query: whether it has a relevant and a
    non-relevant sample."""
    return bool(ranked_queries(relevant, [0, len(relevant)])[0])


def mean_over_ranked_queries(measure, y_true, scores, qid=None):
    """Mean of ``measure(y_q, s_q)`` over the queries that :func:`is_ranked` (y > 0
    relevant): the queries training uses (an all-relevant query would count AP = 1).
    NaN, with a warning, when no query is."""
    def ranked(y_q, s_q):
        return measure(y_q, s_q) if is_ranked(y_q > 0) else float("nan")
    ranked.__name__ = getattr(measure, "__name__", "the measure")  # (in its warning)
    return mean_over_queries(ranked, y_true, scores, qid)
