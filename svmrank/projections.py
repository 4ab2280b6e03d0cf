"""Euclidean (and biased) projections used by the top-k multiclass SVM.

Lapin, Hein & Schiele (2015), "Top-k Multiclass SVM", §4-5. Every projection has the
threshold form ``x = clip(a - t, 0, u)``; the kernels (``svmrank._topk_fast``, from
``cython_src/_projection_fast.pyx``) find the thresholds in O(m log m) worst case for
every k, and in expected linear time without sorting whenever the budget constraint
``<1,x> <= r`` is active (the knapsack case of Lemma 5).

Accuracy: thresholds are computed in double precision from sums of the entries, so
each x_i is exact up to rounding relative to ``max|a|`` (about m * 1e-16 * max|a|
at worst); entries far below that scale, e.g. a budget r = 1 spread over
entries of size 1e200, are not resolved (for the knapsack, the scale is the largest
of |a|, the bounds and r). Entries beyond 2**±100 are first scaled by a power of two,
with the budget and bounds (every projection here is positively homogeneous:
P(c a; c r) = c P(a; r) for c > 0), since the kernels' sums and cross-products would
overflow near 1e300 and their bucket widths underflow near 1e-307.
"""
import numbers

import numpy as np

from . import _topk_fast
from ._validation import check_positive, check_vector

__all__ = ["project_topk_simplex", "project_topk_cone", "project_knapsack", "project_topk_box"]


def _check_a(a):
    a = check_vector(a, "a")
    if a.shape[0] == 0:
        raise ValueError("a: expected a non-empty vector")
    return a


def _unit_exponent(*values):
    """e with max|values| * 2**e in [0.5, 1), or 0 when that maximum is 0 or lies
    within 2**±100 (where the kernels are exact up to rounding)."""
    top = max(max(float(v.max()), -float(v.min())) if np.ndim(v) else abs(float(v))
              for v in values)
    if top == 0.0 or 2.0 ** -100 <= top <= 2.0 ** 100:
        return 0
    return -int(np.frexp(top)[1])


def _with_budget(project, a, r):
    """``project(a, r)`` for a set {<1,x> <= r, ...} containing 0, run on a scaled by
    2**e (from a alone, :func:`_unit_exponent`) and scaled back. The optimum has
    ||x*|| <= 2 ||a|| (x = 0 is no better), so a budget above 4 m^2 max|a| binds
    neither <1,x> <= r nor x_i <= r/k and is lowered to that; a budget that underflows
    is below the resolution of a, and x = 0."""
    e = _unit_exponent(a)
    if e == 0:
        return project(a, r)
    with np.errstate(over="ignore"):
        r_scaled = min(float(np.ldexp(r, e)), 4.0 * a.size ** 2)
    if r_scaled == 0.0:
        return np.zeros_like(a)
    return np.ldexp(project(np.ldexp(a, e), r_scaled), -e)


def _knapsack_scaled(project, a, lo, hi, r):
    """``project(a, lo, hi, r)`` on everything scaled by one power of two (from the
    largest of them), scaled back and clipped into [lo, hi] (a bound that underflowed
    in the scaled problem would otherwise be exceeded)."""
    e = _unit_exponent(a, lo, hi, r)
    if e == 0:
        return project(a, lo, hi, r)
    scaled = [np.ldexp(v, e) for v in (lo, hi, r)]
    scaled = [s if np.ndim(s) else float(s) for s in scaled]
    return np.clip(np.ldexp(project(np.ldexp(a, e), *scaled), -e), lo, hi)


def _check_k(k, m):
    if isinstance(k, bool) or not isinstance(k, (numbers.Integral, np.integer)):
        raise ValueError(f"k must be an integer, got {k!r}")
    if not 1 <= k <= m:
        raise ValueError(f"k must satisfy 1 <= k <= len(a) = {m}, got {k}")
    return int(k)


def project_topk_simplex(a, k, r=1.0, rho=0.0):
    """Biased projection onto the top-k simplex (Lemma 5).

    Solves ``argmin_x ||a - x||^2 + rho <1,x>^2`` over
    ``Delta_k(r) = {x : <1,x> <= r, 0 <= x_i <= <1,x>/k}``.

    Parameters
    ----------
    a : array-like of shape (m,)
        Point to project (finite).
    k : int
        ``1 <= k <= m``.
    r : float, default 1.0
        Budget, ``r > 0``.
    rho : float, default 0.0
        Bias weight, ``rho >= 0`` (``rho = 1`` in the Prox-SDCA update, Prop. 4).

    Returns
    -------
    x : ndarray of shape (m,)
    """
    a = _check_a(a)
    k = _check_k(k, a.shape[0])
    r = check_positive(r, "r")
    rho = check_positive(rho, "rho", allow_zero=True)
    return _with_budget(lambda a, r: _topk_fast.topk_simplex(a, k, r, rho), a, r)


def project_topk_cone(a, k, rho=0.0):
    """Biased projection onto the top-k cone ``{x : 0 <= x_i <= <1,x>/k}`` (Lemmas 3-4).

    Solves ``argmin_x ||a - x||^2 + rho <1,x>^2`` over the cone; the result is 0
    exactly when the sum of the k largest entries of ``a`` is <= 0.

    Parameters
    ----------
    a : array-like of shape (m,)
    k : int
        ``1 <= k <= m``.
    rho : float, default 0.0
        ``rho >= 0``.

    Returns
    -------
    x : ndarray of shape (m,)
    """
    a = _check_a(a)
    k = _check_k(k, a.shape[0])
    rho = check_positive(rho, "rho", allow_zero=True)
    e = _unit_exponent(a)  # (the cone is scale-invariant)
    if e == 0:
        return _topk_fast.topk_cone(a, k, rho)
    return np.ldexp(_topk_fast.topk_cone(np.ldexp(a, e), k, rho), -e)


