"""Slow, obviously-correct references for svmrank.projections (NumPy only).

- ``bisect_*``: bisection on the thresholds of x = clip(a - t, lo, u).
- ``exhaustive_*``: the paper's O(m log m + km) search over all (|U|, |M|) partitions
  of the sorted vector (Lapin et al. 2015, Lemma 3, eqs. 7-8), the oracle for the
  fast partition walk.
- ``fw_gap``: the Frank-Wolfe gap <g, x - y*> with y* minimising <g, y> over the set
  (g the gradient of the objective at x); zero exactly at the optimum, so it checks the
  KKT conditions without knowing the answer.
"""
import numpy as np

N_BISECT = 200


def _root_decreasing(f, lo, hi):
    """Bisection for a non-increasing f with f(lo) >= 0 >= f(hi); returns the midpoint."""
    for _ in range(N_BISECT):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def bisect_knapsack(a, lo, hi, r):
    """argmin ||a - x||^2 s.t. sum x = r, lo <= x <= hi, by bisection on t."""
    a = np.asarray(a, float)
    if hi == lo:
        return np.full_like(a, lo)
    f = lambda t: np.clip(a - t, lo, hi).sum() - r
    t = _root_decreasing(f, a.min() - hi - 1.0, a.max() - lo + 1.0)
    return np.clip(a - t, lo, hi)


def _knapsack_t(a, u, s):
    """Threshold t with sum clip(a - t, 0, u) = s (0 < s < m*u), by bisection."""
    f = lambda t: np.clip(a - t, 0.0, u).sum() - s
    return _root_decreasing(f, a.min() - u - 1.0, a.max() + 1.0)


def bisect_topk(a, k, rho=0.0, r=None):
    """Biased projection onto the top-k simplex (r given) or cone (r=None).

    Minimises the convex g(u), u = <1,x>/k, whose derivative over k is
    rho*s - t - p/k (t, p from the knapsack with sum s = k u and bound u), by
    bisection on the sign of that derivative; the inner knapsack by bisection too.
    """
    a = np.asarray(a, float)
    m = a.size
    if np.sort(a)[::-1][:k].sum() <= 0:
        return np.zeros(m)

    def x_of(u):
        if k == m:
            return np.full(m, u)
        return np.clip(a - _knapsack_t(a, u, k * u), 0.0, u)

    def dg(u):
        if k == m:
            return rho * m * u - (a.sum() - m * u) / m
        t = _knapsack_t(a, u, k * u)
        p = np.maximum(a - t - u, 0.0).sum()
        return rho * k * u - t - p / k

    umax = r / k if r is not None else (np.sqrt(m) * np.linalg.norm(a) + 1.0) / k * 4
    if dg(umax) <= 0:
        return x_of(umax)
    lo, hi = 0.0, umax
    for _ in range(N_BISECT):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if dg(mid) < 0:
            lo = mid
        else:
            hi = mid
    return x_of(0.5 * (lo + hi))


def bisect_box(a, k, r=1.0, rho=0.0):
    """Biased projection onto {sum x <= r, 0 <= x <= r/k} (§5): t = max(t_r, t_bias)."""
    a = np.asarray(a, float)
    u = r / k
    g = lambda t: np.clip(a - t, 0.0, u).sum()
    span = (a.min() - u - 1.0, a.max() + 1.0)
    t_r = _root_decreasing(lambda t: g(t) - r, *span) if g(span[0]) > r else -np.inf
    if rho == 0:
        t_b = 0.0
    else:
        t_b = _root_decreasing(lambda t: rho * g(t) - t, min(span[0], -1.0),
                               max(span[1], rho * a.size * u + 1.0))
    return np.clip(a - max(t_r, t_b), 0.0, u)


