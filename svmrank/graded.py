"""Loss-augmented inference for graded relevance: SVM-rank's pairwise loss and graded
NDCG@k (docs/algorithms.md, "Graded relevance").

Labels are non-negative integer relevance levels; a query needs two levels to be
ranked. For both losses the joint feature of a ranking R of one query sums, over the
pairs (i, j) of different levels (y_i > y_j), R_ij (x_i − x_j) with R_ij = +1 when i is
ranked above j and −1 otherwise (for the pairwise loss each pair is chosen on its own).
"""
import numpy as np

from . import _graded_fast
from ._validation import check_vector

__all__ = ["GAINS", "MAX_DP_STATES", "graded_levels", "level_gains", "pairs_inference",
           "ndcg_states", "ndcg_inference"]

GAINS = ("exp", "linear")
# Largest dynamic programme (states Π_l (min(n_l, k) + 1)) graded NDCG inference runs on
# one query: 9 bytes a state, 200-400 ns a state measured (1e7 states: 2-4 s, 90 MB;
# benchmarks/README.md, "Graded inference")
MAX_DP_STATES = 10_000_000


def graded_levels(y, name="y"):
    """Integer relevance levels of labels ``y``: two values the lower of which is <= 0
    are binary relevance (y > 0, as SVM-light reads -1/+1); otherwise the labels must be
    non-negative integers (one-line ValueError naming ``name``)."""
    y = check_vector(y, name)
    values = np.unique(y)
    if len(values) <= 2 and values[0] <= 0:
        return (y > 0).astype(np.int64)
    if values[0] < 0 or np.any(values != np.round(values)) or values[-1] > 1000:
        bad = values[(values < 0) | (values != np.round(values)) | (values > 1000)][0]
        raise ValueError(f"{name}: graded relevance labels must be integers in 0..1000, got "
                         f"{bad:g}")
    return y.astype(np.int64)


def level_gains(levels, gains):
    """Gain of each level (2^l − 1 for "exp", l for "linear"), scaled by 2^-max for
    "exp" (NDCG is a ratio; no level overflows)."""
    levels = np.asarray(levels, dtype=np.float64)
    if gains == "linear":
        return levels.copy()
    top = levels.max(initial=0.0)
    return np.exp2(levels - top) * -np.expm1(-levels * np.log(2.0))


def _dense_levels(labels):
    values, dense = np.unique(labels, return_inverse=True)
    return values, dense.astype(np.int64).ravel()


def pairs_inference(scores, levels, offsets, n_levels):
    """Swapped-pair counts of the most violated pairwise output (unchecked inputs).

    A pair (i, j) of query q with levels[i] > levels[j] is swapped when
    s_j > s_i − 1: that maximises Σ_pairs c_ij (1 − (s_i − s_j)) pair by pair.

    Parameters
    ----------
    scores : float64 ndarray, rows grouped by query (``offsets``)
    levels : int64 ndarray, each query's levels 0 .. n_levels[q] − 1
    offsets, n_levels : int64 ndarrays

    Returns
    -------
    coef : ndarray
        Per sample: swapped pairs it heads minus swapped pairs it closes (the
        joint-feature difference Ψ(R*) − Ψ(R̄) is Xᵀ coef, per query unweighted).
    swapped : ndarray of shape (n_queries,)
        Swapped pairs per query.
    """
    n = scores.shape[0]
    segment = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    order = np.lexsort((np.arange(n), -scores, segment))
    heads = np.empty(n, dtype=np.int64)
    tails = np.empty(n, dtype=np.int64)
    _graded_fast.pair_counts(np.ascontiguousarray(scores[order]), levels[order], offsets,
                             n_levels, heads, tails)
    coef = np.empty(n)
    coef[order] = heads - tails
    cum = np.concatenate([[0], np.cumsum(heads)])
    return coef, (cum[offsets[1:]] - cum[offsets[:-1]]).astype(np.float64)


def ndcg_states(counts, k):
    """Number of states of the NDCG@k dynamic programme on a query with ``counts[l]``
    samples of level l (k None: all places)."""
    places = int(np.sum(counts)) if k is None else min(int(k), int(np.sum(counts)))
    return int(np.prod([min(int(c), places) + 1 for c in counts], dtype=object))


def _discount(n):
    return 1.0 / np.log2(np.arange(2, n + 2))


