"""Ranking and classification measures: AP, NDCG, ROC area, top-k accuracy, and
their means over queries."""
import numpy as np

from ._validation import check_vector, query_segments


def _check_pair(y_true, scores):
    scores = check_vector(scores, "scores")
    y_true = check_vector(y_true, "y_true", n=scores.shape[0])
    return y_true > 0, scores


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


def ndcg(y_true, scores, k=None):
    """NDCG (at k) with gains ``2**rel - 1`` for graded labels (binary: 1 for relevant)
    and discount ``1 / log2(1 + rank)``. Ties are broken pessimistically is not
    assumed: samples are taken in stable decreasing-score order. NaN without relevant
    samples."""
    scores = check_vector(scores, "scores")
    y_true = check_vector(y_true, "y_true", n=scores.shape[0])
    gains = np.where(y_true > 0, np.exp2(np.clip(y_true, 0, None)) - 1, 0.0)
    n = len(scores) if k is None else min(int(k), len(scores))
    discount = 1.0 / np.log2(np.arange(2, n + 2))
    ideal = np.sort(gains)[::-1][:n] @ discount
    if ideal == 0:
        return float("nan")
    return float(gains[np.argsort(-scores, kind="stable")][:n] @ discount / ideal)


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
    starts = np.r_[0, np.flatnonzero(s[1:] != s[:-1]) + 1]
    ends = np.r_[starts[1:], len(s)]
    ranks_sorted = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    ranks[order] = ranks_sorted
    return float((ranks[rel].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def mean_over_queries(metric, y_true, scores, qid=None, **kwargs):
    """Mean of ``metric`` over queries, skipping queries where it is undefined (NaN).

    Returns NaN when it is undefined on every query.
    """
    scores = check_vector(scores, "scores")
    y_true = check_vector(y_true, "y_true", n=scores.shape[0])
    order, offsets = query_segments(qid, len(scores))
    values = [metric(y_true[order[a:b]], scores[order[a:b]], **kwargs)
              for a, b in zip(offsets[:-1], offsets[1:])]
    values = np.array([v for v in values if not np.isnan(v)])
    return float(values.mean()) if len(values) else float("nan")