def exhaustive_topk(a, k, rho=0.0, r=None, tol=1e-9):
    """The paper's search (§4.2-4.3): knapsack case of Lemma 5, then Lemma 3's cases."""
    a = np.asarray(a, float)
    m = a.size
    b = np.sort(a)[::-1]
    eps = tol * (np.abs(a).max() or 1.0)  # (the problem's own scale: no floor of 1)
    if b[:k].sum() <= 0:
        return np.zeros(m)
    if r is not None:
        u = r / k
        x = bisect_knapsack(a, 0.0, u, r)
        inner = (x > 0) & (x < u)
        if inner.any():
            t = np.mean(a[inner] - x[inner])
        else:  # largest valid t: min over U of a_i - u
            t = (a[x >= u] - u).min()
        p = np.maximum(a - t - u, 0.0).sum()
        if t + p / k - rho * r >= 0:
            return x
    # case 2: U = top k, M empty
    u = b[:k].sum() / (k + rho * k * k)
    if k == m or b[k - 1] - u >= b[k] - eps:
        return np.minimum(np.where(a >= b[k - 1], u, 0.0), u) if k < m else np.full(m, u)
    # case 3: loop over |U| < k <= |U| + |M| (eqs. 7-8)
    csum = np.concatenate([[0.0], np.cumsum(b)])
    for nu in range(k):
        for nm in range(k, m + 1):
            nM = nm - nu
            SU, SM = csum[nu], csum[nm] - csum[nu]
            D = (k - nu) ** 2 + (nu + rho * k * k) * nM
            u = (nM * SU + (k - nu) * SM) / D
            tp = (nu * (1 + rho * k) * SM - (k - nu + rho * k * nM) * SU) / D
            t = tp + rho * u * k
            ok = (nm == m or b[nm] <= t + eps) and t <= b[nm - 1] + eps
            ok = ok and b[nu] <= t + u + eps and (nu == 0 or t + u <= b[nu - 1] + eps)
            if ok:
                return np.clip(a - t, 0.0, u)
    raise AssertionError("exhaustive search found no feasible partition")


def fw_gap(x, a, kind, k=None, r=None, rho=0.0, lo=None, hi=None):
    """Frank-Wolfe gap of x for the projection problem ``kind`` (0 at the optimum).

    Objective ||a - x||^2 + rho <1,x>^2, gradient g = 2(x - a) + 2 rho <1,x>. For
    the cone returns <g,x> in absolute value, or inf when some generator 1_S (|S| = k)
    is a descent direction.
    """
    x = np.asarray(x, float)
    a = np.asarray(a, float)
    g = 2 * (x - a) + 2 * rho * x.sum()
    gs = np.sort(g)
    if kind == "simplex":  # vertices: 0 and (r/k) 1_S, |S| = k
        ymin = min(0.0, r / k * gs[:k].sum())
    elif kind == "box":  # vertices: (r/k) on at most k coordinates
        ymin = r / k * np.minimum(gs[:k], 0.0).sum()
    elif kind == "knapsack":  # greedy: fill the smallest gradients first
        y = np.full(x.size, lo, float)
        left = r - lo * x.size
        for i in np.argsort(g, kind="stable"):
            step = min(hi - lo, left)
            y[i] += step
            left -= step
        ymin = g @ y
    elif kind == "cone":
        if gs[:k].sum() < -1e-9 * k * max(1.0, np.abs(g).max()):
            return np.inf
        return abs(g @ x)
    else:
        raise ValueError(kind)
    return g @ x - ymin


def feasible(x, kind, k=None, r=None, lo=None, hi=None, tol=1e-9):
    """Membership of x in the set ``kind`` up to ``tol`` (relative to max(1, |x|))."""
    x = np.asarray(x, float)
    s = x.sum()
    e = tol * max(1.0, np.abs(x).max(), abs(s))
    if kind == "knapsack":
        return abs(s - r) <= e * x.size and x.min() >= lo - e and x.max() <= hi + e
    ok = x.min() >= -e
    if kind in ("simplex", "cone"):
        ok = ok and x.max() <= s / k + e
    if kind == "box":
        ok = ok and x.max() <= r / k + e
    if kind in ("simplex", "box"):
        ok = ok and s <= r + e * x.size
    return bool(ok)
