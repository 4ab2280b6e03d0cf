"""Rank losses as data and the QS-suitable loss interface.

A loss Δ(R*, R) over rankings of one query is QS-suitable (2018 paper, supplement §1)
when

- (C1) it decomposes over the negatives: Δ = Σ_j δ_j(r_j), with r_j the interleaving
  rank (1 .. P+1) of the j-th highest scored negative;
- (C2) its discrete derivative is non-decreasing in j:
  δ_{j+1}(i+1) − δ_{j+1}(i) ≥ δ_j(i+1) − δ_j(i) for 1 ≤ j < N, 1 ≤ i ≤ P;
- (C3) that derivative costs O(1) to evaluate.

A loss is given here by that derivative alone, as a vectorised NumPy callable
``step(i, j, n_pos, n_neg)`` (1-based integer arrays i, j that broadcast), with
δ_j(P+1) = 0 so that Δ(R*, R*) = 0. Any such loss works with every inference method that
needs only C1-C3 (``qs``, ``greedy``, ``select``); see :mod:`svmrank.inference`, which
also holds the structured-hinge loss over these losses (``structured_hinge``).
"""
import warnings

import numpy as np

from . import _lai_fast
from ._validation import check_int

__all__ = ["QSLoss", "AP", "NDCG", "ROC", "BUILTIN_LOSSES", "check_qs_suitable",
           "get_loss", "PairwiseLoss", "GradedNDCG", "PAIR_LOSSES", "svm_rank_parameters"]

# C2 is checked on every pair (i, j) when P·N is at most this (one vectorised pass over
# all pairs, in blocks); beyond it on a subset, with a warning
FULL_CHECK_PAIRS = 100_000_000
CHECK_BLOCK = 4_000_000  # pairs per call of the step during the checks


class QSLoss:
    """A QS-suitable rank loss, given by its per-negative discrete derivative.

    Parameters
    ----------
    step : callable
        ``step(i, j, n_pos, n_neg) -> ndarray``: δ_j(i+1) − δ_j(i) for integer arrays
        i (1 .. n_pos) and j (1 .. n_neg) that broadcast against each other; the result
        is floating point, of their broadcast shape, element by element (the checks
        call it on 2-d grids, inference on one j at a time). Vectorised NumPy code
        (C3): inference calls it once per negative it scans, so its per-call overhead
        counts (a query of N negatives: up to about N calls).
    name : str
        Shown in messages.
    check : bool
        Check C1-C3 numerically (:func:`check_qs_suitable`) for every problem size
        (P, N) the loss meets, before inference. Turn off only for a loss already proven
        QS-suitable.

    Notes
    -----
    The loss value is Δ = Σ_j δ_j(r_j) with δ_j(i) = −Σ_{k=i}^{P} step(k, j): the
    ground-truth ranking (every r_j = P+1) has loss 0.

    Examples
    --------
    The fraction of swapped positive/negative pairs (1 − ROC area):

    >>> roc = QSLoss(lambda i, j, P, N: np.full(np.broadcast(i, j).shape, -1.0 / (P * N)))
    """

    code = None  # built-in losses have a kernel code; user losses are called back

    def __init__(self, step, name="user loss", check=True):
        if not callable(step):
            raise ValueError(f"step must be callable, got {type(step).__name__}")
        self.step = step
        self.name = str(name)
        self.check = bool(check)
        self._checked = {}  # (P, N) -> largest |step| seen

    def __repr__(self):
        return f"QSLoss(name={self.name!r})"

    def steps(self, i, j, n_pos, n_neg):
        """The derivative on a grid, checked for shape and finiteness (a float64 array)."""
        i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
        shape = np.broadcast(i, j).shape
        try:  # (copies: a step may change its arguments in place, as i -= 1)
            out = self.step(i.copy(), j.copy(), int(n_pos), int(n_neg))
        except Exception as exc:
            raise ValueError(f"loss: {self.name}'s step(i, j, n_pos, n_neg) failed: "
                             f"{type(exc).__name__}: {exc}") from None
        if np.iscomplexobj(out):
            raise ValueError(f"loss: {self.name}'s step must return real numbers, got complex")
        if np.asarray(out).dtype.kind in "biu":  # np.full_like(i, -0.1) is all zeros
            raise ValueError(f"loss: {self.name}'s step must return floating-point numbers, got "
                             f"dtype {np.asarray(out).dtype} (i and j are integer arrays: "
                             "np.full_like(i, x) and i // j stay integer)")
        try:
            out = np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"loss: {self.name}'s step must return numbers: {exc}") from None
        if out.shape != shape:
            raise ValueError(f"loss: {self.name}'s step returned shape {out.shape}; expected "
                             f"{shape}, the broadcast shape of i and j")
        if not np.all(np.isfinite(out)):
            bad = np.argwhere(~np.isfinite(out))[0]
            ib, jb = np.broadcast_to(i, shape)[tuple(bad)], np.broadcast_to(j, shape)[tuple(bad)]
            raise ValueError(f"loss: {self.name}'s step is not finite at (i, j) = ({ib}, {jb})")
        return out

    def values(self, i, j, n_pos, n_neg):
        """δ_j(i) = −Σ_{k=i}^{P} step(k, j) for 1 ≤ i ≤ P+1 (broadcast arrays)."""
        i, j = np.broadcast_arrays(np.asarray(i, np.int64), np.asarray(j, np.int64))
        out = np.zeros(i.shape)
        for k in range(1, int(n_pos) + 1):
            mask = i <= k
            if mask.any():
                out[mask] -= self.steps(np.full(mask.sum(), k), j[mask], n_pos, n_neg)
        return out

    def ranking_loss(self, relevant, scores):
        """Δ(R*, R) of the ranking R by decreasing score (ties: input order) of one
        query; NaN without a relevant or a non-relevant sample."""
        relevant = np.asarray(relevant, dtype=bool)
        scores = np.asarray(scores, dtype=np.float64)
        order = np.lexsort((np.arange(scores.size), -scores))
        rel = relevant[order]
        P, N = int(rel.sum()), int((~rel).sum())
        if P == 0 or N == 0:
            return float("nan")
        r = 1 + np.cumsum(rel)[~rel]  # interleaving rank of each negative, in rank order
        return float(self.values(r, np.arange(1, N + 1), P, N).sum())

    def ensure_checked(self, n_pos, n_neg):
        """Check C1-C3 for (n_pos, n_neg) once; returns the largest |step| seen."""
        key = (int(n_pos), int(n_neg))
        if key not in self._checked:
            self._checked[key] = (check_qs_suitable(self, *key) if self.check
                                  else float(np.abs(self.steps(
                                      np.arange(1, key[0] + 1)[:, None],
                                      np.array([1, key[1]]), *key)).max()))
        return self._checked[key]

    def kernel_steps(self, lo, hi, j, n_pos, n_neg):
        """What the Cython kernel calls: steps for i in lo..hi-1 at one j."""
        return np.array(self.steps(np.arange(lo, hi), j, n_pos, n_neg))  # (a writable copy)


