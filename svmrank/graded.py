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
from .metrics import check_k
from .parallel import current_threads

__all__ = ["GAINS", "MAX_DP_STATES", "graded_levels", "level_gains", "query_levels",
           "pairs_inference",
           "ndcg_states", "NDCGQueries", "ndcg_inference"]

GAINS = ("exp", "linear")
# Largest dynamic programme (states Π_l (min(n_l, k) + 1)) graded NDCG inference runs on
# one query: 9 bytes a state, 200-400 ns a state measured (1e7 states: 2-4 s, 90 MB;
# benchmarks/README.md, "Graded inference")
MAX_DP_STATES = 10_000_000


# the highest relevance level a graded label may have
MAX_LEVEL = 1000


def not_levels(values):
    """Mask of the values that are not relevance levels (integers in 0..MAX_LEVEL)."""
    return (values < 0) | (values != np.round(values)) | (values > MAX_LEVEL)


def graded_levels(y, name="y"):
    """Integer relevance levels of labels ``y``: two values the lower of which is <= 0
    are binary relevance (y > 0, as SVM-light reads -1/+1); otherwise the labels must be
    non-negative integers (one-line ValueError naming ``name``)."""
    y = check_vector(y, name)
    values = np.unique(y)
    if len(values) <= 2 and values[0] <= 0:
        return (y > 0).astype(np.int64)
    bad = not_levels(values)
    if bad.any():
        bad = values[bad][0]
        raise ValueError(f"{name}: graded relevance labels must be integers in "
                         f"0..{MAX_LEVEL}, got {bad:g}")
    return y.astype(np.int64)


def query_levels(labels, offsets):
    """Each query's levels made dense, in one compiled pass (unchecked inputs).

    Parameters
    ----------
    labels : int64 ndarray
        Non-negative integer levels (from :func:`graded_levels`), rows grouped by query.
    offsets : int64 ndarray
        Query q is rows offsets[q] .. offsets[q + 1] − 1.

    Returns
    -------
    dense : int64 ndarray
        Rank of each row's label among its query's distinct labels.
    n_levels : int64 ndarray
        Distinct labels per query.
    n_pairs : float64 ndarray
        Pairs of different labels per query.
    """
    n_queries = len(offsets) - 1
    dense = np.empty(len(labels), dtype=np.int64)
    n_levels = np.empty(n_queries, dtype=np.int64)
    n_pairs = np.empty(n_queries)
    _graded_fast.query_levels(np.ascontiguousarray(labels, dtype=np.int64),
                              np.ascontiguousarray(offsets, dtype=np.int64), dense, n_levels,
                              n_pairs)
    return dense, n_levels, n_pairs


def level_gains(levels, gains):
    """Gain of each level (2^l − 1 for "exp", l for "linear"), scaled by 2^-max for
    "exp" (NDCG is a ratio; no level overflows)."""
    levels = np.asarray(levels, dtype=np.float64)
    if gains == "linear":
        return levels.copy()
    top = levels.max(initial=0.0)
    return np.exp2(levels - top) * -np.expm1(-levels * np.log(2.0))


def _small_ints(values):
    """Non-negative integer keys in the smallest dtype (NumPy's stable sort is a radix
    sort for 16-bit keys)."""
    values = np.asarray(values)
    return values.astype(np.int16 if values.max(initial=0) < 1 << 15 else np.int64)


def _score_order(scores, segment, stable=True):
    """Rows by query (``segment``, non-decreasing ids), then decreasing score, then row
    (``stable=False``: tied scores in any order)."""
    order = np.argsort(-scores, kind="stable" if stable else "quicksort")
    if segment is None:
        return order
    return order[np.argsort(segment[order], kind="stable")]


def _dense_levels(labels):
    values, dense = np.unique(labels, return_inverse=True)
    return values, dense.astype(np.int64).ravel()


