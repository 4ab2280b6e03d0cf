"""Loss-augmented inference (LAI) for rank losses: the most violated ranking
argmax_R Δ(R*, R) + F(X, R; w) over rankings of one or many queries, and the
structured-hinge loss built on it (:func:`structured_hinge`).

F(X, R; w) = 1/(|P||N|) Σ_{i∈P, j∈N} R_ij (s_i − s_j) (2018 paper, eq. 1) is linear in
the scores, F = coef · s, so a ranking is returned through its per-sample coefficients.

Methods (all exact; for the same input they return the same maximiser):

========================  =====================================================  ==============
method                    algorithm                                              losses
========================  =====================================================  ==============
``"qs"`` (default)        quicksort-flavoured OptRanks (2018 paper, Alg. 1),     every QS-suitable
                          O(N log P + P log P + P log N)                         loss
``"greedy"``              sort both lists, scan every rank for every negative:   every QS-suitable
                          Yue et al. (2014 Alg. 1) for AP, Chakrabarti et al.'s  loss
                          O(NP + N log N) greedy for NDCG
``"search"``              sort, then binary search for opt_j where f_j is        AP, ROC area
                          unimodal (2014 Alg. 2; linear search only for j < P)
``"select"``              selective ranking (2014 Alg. 3): quickselect +         every QS-suitable
                          binary search for the first negative with opt = P+1,   loss
                          linear scans for the negatives above it
``"search+select"``       Alg. 3 with Alg. 2 for each negative above ŝ           AP, ROC area
========================  =====================================================  ==============

SEARCH needs f_j unimodal in the interleaving rank: true for AP when j ≥ P on all ranks
(2014 Proposition 1) and for ROC area everywhere (its loss step is constant), false for
NDCG (the score part of the step decreases in i, the convex-discount part increases) and
unknowable for a user loss, so those combinations are refused. SELECT needs only the
monotonicity of opt_j (2018 Observation 2), which every QS-suitable loss has.

Ties: samples are ordered by (score descending, row ascending), and interleaving ranks
whose objective values agree to within a rounding tolerance count as tied and go to the
larger rank (see cython_src/_lai_fast.pyx), so the methods agree on the loss and ranks
even when the objective has exact ties. The tolerance is one per query; it grows with
the largest |score| among the contested samples only (an outlier scored beyond the
other class's range by more than the loss can weigh does not widen it). Since only score
differences matter, a query whose classes meet far from 0 (1e14 plus small differences)
is first shifted by the midpoint of the region where they meet, so that the tolerance
follows the spread of the contested scores, not their offset. A limit follows: when the
contested scores themselves spread widely (large integers, or values near 1e300 a few
ulps apart) and some of them tie exactly, the tolerance can exceed a loss step, and the
tie-break of the loss is lost: the ranking returned is then a maximiser only up to that
rounding, and all methods return the same one.

Entry points: :func:`loss_augmented_inference` (one query), :func:`lai_queries` (many)
and :func:`structured_hinge` check their inputs; :func:`lai_queries_unchecked` is
:func:`lai_queries` for callers that checked them once (the problems, every iteration).
"""
import threading
from dataclasses import dataclass

import numpy as np

from . import _lai_fast
from ._validation import check_vector, query_segments
from .losses import BUILTIN_LOSSES, get_loss
from .parallel import current_threads

LOSSES = {name: loss.code for name, loss in BUILTIN_LOSSES.items()}
METHODS = {"qs": _lai_fast.METHOD_QS, "greedy": _lai_fast.METHOD_GREEDY,
           "search": _lai_fast.METHOD_SEARCH, "select": _lai_fast.METHOD_SELECT,
           "search+select": _lai_fast.METHOD_SEARCH_SELECT}
# methods that need f_j unimodal (2014 Proposition 1): AP and ROC area only
SEARCH_METHODS = ("search", "search+select")
SEARCH_LOSSES = ("ap", "roc")


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
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return choices[value]