def _ap_step(i, j, P, N):
    # (j−1)/(j+i−1) − j/(j+i), written without cancellation
    i, j = np.asarray(i, float), np.asarray(j, float)
    return -i / ((j + i - 1.0) * (j + i) * P)


def _ndcg_step(i, j, P, N):
    D = lambda k: 1.0 / np.log2(1.0 + k)
    k = np.asarray(i, float) + np.asarray(j, float)
    return (D(k) - D(k - 1.0)) / D(np.arange(1, P + 1)).sum()


def _roc_step(i, j, P, N):
    return np.full(np.broadcast(i, j).shape, -1.0 / (P * N))


class _BuiltinLoss(QSLoss):
    def __init__(self, step, name, code, description):
        super().__init__(step, name=name, check=False)
        self.code = code
        self.description = description

    # copies (clone, deepcopy, pickle) are the module's object itself, so that
    # ``get_loss(loss.name) is loss`` tells a built-in loss from a user's
    def __reduce__(self):
        return get_loss, (self.name,)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


AP = _BuiltinLoss(_ap_step, "ap", _lai_fast.LOSS_AP,
                  "1 − average precision (Yue et al.; 2014 eq. 5)")
NDCG = _BuiltinLoss(_ndcg_step, "ndcg", _lai_fast.LOSS_NDCG,
                    "1 − NDCG, binary relevance, discount 1/log2(1+i) (2018 supplement §3)")
ROC = _BuiltinLoss(_roc_step, "roc", _lai_fast.LOSS_ROC,
                   "fraction of swapped positive/negative pairs (1 − ROC area)")
BUILTIN_LOSSES = {"ap": AP, "ndcg": NDCG, "roc": ROC}


def get_loss(loss):
    """A :class:`QSLoss` from a name ("ap", "ndcg", "roc") or a QSLoss instance."""
    if isinstance(loss, QSLoss):
        return loss
    if isinstance(loss, str) and loss in BUILTIN_LOSSES:
        return BUILTIN_LOSSES[loss]
    raise ValueError(f"loss must be one of {', '.join(map(repr, BUILTIN_LOSSES))} or a "
                     f"svmrank.losses.QSLoss; got {loss!r}")