def pairs_inference(scores, levels, offsets, n_levels, order=None):
    """Swapped-pair counts of the most violated pairwise output (unchecked inputs).

    A pair (i, j) of query q with levels[i] > levels[j] is swapped when
    s_j > s_i − 1: that maximises Σ_pairs c_ij (1 − (s_i − s_j)) pair by pair. One
    compiled pass a query (its rows sorted there), the queries on
    :func:`svmrank.parallel.current_threads` threads (same results on any number).

    Parameters
    ----------
    scores : float64 ndarray, rows grouped by query (``offsets``)
    levels : int64 ndarray, each query's levels 0 .. n_levels[q] − 1
    offsets, n_levels : int64 ndarrays
    order : int64 ndarray, optional
        Each query's rows in the order of an earlier call's scores (a permutation within
        each query): the sorts start from it (nearly sorted when the scores changed
        little), and it is overwritten with this call's order. The results do not
        depend on it.

    Returns
    -------
    coef : ndarray
        Per sample: swapped pairs it heads minus swapped pairs it closes (the
        joint-feature difference Ψ(R*) − Ψ(R̄) is Xᵀ coef, per query unweighted).
    swapped : ndarray of shape (n_queries,)
        Swapped pairs per query.
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    coef = np.empty(scores.shape[0])
    swapped = np.zeros(len(offsets) - 1)
    _graded_fast.pairs_queries(scores, *(np.ascontiguousarray(a, dtype=np.int64)
                                         for a in (levels, offsets, n_levels)),
                               coef, swapped, current_threads(), order)
    return coef, swapped


def ndcg_states(counts, k):
    """Number of states of the NDCG@k dynamic programme on a query with ``counts[l]``
    samples of level l (k None: all places)."""
    places = int(np.sum(counts)) if k is None else min(int(k), int(np.sum(counts)))
    return int(np.prod([min(int(c), places) + 1 for c in counts], dtype=object))


def _discount(n):
    return 1.0 / np.log2(np.arange(2, n + 2))


class NDCGQueries:
    """Graded NDCG@k inference over many queries, with what does not depend on the
    scores computed once (the problems call it every iteration).

    Parameters
    ----------
    labels : int64 ndarray
        Non-negative integer levels, rows grouped by query (``offsets``); every query
        has two levels or more.
    offsets : int64 ndarray
    k : int or None
    gains : {"exp", "linear"}

    Raises
    ------
    ValueError
        For a query whose programme exceeds :data:`MAX_DP_STATES` (one line).
    """

    def __init__(self, labels, offsets, k=None, gains="exp"):
        labels = np.asarray(labels)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        n = len(labels)
        segment = np.repeat(np.arange(len(self.offsets) - 1), np.diff(self.offsets))
        self.segment = None if len(self.offsets) == 2 else _small_ints(segment)
        self.levels = np.empty(n, dtype=np.int64)
        self.coef_true = np.empty(n)
        counts, dims, gain_list, places, pairs, level_offsets = [], [], [], [], [], [0]
        self.max_states = 1
        for query, (a, b) in enumerate(zip(self.offsets[:-1], self.offsets[1:])):
            values, lev = _dense_levels(labels[a:b])
            if len(values) < 2:
                raise ValueError("labels: a query needs two relevance levels to be ranked")
            c = np.bincount(lev, minlength=len(values)).astype(np.int64)
            m = int(b - a)
            p = m if k is None else min(int(k), m)
            n_states = ndcg_states(c, p)
            if n_states > MAX_DP_STATES:
                raise QueryTooLarge(c, k, n_states, query)
            self.max_states = max(self.max_states, n_states)
            g = level_gains(values, gains)
            ideal = float(np.sort(g[lev])[::-1][:p] @ _discount(p))
            n_pairs = (m * m - int(c @ c)) // 2
            below = np.concatenate([[0], np.cumsum(c)])
            self.levels[a:b] = lev
            self.coef_true[a:b] = (below[lev] - (m - below[lev + 1])) / n_pairs
            counts.append(c)
            dims.append(np.minimum(c, p) + 1)
            gain_list.append(g / ideal)
            places.append(p)
            pairs.append(n_pairs)
            level_offsets.append(level_offsets[-1] + len(values))
        self.counts = np.concatenate(counts).astype(np.int64)
        self.dims = np.concatenate(dims).astype(np.int64)
        self.gains = np.concatenate(gain_list)
        self.places = np.array(places, dtype=np.int64)
        self.n_pairs = np.array(pairs, dtype=np.float64)
        self.level_offsets = np.array(level_offsets, dtype=np.int64)
        # a key per (query, level), increasing with the query
        self.level_key = _small_ints(self.level_offsets[segment] + self.levels)
        self.discount = _discount(max(1, int(self.places.max())))

    def __call__(self, scores):
        """(d, losses, ranking): per row coef(R*) − coef(R̄) of F (per query, unweighted),
        per query 1 − NDCG@k of R̄, and R̄ (rows, each query's first place first)."""
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        by_score = _score_order(scores, self.segment)
        by_level = by_score[np.argsort(self.level_key[by_score], kind="stable")]
        d = np.empty(len(scores))
        losses = np.empty(len(self.offsets) - 1)
        ranking = np.empty(len(scores), dtype=np.int64)
        _graded_fast.ndcg_queries(scores, by_level, by_score, self.levels, self.offsets,
                                  self.level_offsets, self.counts, self.dims, self.gains,
                                  self.discount, self.places, self.n_pairs, self.max_states,
                                  d, losses, ranking)
        return d, losses, ranking


def ndcg_inference(scores, labels, k=None, gains="exp"):
    """Most violated ranking of one query for the loss 1 − NDCG@k (graded gains).

    Maximises Δ(R*, R) + F(R), F(R) = Σ_{y_i > y_j} R_ij (s_i − s_j) / |pairs|, exactly,
    by the dynamic programme of docs/algorithms.md. Ties in the objective go to the
    first maximiser the programme meets (ranking ties: higher score, then lower row).

    Parameters
    ----------
    scores : array-like of float, shape (n,)
    labels : array-like of non-negative int, shape (n,), at least two levels (two
        values the lower of which is <= 0, such as -1/+1, are binary relevance)
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
    scores = check_vector(scores, "scores")
    levels = graded_levels(check_vector(labels, "labels", n=len(scores)), "labels")
    if len(np.unique(levels)) < 2:
        raise ValueError("labels: need two relevance levels or more (NDCG is undefined "
                         "without a relevant sample, and constant with one level)")
    k = check_k(k)
    if not isinstance(gains, str) or gains not in GAINS:
        raise ValueError(f"gains must be 'exp' or 'linear', got {gains!r}")
    queries = NDCGQueries(levels, [0, len(scores)], k, gains)
    d, losses, ranking = queries(scores)
    return ranking, float(losses[0]), queries.coef_true - d, queries.coef_true


class QueryTooLarge(ValueError):
    """A query beyond :data:`MAX_DP_STATES` (:func:`too_large_message`): ``query`` is its
    index among the queries."""

    def __init__(self, counts, k, n_states, query):
        super().__init__(too_large_message(counts, k, n_states))
        self.counts, self.k, self.n_states, self.query = counts, k, n_states, query


def too_large_message(counts, k, n_states, where=None):
    """The one-line refusal for a query beyond :data:`MAX_DP_STATES` (``where``: which
    query, in parentheses), with the advice that can help it (a smaller k only when
    k = 1 would fit)."""
    advice = ["a smaller k"] if ndcg_states(counts, 1) <= MAX_DP_STATES else []
    advice += ["fewer relevance levels"] if len(counts) > 2 else []
    advice += ["loss='pairs'"]
    return (f"loss: exact graded NDCG{'' if k is None else f'@{k}'} inference on a query of "
            f"{int(np.sum(counts))} samples in {len(counts)} levels needs {n_states:.3g} "
            f"dynamic-programme states, above the limit of {MAX_DP_STATES:.0e}"
            + ("" if where is None else f" ({where})") + "; use "
            + (", ".join(advice[:-1]) + " or " if len(advice) > 1 else "") + advice[-1])
