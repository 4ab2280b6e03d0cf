"""SVM-perf's multivariate losses over the whole sample (Joachims 2005, ICML).

One structured output: the labelling ŷ ∈ {−1, 1}ⁿ of all n samples, with the joint
feature of :mod:`svmrank.problems.binary` (Ψ(ŷ) = 1/(2n) Σ ŷ_i x_i) and a loss of the
contingency table (a true positives, b false positives, c = P − a, d = N − b), in
[0, 1]:

=========  ============================  =====================================
loss       Δ(a, b)                       labellings ŷ considered
=========  ============================  =====================================
zero_one   1 unless ŷ = y                all
f1         1 − 2a / (2a + b + c)         all
prbep      1 − a / P                     a + b = P (precision = recall)
prec@k     1 − a / (a + b)               a + b ≥ k
rec@k      1 − a / P                     a + b ≤ k
=========  ============================  =====================================

These are SVM-perf's (``-l 0, 1, 3, 4, 5``; it counts them in percent, but for the
zero/one loss), including its domains for the @k losses (at least / at most k
predicted positives). k = max(1, ⌊frac · P⌋) for a fraction ``frac`` of the positives
(SVM-perf's ``--p``; 0.5 for Prec@k and 2 for Rec@k by default). The most violated
labelling is exact: kernel ``svmrank._perf_fast`` (Algorithm 2 of the paper, with a
binary search over b for F1 and Prec@k).
"""
import numpy as np

from .. import _perf_fast
from .._validation import check_matrix, check_vector
from .binary import add_bias_column
from .linear import LinearScoreProblem

# loss name -> SVM-perf's -l number
PERF_LOSSES = {"zero_one": 0, "f1": 1, "prbep": 3, "prec@k": 4, "rec@k": 5}
# SVM-perf's k fraction (--p 0) for Prec@k and Rec@k
DEFAULT_K = {"prec@k": 0.5, "rec@k": 2.0}


def check_k(loss, k):
    """The fraction of the positives that gives k (SVM-perf's ``--p``) for ``loss``:
    ``k`` itself, or SVM-perf's default for None; ValueError naming ``k`` outside
    SVM-perf's range ((0, 1] for Prec@k, >= 1 for Rec@k) or given for another loss."""
    if loss not in DEFAULT_K:
        if k is not None:
            raise ValueError(f"k: only the prec@k and rec@k losses take k, not loss={loss!r}")
        return None
    if k is None:
        return DEFAULT_K[loss]
    try:
        k = float(k)
    except (TypeError, ValueError):
        raise ValueError(f"k: expected a number (a fraction of the positives), got {k!r}") from None
    if loss == "prec@k" and not 0 < k <= 1:
        raise ValueError(f"k: Prec@k takes a fraction of the positives in (0, 1], got {k:g}")
    if loss == "rec@k" and not 1 <= k < np.inf:
        raise ValueError(f"k: Rec@k takes a finite multiple of the positives >= 1, got {k:g}")
    return k


def k_count(fraction, n_positive):
    """SVM-perf's k: ⌊fraction · P⌋, at least 1."""
    return max(1, int(n_positive * fraction))


def table_loss(loss, a, b, P, k=None):
    """Δ(a, b) of ``loss`` (in [0, 1]), or None for a labelling outside its domain."""
    if loss == "zero_one":
        return 0.0 if (a == P and b == 0) else 1.0
    if loss == "f1":
        return 1.0 - 2.0 * a / (a + b + P)
    if loss == "prbep":
        return 1.0 - a / P if a + b == P else None
    if loss == "prec@k":
        return b / (a + b) if a + b >= k else None
    if loss == "rec@k":
        return 1.0 - a / P if a + b <= k else None
    raise ValueError(f"loss: unknown multivariate loss {loss!r}")