def check_binary_labels(labels, n, name="labels"):
    """Relevance mask of a binary label vector of length n: labels in {0, 1} or
    {−1, +1} (or bool); relevant means label > 0."""
    labels = check_vector(labels, name, n=n)
    values = np.unique(labels)
    if not (np.isin(values, (0.0, 1.0)).all() or np.isin(values, (-1.0, 1.0)).all()):
        shown = ", ".join(f"{v:g}" for v in values[:5]) + (", ..." if len(values) > 5 else "")
        raise ValueError(f"{name}: must be binary (0/1 or -1/+1); got values {shown}")
    return labels > 0


def check_method(method, loss, name="method"):
    """The kernel code of an inference method, checked against the loss object."""
    code = _check_choice(method, name, METHODS)
    if method in SEARCH_METHODS and (loss.code is None or loss.name not in SEARCH_LOSSES):
        raise ValueError(f"{name} {method!r} needs a loss whose f_j is unimodal (AP or ROC "
                         f"area); got loss {loss.name!r}: use 'qs', 'greedy' or 'select'")
    return code


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
        Binary relevance (0/1 or −1/+1); at least one relevant and one non-relevant.
    loss : {"ap", "ndcg", "roc"} or svmrank.losses.QSLoss
        1 − AP, 1 − NDCG (binary relevance, D(i) = 1/log2(1+i)), the fraction of
        swapped positive/negative pairs (1 − ROC area), or a user's QS-suitable loss
        (checked for C1-C3 on this problem size first).
    method : {"qs", "greedy", "search", "select", "search+select"}
        See the module docstring; "search" and "search+select" for AP and ROC area only.

    Returns
    -------
    InferenceResult
    """
    loss_obj = get_loss(loss)
    method_code = check_method(method, loss_obj)
    scores = check_vector(scores, "scores")
    relevant = check_binary_labels(labels, scores.shape[0])
    n_pos = int(relevant.sum())
    if n_pos == 0 or n_pos == relevant.size:
        raise ValueError("labels: need at least one relevant (label > 0) and one "
                         f"non-relevant sample; got {n_pos} relevant of {relevant.size}")
    coef, ranks, losses, objectives, _ = _run(scores, relevant, None,
                                              np.array([0, relevant.size]), loss_obj, method_code)
    return InferenceResult(float(objectives[0]), float(losses[0]), coef, ranks)


def shifted_scores(scores, order, offsets, shifts):
    """The scores as the inference read them: less each query's shift (returned by the
    kernel; see cython_src/_lai_fast.pyx, score_shift), a copy only when some query was
    shifted. order None: query q is rows offsets[q]:offsets[q+1] in place."""
    if not shifts.any():
        return scores
    out = scores.copy()
    rows = slice(offsets[0], offsets[-1]) if order is None else order[offsets[0]:offsets[-1]]
    out[rows] -= np.repeat(shifts, np.diff(offsets))
    return out


_SCRATCH = threading.local()  # per thread: the ranks of calls that do not return them


def _scratch_ranks(n):
    """A reused intp array of length n (fresh pages for a discarded 8n-byte output cost
    the learner's inference calls about as much as a pass over the scores)."""
    buf = getattr(_SCRATCH, "ranks", None)
    if buf is None or buf.shape[0] < n:
        buf = _SCRATCH.ranks = np.empty(n, dtype=np.intp)
    return buf[:n]


def _run(scores, relevant, order, offsets, loss, method_code, keep_ranks=True):
    """Kernel call: coef, ranks, losses, objectives and the per-query shifts (order None:
    rows in place)."""
    n = scores.shape[0]
    if order is not None:
        order = order.astype(np.intp, copy=False)
    offsets = offsets.astype(np.intp, copy=False)
    n_queries = len(offsets) - 1
    # (rows in no query get 0; the kernel writes only the queries' rows)
    coef = np.empty(n) if offsets[-1] - offsets[0] == n else np.zeros(n)
    ranks = np.empty(n, dtype=np.intp) if keep_ranks else _scratch_ranks(n)
    losses = np.empty(n_queries)
    objectives = np.empty(n_queries)
    shifts = np.zeros(n_queries)
    rel8 = relevant.view(np.uint8)
    if n == 0:  # (every query empty: no positive, no negative; nothing for the kernel)
        losses.fill(np.nan)
        objectives.fill(np.nan)
        return coef, ranks, losses, objectives, shifts
    if loss.code is not None:
        _lai_fast.lai_queries(scores, rel8, order, offsets, loss.code, method_code,
                              coef, ranks, losses, objectives, shifts, keep_ranks,
                              n_threads=current_threads())
        return coef, ranks, losses, objectives, shifts
    # a user loss: check C1-C3 for every problem size, then call back for its steps
    rows_all = np.arange(n) if order is None else order
    # positives per query from cumulative counts (reduceat mishandles empty queries)
    cum = np.concatenate([[0], np.cumsum(relevant[rows_all[:offsets[-1]]], dtype=np.int64)])
    n_pos = cum[offsets[1:]] - cum[offsets[:-1]]
    n_neg = np.diff(offsets) - n_pos
    dmax = 0.0
    for P, N in set(zip(n_pos.tolist(), n_neg.tolist())):
        if P and N:
            dmax = max(dmax, loss.ensure_checked(P, N))
    _lai_fast.lai_queries(scores, rel8, order, offsets, _lai_fast.LOSS_USER, method_code,
                          coef, ranks, losses, objectives, shifts, True, loss.kernel_steps, dmax)
    scores = shifted_scores(scores, order, offsets, shifts)  # the kernel's order of ties
    for q in range(n_queries):
        if np.isnan(losses[q]):
            continue
        rows = rows_all[offsets[q]:offsets[q + 1]]
        neg = rows[~relevant[rows]]
        neg = neg[np.lexsort((neg, -scores[neg]))]  # rank j = position + 1
        value = _user_loss_value(loss, ranks[neg], int(n_pos[q]), len(neg))
        losses[q] = value
        objectives[q] += value
    return coef, ranks, losses, objectives, shifts


def _user_loss_value(loss, r, P, N):
    """Δ = Σ_j δ_j(r_j) = −Σ_{k=1}^{P} Σ_{j : r_j ≤ k} step(k, j) (r non-decreasing)."""
    counts = np.searchsorted(r, np.arange(1, P + 1), side="right")  # #{j : r_j ≤ k}
    total = 0.0
    for k in np.flatnonzero(counts):
        total -= loss.steps(k + 1, np.arange(1, counts[k] + 1), P, N).sum()
    return float(total)


def lai_queries(scores, relevant, order, offsets, loss="ap", method="qs"):
    """Loss-augmented inference for every query at once (what the learners call, after
    the checks).

    Parameters
    ----------
    scores : array-like of float, shape (n,)
        Finite.
    relevant : array-like of bool (or binary labels), shape (n,)
    order : array-like of int or None
        Distinct row numbers in [0, n).
    offsets : array-like of int
        Non-decreasing, as returned by ``svmrank._validation.query_segments``: query q
        is the rows ``order[offsets[q]:offsets[q+1]]``; with order None, the rows
        ``offsets[q]:offsets[q+1]`` in place (the learners' layout, which spares the
        kernel reading an index per sample).
    loss, method : str (loss may be a QSLoss)
        As for :func:`loss_augmented_inference`.

    Returns
    -------
    coef : ndarray, shape (n,)
        Coefficients of the most violated ranking of each query (input order; 0 in
        queries without positives or negatives and in rows of no query).
    losses, objectives : ndarray, shape (n_queries,)
        Per query; NaN for a query without positives or negatives.
    """
    loss_obj = get_loss(loss)
    check_method(method, loss_obj)
    scores = check_vector(scores, "scores")
    n = scores.shape[0]
    relevant = check_binary_labels(relevant, n, name="relevant")
    offsets = check_vector(offsets, "offsets", dtype=None)
    if offsets.dtype.kind not in "iu" or offsets.shape[0] == 0:
        raise ValueError("offsets: expected a non-empty array of integers")
    if order is not None:
        order = check_vector(order, "order", dtype=None)
        if order.dtype.kind not in "iu":
            raise ValueError("order: expected integer row numbers")
    size = n if order is None else order.shape[0]
    if offsets[0] < 0 or offsets[-1] > size or np.any(offsets[1:] < offsets[:-1]):
        raise ValueError(f"offsets: must be non-decreasing within [0, {size}]")
    if order is not None:
        rows = order[offsets[0]:offsets[-1]]
        if rows.size and (rows.min() < 0 or rows.max() >= n):
            raise ValueError(f"order: row numbers must lie in [0, {n})")
        if rows.size and np.bincount(rows, minlength=n).max() > 1:
            raise ValueError("order: a row appears twice")
    return lai_queries_unchecked(scores, relevant, order, offsets.astype(np.intp), loss_obj,
                                 method)


def lai_queries_unchecked(scores, relevant, order, offsets, loss="ap", method="qs"):
    """:func:`lai_queries` trusting its input: the trusted inner entry that the problems
    call every iteration, after checking their data once.

    The caller guarantees what :func:`lai_queries` would check: ``scores`` a finite,
    contiguous float64 array; ``relevant`` a bool array of the same length; ``offsets``
    (intp, or int64) non-decreasing within the rows; ``order`` None or distinct intp
    row numbers. Invalid input is not detected: it gives wrong results or worse. Only
    ``loss`` and ``method`` are checked (a name, or a QSLoss). Returns as
    :func:`lai_queries` does.
    """
    loss_obj = get_loss(loss)
    coef, _, losses, objectives, _ = _run(scores, relevant, order, offsets, loss_obj,
                                          check_method(method, loss_obj), keep_ranks=False)
    return coef, losses, objectives


def structured_hinge(scores, labels, loss="ap", qid=None, method="qs"):
    """Structured-hinge rank loss and its semi-gradient with respect to the scores
    (2018 paper, §2.1, eq. 4-6).

    J(s) = max_R Δ(R*, R) + F(R) − F(R*), with F(R) = coef(R) · s, is a convex upper
    bound on Δ(R*, R(s)); a semi-gradient is coef(R̄) − coef(R*) at the maximiser R̄.
    With ``qid`` the value and gradient are averaged over the queries that have both a
    relevant and a non-relevant sample (the others contribute 0); with no such query
    both are 0.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Finite model scores.
    labels : array-like of shape (n_samples,)
        Binary relevance: 0/1 or −1/+1 (or bool).
    loss : {"ap", "ndcg", "roc"} or QSLoss
    qid : array-like of shape (n_samples,), optional
        Query of each sample.
    method : str
        Inference method (see :func:`loss_augmented_inference`).

    Returns
    -------
    value : float
    gradient : ndarray of shape (n_samples,)
    """
    scores = check_vector(scores, "scores")
    relevant = check_binary_labels(labels, scores.shape[0])
    order, offsets = query_segments(qid, scores.shape[0])
    loss_obj = get_loss(loss)
    method_code = check_method(method, loss_obj)
    coef, _, losses, _, shifts = _run(scores, relevant, order, offsets, loss_obj, method_code,
                                      keep_ranks=False)
    usable = ~np.isnan(losses)
    if not usable.any():  # (every ranking is perfect: a mini-batch of one class adds 0)
        return 0.0, np.zeros_like(scores)
    truth = np.zeros_like(scores)
    for q in np.flatnonzero(usable):
        rows = order[offsets[q]:offsets[q + 1]]
        truth[rows] = true_coef(relevant[rows])
    n_used = int(usable.sum())
    grad = (coef - truth) / n_used
    # Δ + (coef − truth)·s rather than objective − truth·s: samples whose coefficient
    # stays at the truth's (a positive ranked far above the rest) add nothing, so a
    # huge score elsewhere does not round the value away; and on the scores as the
    # inference shifted them (each query's grad sums to 0), so a large common offset
    # does not either
    with np.errstate(over="ignore", invalid="ignore"):
        value = (float(np.sum(losses[usable])) / n_used
                 + float(grad @ shifted_scores(scores, order, offsets, shifts)))
    if not np.isfinite(value):
        raise ValueError("scores: the structured-hinge value overflows (the scores of a "
                         "query span close to the largest double): scale them down")
    return max(value, 0.0), grad
