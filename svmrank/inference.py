"""Loss-augmented inference (LAI) for rank losses: the most violated ranking
argmax_R Δ(R*, R) + F(X, R; w) over rankings of one or many queries.

F(X, R; w) = 1/(|P||N|) Σ_{i∈P, j∈N} R_ij (s_i − s_j) (2018 paper, eq. 1) is linear in
the scores, F = coef · s, so a ranking is returned through its per-sample coefficients.
"""
from dataclasses import dataclass

import numpy as np

from . import _lai_fast
from ._validation import check_vector, query_segments

LOSSES = {"ap": _lai_fast.LOSS_AP, "ndcg": _lai_fast.LOSS_NDCG, "roc": _lai_fast.LOSS_ROC}
METHODS = {"qs": _lai_fast.METHOD_QS, "greedy": _lai_fast.METHOD_GREEDY}


@dataclass
class InferenceResult:
    """The most violated ranking of one query.

    Attributes
    ----------
    objective : float
        max_R Δ(R*, R) + F(X, R; w).
    loss : float
        Δ(R*, R̄) at the maximiser R̄.
    coef : ndarray of shape (n_samples,)
        F(X, R̄; w) = coef · scores, in input order.
    ranks : ndarray of int64, shape (n_samples,)
        Interleaving rank (1 .. |P|+1) of each negative in R̄: one plus the number of
        positives ranked above it; 0 for positives.
    """

    objective: float
    loss: float
    coef: np.ndarray
    ranks: np.ndarray


def _check_choice(value, name, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return choices[value]


def check_binary_labels(labels, n, name="labels"):
    """Relevance mask (label > 0) of a finite label vector of length n."""
    return check_vector(labels, name, n=n) > 0


def true_coef(relevant):
    """Coefficients of the ground-truth ranking R* (every positive above every negative):
    1/|P| on positives, −1/|N| on negatives, so F(X, R*; w) = true_coef · scores."""
    relevant = np.asarray(relevant, dtype=bool)
    n_pos = relevant.sum()
    n_neg = relevant.size - n_pos
    return np.where(relevant, 1.0 / max(n_pos, 1), -1.0 / max(n_neg, 1))


def loss_augmented_inference(scores, labels, loss="ap", method="qs"):
    """Most violated ranking of one query.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Finite scores s = Xw.
    labels : array-like of shape (n_samples,)
        Relevant means label > 0; at least one relevant and one non-relevant sample.
    loss : {"ap", "ndcg", "roc"}
        1 − AP, 1 − NDCG (binary relevance, D(i) = 1/log2(1+i)), or the fraction of
        swapped positive/negative pairs (1 − ROC area).
    method : {"qs", "greedy"}
        "qs": the quicksort-flavoured O(N log P) algorithm (2018 paper, Alg. 1);
        "greedy": Yue et al.'s O(NP) algorithm (2014 paper, Alg. 1), the reference.

    Returns
    -------
    InferenceResult
    """
    loss_code = _check_choice(loss, "loss", LOSSES)
    method_code = _check_choice(method, "method", METHODS)
    scores = check_vector(scores, "scores")
    relevant = check_binary_labels(labels, scores.shape[0])
    n_pos = int(relevant.sum())
    if n_pos == 0 or n_pos == relevant.size:
        raise ValueError("labels: need at least one relevant (label > 0) and one "
                         f"non-relevant sample; got {n_pos} relevant of {relevant.size}")
    coef, ranks, losses, objectives = _run(scores, relevant, None, loss_code, method_code)
    return InferenceResult(float(objectives[0]), float(losses[0]), coef, ranks)


def _run(scores, relevant, segments, loss_code, method_code):
    n = scores.shape[0]
    order, offsets = segments if segments is not None else query_segments(None, n)
    n_queries = len(offsets) - 1
    coef = np.empty(n)
    ranks = np.empty(n, dtype=np.intp)
    losses = np.empty(n_queries)
    objectives = np.empty(n_queries)
    _lai_fast.lai_queries(scores, relevant.view(np.uint8), order.astype(np.intp, copy=False),
                          offsets.astype(np.intp, copy=False), loss_code, method_code,
                          coef, ranks, losses, objectives)
    return coef, ranks, losses, objectives


def lai_queries(scores, relevant, order, offsets, loss="ap", method="qs"):
    """Loss-augmented inference for every query at once (the learner's inner call).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    relevant : ndarray of bool, shape (n,)
    order, offsets : ndarray of int64
        As returned by ``svmrank._validation.query_segments``: query q is the rows
        ``order[offsets[q]:offsets[q+1]]``.
    loss, method : str
        As for :func:`loss_augmented_inference`.

    Returns
    -------
    coef : ndarray, shape (n,)
        Coefficients of the most violated ranking of each query (input order; 0 in
        queries without positives or negatives).
    losses, objectives : ndarray, shape (n_queries,)
        Per query; NaN for a query without positives or negatives.

    Inputs are not validated here: callers validate once at their boundary.
    """
    coef, _, losses, objectives = _run(scores, relevant, (order, offsets),
                                       _check_choice(loss, "loss", LOSSES),
                                       _check_choice(method, "method", METHODS))
    return coef, losses, objectives