class PerfProblem(LinearScoreProblem):
    """Most-violated-constraint oracle for SVM-perf's multivariate losses.

    Parameters
    ----------
    X : array-like or sparse matrix, shape (n_samples, n_features)
    y : array-like, shape (n_samples,)
        Positive means y > 0.
    loss : {"zero_one", "f1", "prbep", "prec@k", "rec@k"}
    k : float, optional
        Fraction of the positives giving k for Prec@k and Rec@k (see :func:`check_k`).
    bias : float
        Value of the constant bias feature appended to X (0: none).
    """

    def __init__(self, X, y, loss, k=None, bias=1.0):
        if loss not in PERF_LOSSES:
            raise ValueError(f"loss: expected one of {', '.join(PERF_LOSSES)}, got {loss!r}")
        fraction = check_k(loss, k)
        X = check_matrix(X)
        y = check_vector(y, "y", n=X.shape[0])
        self.positive = y > 0
        self.n_positive = int(self.positive.sum())
        if self.n_positive == 0:
            raise ValueError(f"y: the {loss} loss needs a positive sample (y > 0); got none")
        super().__init__(add_bias_column(X, bias))
        self.loss, self.code = loss, PERF_LOSSES[loss]
        # (Rec@k's k beyond n admits every labelling, as in SVM-perf: Δ = 1 − recall)
        self.k = min(k_count(fraction, self.n_positive), len(y)) if fraction is not None else 0
        self.sign = np.where(self.positive, 1.0, -1.0)

    def violation_at_scores(self, scores):
        """Loss Δ of the most violated labelling and d with g = Xᵀ d (d_i = y_i / n on
        the samples it flips)."""
        pos, neg = scores[self.positive], scores[~self.positive]
        pos_sorted, neg_sorted = -np.sort(-pos), -np.sort(-neg)
        a, b = _perf_fast.most_violated_table(pos_sorted, neg_sorted, self.code, self.k)
        n = len(scores)
        d = np.zeros(n)
        if a == self.n_positive and b == 0:  # (the true labelling: nothing violated)
            return 0.0, d
        # flip all but the a highest positives and the b highest negatives (among tied
        # scores, which ones does not change the value)
        d[self.positive] = _top(-pos, -pos_sorted[::-1], len(pos) - a) * (1.0 / n)
        d[~self.positive] = _top(neg, neg_sorted, b) * (-1.0 / n)
        return table_loss(self.loss, a, b, self.n_positive, self.k), d


def _top(values, decreasing, count):
    """0/1 mask of ``count`` entries of ``values`` that are among its ``count`` largest
    (``decreasing``: ``values`` sorted in decreasing order)."""
    if count == 0:
        return np.zeros(len(values))
    threshold = decreasing[count - 1]
    mask = values > threshold
    ties = np.flatnonzero(values == threshold)[:count - int(mask.sum())]
    mask[ties] = True
    return mask.astype(np.float64)


def perf_scale(loss, n_positive=None, n_negative=None):
    """How SVM-perf's problem for ``loss`` maps onto svmrank's (docs/algorithms.md).

    SVM-perf labels the samples ±50/n (±50/P and ∓50/N for ROC area), so its joint
    feature is 100 (ROC area: 50) times svmrank's, and counts its losses in percent
    (the zero/one loss in {0, 1}). Its ``-c C -e ε`` problem has the minimiser
    ``w_factor`` × svmrank's at C × ``c_factor``, ε × ``eps_factor``.

    Parameters
    ----------
    loss : {"error", "zero_one", "f1", "prbep", "prec@k", "rec@k", "roc", "ap"}
    n_positive, n_negative : int
        Needed for "ap" only (SVM-perf's -l 11 does not normalise its joint feature).

    Returns
    -------
    (c_factor, eps_factor, w_factor) : tuple of float
    """
    if loss == "zero_one":
        return 1e4, 1.0, 0.01
    if loss in ("error", "f1", "prbep", "prec@k", "rec@k"):
        return 100.0, 0.01, 1.0
    if loss == "roc":
        return 25.0, 0.01, 2.0
    if loss == "ap":
        if not n_positive or not n_negative:
            raise ValueError("n_positive, n_negative: the ap scale needs both (> 0)")
        pairs = float(n_positive) * float(n_negative)
        return pairs * pairs / 100.0, 0.01, 100.0 / pairs
    raise ValueError(f"loss: no SVM-perf scale for {loss!r}")