def ndcg_inference(scores, labels, k=None, gains="exp"):
    """Most violated ranking of one query for the loss 1 − NDCG@k (graded gains).

    Maximises Δ(R*, R) + F(R), F(R) = Σ_{y_i > y_j} R_ij (s_i − s_j) / |pairs|, exactly,
    by the dynamic programme of docs/algorithms.md. Ties in the objective go to the
    first maximiser the programme meets (ranking ties: higher score, then lower row).

    Parameters
    ----------
    scores : array-like of float, shape (n,)
    labels : array-like of non-negative int, shape (n,), at least two levels
    k : int or None
    gains : {"exp", "linear"}

    Returns
    -------
    ranking : ndarray of int64
        Sample indices from the first place to the last.
    loss : float
        1 − NDCG@k of the ranking.
    coef : ndarray
        F(R) = coef · scores.
    coef_true : ndarray
        F(R*) = coef_true · scores for the ground-truth ranking.
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    values, lev = _dense_levels(np.asarray(labels))
    L, n = len(values), len(scores)
    if L < 2:
        raise ValueError("labels: a query needs two relevance levels to be ranked")
    places = n if k is None else min(int(k), n)
    counts = np.bincount(lev, minlength=L).astype(np.int64)
    n_states = ndcg_states(counts, places)
    if n_states > MAX_DP_STATES:
        raise ValueError(too_large_message(counts, k, n_states))
    gain = level_gains(values, gains)
    discount = _discount(places)
    ideal = float(np.sort(gain[lev])[::-1][:places] @ discount)
    n_pairs = (n * n - int(counts @ counts)) // 2
    order = np.lexsort((np.arange(n), -scores, lev))  # by level, then score
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    dims = np.minimum(counts, places) + 1
    choice = np.empty(n_states, dtype=np.int8)
    value = np.empty(n_states)
    prefix = np.zeros(L, dtype=np.int64)
    _graded_fast.ndcg_dp(np.ascontiguousarray(scores[order]), starts, gain / ideal, discount,
                         counts, dims.astype(np.int64), 2.0 / n_pairs, places, choice, value,
                         prefix)
    strides = np.ones(L, dtype=np.int64)
    for l in range(1, L):
        strides[l] = strides[l - 1] * dims[l - 1]
    state = int(prefix @ strides)
    sequence = np.empty(places, dtype=np.int64)
    for t in range(places - 1, -1, -1):
        sequence[t] = choice[state]
        state -= int(strides[sequence[t]])
    # the prefix: level l's samples in score order at the places the sequence gives it
    within = np.zeros(places, dtype=np.int64)
    for l in range(L):
        at = sequence == l
        within[at] = np.arange(int(at.sum()))
    head = order[starts[sequence] + within]
    rest = np.concatenate([order[starts[l] + prefix[l]:starts[l] + counts[l]] for l in range(L)])
    rest = rest[np.lexsort((rest, -scores[rest]))]
    ranking = np.concatenate([head, rest])
    loss = 1.0 - float(gain[lev[head]] @ discount) / ideal
    coef, coef_true = ranking_coef(ranking, lev, L, n_pairs)
    return ranking, loss, coef, coef_true


def ranking_coef(ranking, lev, n_levels, n_pairs):
    """Per-sample coefficients of F(R) for a ranking (sample indices, first place first)
    and of F(R*), each divided by ``n_pairs``."""
    n = len(lev)
    onehot = np.zeros((n, n_levels), dtype=np.int64)
    onehot[np.arange(n), lev[ranking]] = 1
    above = np.cumsum(onehot, axis=0) - onehot  # samples of each level above each place
    by_level = np.cumsum(above, axis=1)  # above[:, :m + 1] summed
    total = np.bincount(lev, minlength=n_levels)
    below_levels = np.concatenate([[0], np.cumsum(total)])  # samples of levels < m
    lr = lev[ranking]
    lower_above = np.where(lr > 0, by_level[np.arange(n), np.maximum(lr - 1, 0)], 0)
    higher_above = by_level[:, -1] - by_level[np.arange(n), lr]
    n_lower, n_higher = below_levels[lr], n - below_levels[lr + 1]
    coef = np.empty(n)
    coef[ranking] = ((n_lower - 2 * lower_above) - (2 * higher_above - n_higher)) / n_pairs
    coef_true = np.empty(n)
    coef_true[ranking] = (n_lower - n_higher) / n_pairs
    return coef, coef_true


def too_large_message(counts, k, n_states):
    """The one-line refusal for a query beyond :data:`MAX_DP_STATES`."""
    return (f"loss: exact graded NDCG{'' if k is None else f'@{k}'} inference on a query of "
            f"{int(np.sum(counts))} samples in {len(counts)} levels needs {n_states:.3g} "
            f"dynamic-programme states, above the limit of {MAX_DP_STATES:.0e}; use a "
            "smaller k, fewer relevance levels, or loss='pairs'")