def project_knapsack(a, lo, hi, r):
    """Continuous quadratic knapsack: ``argmin ||a - x||^2`` s.t. ``<1,x> = r``, ``lo <= x <= hi``.

    Scalar bounds use Kiwiel's variable fixing (no sort, expected linear time; a
    sort-based fallback bounds the worst case by O(m log m)); per-coordinate bounds
    sort the 2m breakpoints and bisect them (O(m log m)).

    Parameters
    ----------
    a : array-like of shape (m,)
    lo, hi : float or array-like of shape (m,)
        Bounds with ``lo <= hi``.
    r : float
        Required sum, ``sum(lo) <= r <= sum(hi)``.

    Returns
    -------
    x : ndarray of shape (m,)
    """
    a = _check_a(a)
    m = a.shape[0]
    r = _finite(r, "r")
    if np.ndim(lo) == 0 and np.ndim(hi) == 0:
        lo, hi = _finite(lo, "lo"), _finite(hi, "hi")
        if lo > hi:
            raise ValueError(f"lo must be <= hi, got lo={lo!r} > hi={hi!r}")
        slo, shi = m * lo, m * hi
    else:
        lo, hi = _bound_vector(lo, "lo", m), _bound_vector(hi, "hi", m)
        if np.any(lo > hi):
            i = int(np.argmax(lo > hi))
            raise ValueError(f"lo must be <= hi, got lo[{i}]={lo[i]!r} > hi[{i}]={hi[i]!r}")
        slo, shi = float(lo.sum()), float(hi.sum())
    slack = 8 * np.finfo(float).eps * m * max(1.0, abs(slo), abs(shi), abs(r))
    if not slo - slack <= r <= shi + slack:
        raise ValueError(f"r={r!r} is infeasible: need sum(lo) = {slo!r} <= r <= "
                         f"sum(hi) = {shi!r}")
    return _knapsack_scaled(_topk_fast.knapsack if np.ndim(lo) == 0 else _knapsack_vector_bounds,
                            a, lo, hi, r)


def _bound_vector(v, name, m):
    v = check_vector(np.atleast_1d(v), name)
    if v.shape[0] == 1:
        return np.full(m, v[0])
    if v.shape[0] != m:
        raise ValueError(f"{name}: expected a scalar or length {m}, got length {v.shape[0]}")
    return v


def _finite(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _knapsack_vector_bounds(a, lo, hi, r, refine=True):
    # F(t) = sum_i clip(a_i - t, lo_i, hi_i) is non-increasing and piecewise linear
    # with breakpoints a_i - hi_i and a_i - lo_i. Bisect the sorted breakpoints for the
    # segment where F crosses r, evaluating F directly (a running sum of slopes would
    # cancel catastrophically when one bound is far larger than the others), then
    # interpolate on that segment, where F is linear.
    F = lambda t: float(np.clip(a - t, lo, hi).sum())
    bp = np.unique(np.concatenate([a - hi, a - lo]))
    if F(bp[0]) <= r:
        t = bp[0]
    elif F(bp[-1]) >= r:
        t = bp[-1]
    else:
        i, j = 0, bp.size - 1  # F(bp[i]) > r > F(bp[j])
        while j - i > 1:
            mid = (i + j) // 2
            f = F(bp[mid])
            if f == r:
                i = j = mid
            elif f > r:
                i = mid
            else:
                j = mid
        t0, t1 = bp[i], bp[j]
        f0, f1 = F(t0), F(t1)
        if f0 == f1:
            t = t0
        else:  # slope -(free coordinates); step from the end nearer the root
            mid = 0.5 * t0 + 0.5 * t1
            n_free = max(1, int(np.count_nonzero((a - hi < mid) & (mid < a - lo))))
            t = t0 + (f0 - r) / n_free if f0 - r <= r - f1 else t1 - (r - f1) / n_free
    if refine and abs(t) > 1e6 * float((hi - lo).max()) > 0:
        # F's sums carry an error of about m eps |t|, as large as x itself once |t|
        # dwarfs the bounds: solve again on a - t (shift-invariant, and exact near
        # the new root), as the kernel does
        return _knapsack_vector_bounds(a - t, lo, hi, r, refine=False)
    return np.clip(a - t, lo, hi)


def project_topk_box(a, k, r=1.0, rho=0.0):
    """Biased projection onto ``{x : <1,x> <= r, 0 <= x_i <= r/k}`` (β loss, §5, eq. 10).

    Solves ``argmin_x ||a - x||^2 + rho <1,x>^2`` over that set.

    Parameters
    ----------
    a : array-like of shape (m,)
    k : int
        ``1 <= k <= m``.
    r : float, default 1.0
        ``r > 0``.
    rho : float, default 0.0
        ``rho >= 0``.

    Returns
    -------
    x : ndarray of shape (m,)
    """
    a = _check_a(a)
    k = _check_k(k, a.shape[0])
    r = check_positive(r, "r")
    rho = check_positive(rho, "rho", allow_zero=True)
    return _with_budget(lambda a, r: _topk_fast.topk_box(a, k, r, rho), a, r)