def _check_grid(n, full, head=1000, points=200):
    """1 .. n, or when n > full the first ``head`` values, ``points`` geometrically
    spaced ones and the last few."""
    if n <= full:
        return np.arange(1, n + 1)
    geo = np.unique(np.geomspace(head, n, points).astype(np.int64))
    return np.unique(np.concatenate([np.arange(1, head + 1), geo, np.arange(max(1, n - 4), n + 1)]))


def check_qs_suitable(loss, n_pos, n_neg, rtol=1e-12):
    """Check C1-C3 numerically for a problem with ``n_pos`` positives and ``n_neg``
    negatives; raise a one-line ValueError at the first offending (i, j).

    - C3 / interface: one call on a (P, J) grid returns that shape, finite values.
    - C1: δ_j(i) = −Σ_{k≥i} step(k, j) ≥ 0, so every ranking has loss ≥ 0 = Δ(R*, R*).
    - C2: step(i, j+1) ≥ step(i, j) (up to ``rtol`` times the largest |step|).

    Every pair is checked when P·N ≤ FULL_CHECK_PAIRS (10⁸); beyond that (with a
    warning) every i (or, for P > 2000, a subset) against the first 1000 j, 200
    geometrically spaced j and the last 5, and C1 for every i at j = N (where C2 puts
    the smallest δ_j(i)). Returns the largest |step| seen.
    """
    loss = get_loss(loss)
    P, N = check_int(n_pos, "n_pos"), check_int(n_neg, "n_neg")
    small = P * N <= FULL_CHECK_PAIRS
    if not small:
        warnings.warn(f"loss: {loss.name} is checked for C1-C2 on a subset of the "
                      f"{P * N:.3g} pairs (i, j) of a query with P = {P}, N = {N} (every "
                      f"pair up to {FULL_CHECK_PAIRS:.0e}); a loss that breaks C2 elsewhere "
                      "would give a wrong maximiser", UserWarning, stacklevel=2)
    i_grid = _check_grid(P, P if small else 2000)
    j_grid = _check_grid(N, N if small else 1000)
    biggest = 0.0
    block = max(1, CHECK_BLOCK // max(len(i_grid), 1))
    for start in range(0, len(j_grid), block):
        js = j_grid[start:start + block]
        js_next = np.unique(np.concatenate([js, np.minimum(js + 1, N)]))
        d = loss.steps(i_grid[:, None], js_next[None, :], P, N)  # (|i|, |j|)
        scale = max(float(np.abs(d).max()), np.finfo(float).tiny)
        biggest = max(biggest, scale)
        col = {j: k for k, j in enumerate(js_next)}
        a = np.array([col[j] for j in js if j < N], dtype=np.int64)
        b = np.array([col[j + 1] for j in js if j < N], dtype=np.int64)
        if a.size:
            bad = d[:, b] < d[:, a] - rtol * scale
            if bad.any():
                ii, kk = np.argwhere(bad)[0]
                i, j = int(i_grid[ii]), int(js_next[a[kk]])
                raise ValueError(
                    f"loss: {loss.name} is not QS-suitable: condition C2 fails at (i, j) = "
                    f"({i}, {j}): δ_(j+1)(i+1) − δ_(j+1)(i) = {d[ii, b[kk]]:.6g} < "
                    f"δ_j(i+1) − δ_j(i) = {d[ii, a[kk]]:.6g} (P = {P}, N = {N})")
        if len(i_grid) == P:  # C1: δ_j(i) from the right-hand cumulative sums
            _check_c1(loss, -np.cumsum(d[::-1], axis=0)[::-1], i_grid, js_next, scale, P, rtol)
    if len(i_grid) < P:
        # C1 over every i at j = N: under C2 the steps grow with j, so δ_j(i) shrinks
        # with j and its smallest value over j is δ_N(i)
        i_all = np.arange(1, P + 1)
        d = np.concatenate([loss.steps(i_all[a:a + CHECK_BLOCK, None], np.array([[N]]), P, N)
                            for a in range(0, P, CHECK_BLOCK)])
        biggest = max(biggest, float(np.abs(d).max()))
        _check_c1(loss, -np.cumsum(d[::-1], axis=0)[::-1], i_all, np.array([N]),
                  max(biggest, np.finfo(float).tiny), P, rtol)
    return biggest


def _check_c1(loss, delta, i_values, j_values, scale, P, rtol):
    """Raise at the first δ_j(i) < 0 of a (|i|, |j|) table (C1), or the first that
    overflows (a loss term beyond the largest double)."""
    over = ~np.isfinite(delta)
    if over.any():
        ii, kk = np.argwhere(over)[0]
        raise ValueError(
            f"loss: {loss.name}'s loss term δ_j(i) = −Σ_(k≥i) step(k, j) overflows at "
            f"(i, j) = ({int(i_values[ii])}, {int(j_values[kk])}): scale the steps down")
    neg = delta < -rtol * max(scale * P, 1e-300)
    if neg.any():
        ii, kk = np.argwhere(neg)[0]
        raise ValueError(
            f"loss: {loss.name} gives a negative loss term δ_j(i) = {delta[ii, kk]:.6g} "
            f"at (i, j) = ({int(i_values[ii])}, {int(j_values[kk])}) (with δ_j(P+1) = 0 a "
            f"proper loss needs δ_j(i) ≥ 0; C1)")


# ------------------------------------------------------------------ graded relevance
PAIR_LOSSES = ("fraction", "count")


class PairwiseLoss:
    """SVM-rank's pairwise loss over the pairs of different relevance of each query
    (``RankSVM(loss="pairs")``; inference: :func:`svmrank.graded.pairs_inference`).

    Parameters
    ----------
    pair_loss : {"fraction", "count"}
        "fraction": swapped pairs over the query's pairs (svm_rank_learn ``-l 2``);
        "count": swapped pairs (``-l 1``). Either is averaged over queries.
    """

    name = "pairs"

    def __init__(self, pair_loss="fraction"):
        if pair_loss not in PAIR_LOSSES:
            raise ValueError(f"pair_loss must be one of {', '.join(map(repr, PAIR_LOSSES))}; "
                             f"got {pair_loss!r}")
        self.pair_loss = pair_loss

    def __repr__(self):
        return f"PairwiseLoss(pair_loss={self.pair_loss!r})"

    def __eq__(self, other):
        return isinstance(other, PairwiseLoss) and other.pair_loss == self.pair_loss

    __hash__ = None


class GradedNDCG:
    """1 − NDCG@k with graded gains (``RankSVM(loss="ndcg", gains=..., k=...)`` on graded
    labels or with k; inference: :func:`svmrank.graded.ndcg_inference`).

    Parameters
    ----------
    gains : {"exp", "linear"}
        2^l − 1 or l for relevance level l; discount 1/log2(1 + place).
    k : int >= 1 or None
        Truncation (None: every place).
    """

    name = "ndcg"

    def __init__(self, gains="exp", k=None):
        if gains not in ("exp", "linear"):
            raise ValueError(f"gains must be 'exp' or 'linear'; got {gains!r}")
        if k is not None:
            k = check_int(k, "k")
        self.gains, self.k = gains, k

    def __repr__(self):
        return f"GradedNDCG(gains={self.gains!r}, k={self.k!r})"

    def __eq__(self, other):
        return isinstance(other, GradedNDCG) and (other.gains, other.k) == (self.gains, self.k)

    __hash__ = None


def svm_rank_parameters(c, epsilon, loss_function, pairs_per_query):
    """``RankSVM(loss="pairs")``'s C, ε and ``pair_loss`` that solve svm_rank_learn's
    problem for its ``-c``, ``-e`` and ``-l`` on a training set (docs/algorithms.md,
    "SVM-rank's scale").

    svm_rank_learn minimises ½‖w‖² + (c/n) Σ_q ξ_q over all n queries (unrankable ones
    included) with ξ_q the query's hinge on swapped pairs (``-l 1``: counted; ``-l 2``:
    over its pairs), and stops at a violation of its averaged constraint below ε,
    for ``-l 1`` times the mean number of pairs per query. RankSVM averages over the
    n_ranked queries with two levels, hence C = c·n_ranked/n and ε rescaled alike.

    Parameters
    ----------
    c, epsilon : float
        svm_rank_learn's ``-c`` and ``-e``.
    loss_function : {1, 2}
        svm_rank_learn's ``-l``.
    pairs_per_query : array-like of int
        Pairs of different relevance in each training query (0 for a query of one level).

    Returns
    -------
    dict
        ``{"C": ..., "epsilon": ..., "pair_loss": "count" or "fraction"}``.
    """
    pairs = np.asarray(pairs_per_query, dtype=np.float64)
    if loss_function not in (1, 2):
        raise ValueError(f"loss_function must be 1 (swapped pairs) or 2 (fraction of swapped "
                         f"pairs); got {loss_function!r}")
    n, n_ranked = len(pairs), int(np.count_nonzero(pairs))
    if n_ranked == 0:
        raise ValueError("pairs_per_query: no query has two relevance levels")
    if loss_function == 1:
        eps = epsilon * pairs.sum() / n_ranked
    else:
        eps = epsilon * n / n_ranked
    return {"C": c * n_ranked / n, "epsilon": eps,
            "pair_loss": "count" if loss_function == 1 else "fraction"}
