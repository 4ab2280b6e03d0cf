"""Tests for svmrank.projections against slow references and the KKT conditions."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import projection_reference as ref
from svmrank import _testing_fast, _topk_fast
from svmrank.projections import (
    project_knapsack,
    project_topk_box,
    project_topk_cone,
    project_topk_simplex,
)

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _scale(*arrays):
    """The problem's own scale (no floor of 1: tiny inputs must not pass vacuously)."""
    return max(float(np.abs(v).max()) for v in arrays) or 1.0


def close(x, y, a, tol=1e-7):
    # (1e-50: the bisection references resolve 2**-200 of their bracket, about [-1, 1])
    np.testing.assert_allclose(x, y, rtol=0, atol=tol * max(_scale(a, y), 1e-50))


def gap_ok(x, a, kind, tol=1e-8, **kw):
    # the gap is <g, x - y> with g of the scale of a and x, y a vertex of the set
    extent = _scale(a, x, *[np.atleast_1d(kw[key]) for key in ("r", "lo", "hi")
                            if kw.get(key) is not None])
    scale = _scale(a, x) * extent * a.size
    gap = ref.fw_gap(x, a, kind, **kw)
    # (subnormal inputs: the gap's own rounding is a few units of the smallest subnormal,
    # which tol * scale underflows below)
    floor = 8 * np.finfo(np.float64).smallest_subnormal
    assert gap <= max(tol * scale, floor), f"Frank-Wolfe gap {gap} for {kind}"
    assert ref.feasible(x, kind, k=kw.get("k"), r=kw.get("r"), lo=kw.get("lo"), hi=kw.get("hi"))


# ------------------------------------------------------------------ strategies
@st.composite
def problems(draw, max_m=25):
    """(a, k, r, rho) with random, tied and shifted vectors."""
    m = draw(st.integers(1, max_m))
    kind = draw(st.sampled_from(["normal", "ties", "huge", "tiny", "shifted", "2k-1"]))
    k = draw(st.integers(1, m))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if kind == "normal":
        a = rng.normal(size=m)
    elif kind == "ties":
        a = rng.choice(draw(st.lists(st.floats(-3, 3), min_size=1, max_size=3)), size=m)
    elif kind == "huge":
        a = rng.normal(size=m)
        a[rng.integers(m)] = draw(st.sampled_from([1e6, -1e6, 1e3]))
    elif kind == "tiny":
        a = rng.normal(size=m) * 1e-6
    elif kind == "shifted":
        a = rng.normal(size=m) + draw(st.floats(-5, 5))
    else:  # exactly 2k-1 positive entries when possible, the rest negative
        a = -np.abs(rng.normal(size=m)) - 0.01
        npos = min(m, 2 * k - 1)
        a[rng.permutation(m)[:npos]] = np.abs(rng.normal(size=npos)) + 0.01
    r = draw(st.sampled_from([1.0, 0.1, 3.0, 50.0]))
    rho = draw(st.sampled_from([0.0, 1.0, 0.25, 1e-3, 10.0]))
    return a, k, r, rho


# ------------------------------------------------------------ property tests
@SETTINGS
@given(problems())
def test_topk_simplex_matches_references(p):
    a, k, r, rho = p
    x = project_topk_simplex(a, k, r, rho)
    close(x, ref.bisect_topk(a, k, rho, r), a)
    close(x, ref.exhaustive_topk(a, k, rho, r), a)
    gap_ok(x, a, "simplex", k=k, r=r, rho=rho)


@SETTINGS
@given(problems())
def test_topk_cone_matches_references(p):
    a, k, _, rho = p
    x = project_topk_cone(a, k, rho)
    close(x, ref.bisect_topk(a, k, rho, None), a)
    close(x, ref.exhaustive_topk(a, k, rho, None), a)
    gap_ok(x, a, "cone", k=k, rho=rho)


@SETTINGS
@given(problems())
def test_topk_box_matches_references(p):
    a, k, r, rho = p
    x = project_topk_box(a, k, r, rho)
    close(x, ref.bisect_box(a, k, r, rho), a)
    gap_ok(x, a, "box", k=k, r=r, rho=rho)


@SETTINGS
@given(problems(), st.floats(-2, 1), st.floats(0, 3), st.floats(0, 1))
def test_knapsack_matches_references(p, lo, width, frac):
    a = p[0]
    hi = lo + width
    r = a.size * (lo + frac * width)
    x = project_knapsack(a, lo, hi, r)
    close(x, ref.bisect_knapsack(a, lo, hi, r), a)
    gap_ok(x, a, "knapsack", lo=lo, hi=hi, r=r)


@SETTINGS
@given(problems(max_m=400))
def test_large_vectors_kkt(p):
    """Longer vectors make the walk grow its sorted prefix several times."""
    a, k, r, rho = p
    gap_ok(project_topk_simplex(a, k, r, rho), a, "simplex", k=k, r=r, rho=rho)
    gap_ok(project_topk_cone(a, k, rho), a, "cone", k=k, rho=rho)
    gap_ok(project_topk_box(a, k, r, rho), a, "box", k=k, r=r, rho=rho)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(0, 2**32 - 1), st.sampled_from([0.0, 1.0]))
def test_generic_qp_small(m, seed, rho):
    """A generic QP solver (scipy SLSQP) agrees on small problems."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(seed)
    a = rng.normal(size=m) + rng.normal()
    k = int(rng.integers(1, m + 1))
    r = 1.0
    # Delta_k(r) as linear inequalities: x >= 0, sum x <= r, sum x - k x_i >= 0
    cons = [{"type": "ineq", "fun": lambda x: r - x.sum(), "jac": lambda x: -np.ones(m)},
            {"type": "ineq", "fun": lambda x: x.sum() - k * x,
             "jac": lambda x: np.ones((m, m)) - k * np.eye(m)}]
    obj = lambda x: np.sum((a - x) ** 2) + rho * x.sum() ** 2
    jac = lambda x: 2 * (x - a) + 2 * rho * x.sum()
    res = minimize(obj, np.full(m, r / (2 * m)), jac=jac, bounds=[(0, None)] * m,
                   constraints=cons, method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
    x = project_topk_simplex(a, k, r, rho)
    assert obj(x) <= res.fun + 1e-9
    close(x, res.x, a, tol=1e-4)


# ------------------------------------------------------------- edge cases
@pytest.mark.parametrize("rho", [0.0, 1.0])
@pytest.mark.parametrize("k", [1, 3, 7])
def test_exactly_2k_minus_1_positive(k, rho):
    m = 20
    a = -np.ones(m)
    a[: 2 * k - 1] = np.linspace(2.0, 1.0, 2 * k - 1)
    for r in (0.5, 100.0):
        x = project_topk_simplex(a, k, r, rho)
        close(x, ref.exhaustive_topk(a, k, rho, r), a)
        gap_ok(x, a, "simplex", k=k, r=r, rho=rho)
    close(project_topk_cone(a, k, rho), ref.exhaustive_topk(a, k, rho), a)


@pytest.mark.parametrize("m,k", [(1, 1), (5, 1), (5, 5), (10, 4)])
def test_all_equal(m, k):
    for c in (-1.0, 0.0, 0.3, 5.0):
        a = np.full(m, c)
        for rho in (0.0, 1.0):
            x = project_topk_cone(a, k, rho)
            np.testing.assert_allclose(x, np.full(m, max(c, 0.0) / (1 + rho * m)), atol=1e-12)
            x = project_topk_simplex(a, k, 1.0, rho)
            expect = min(max(c, 0.0) / (1 + rho * m), 1.0 / m)
            np.testing.assert_allclose(x, np.full(m, expect), atol=1e-12)


def test_one_huge_entry():
    a = np.zeros(50)
    a[7] = 1e8
    x = project_topk_simplex(a, 5, 1.0, 1.0)
    # the cap x_i <= <1,x>/k with <1,x> = r forces the top entry to r/k
    assert x[7] == pytest.approx(0.2) and x.sum() == pytest.approx(1.0)
    gap_ok(x, a, "simplex", k=5, r=1.0, rho=1.0)
    x = project_topk_cone(a, 1, 0.0)
    assert x[7] == pytest.approx(1e8) and np.count_nonzero(x) == 1


def test_all_negative_gives_zero():
    a = -np.arange(1.0, 11.0)
    for k in (1, 5, 10):
        assert not project_topk_simplex(a, k, 1.0, 1.0).any()
        assert not project_topk_cone(a, k).any()
        assert not project_topk_box(a, k, 1.0, 1.0).any()


def test_cone_zero_iff_topk_sum_nonpositive():
    # Lemma 4's condition is also necessary for rho > 0 (the bias has zero gradient at 0)
    a = np.array([3.0, -1.0, -1.0, -1.5])
    assert not project_topk_cone(a, 4, 5.0).any()  # 3-1-1-1.5 < 0
    assert project_topk_cone(a, 3, 5.0).any()  # 3-1-1 > 0


def test_k_equals_m_is_constant_vector():
    rng = np.random.default_rng(3)
    a = rng.normal(size=9) + 0.5
    x = project_topk_simplex(a, 9, 1.0, 0.0)
    np.testing.assert_allclose(x, np.full(9, min(max(a.mean(), 0), 1 / 9)), atol=1e-12)


def test_rho_zero_box_is_clip_when_budget_slack():
    a = np.array([0.1, -0.2, 0.05, 0.3])
    np.testing.assert_allclose(project_topk_box(a, 2, 10.0, 0.0), np.clip(a, 0, 5.0))


def test_all_active_long_vector():
    """Every entry in M: the walk sorts the whole vector (largest sort-and-search case)."""
    rng = np.random.default_rng(5)
    m = 3000
    a = 0.5 + 0.5 / (10 * m) * rng.normal(size=m)  # spread << mean/(rho m): all in M
    for k in (1, 10, 1000):
        x = project_topk_simplex(a, k, 1.0, 1.0)
        assert np.count_nonzero(x) == m and x.sum() < 1.0
        close(x, ref.bisect_topk(a, k, 1.0, 1.0), a)
        gap_ok(x, a, "simplex", k=k, r=1.0, rho=1.0)


def _long_inputs(rng, m):
    z = rng.normal(size=m)
    huge = z.copy()
    huge[:3] = 1e6
    return {"normal": z, "up": z + 2, "down": z - 2, "small": 0.1 * z,
            "all-active": 0.5 + 0.05 / m * z, "ties": np.round(z * 2) / 2,
            "cauchy": rng.standard_cauchy(m), "huge": huge, "sorted": np.sort(z)}


@pytest.mark.parametrize("m", [700, 5000])
def test_long_vectors_match_bisection(m):
    """Long vectors take the sampled-bracket root and the bucketed walk with jumps."""
    rng = np.random.default_rng(m)
    for name, a in _long_inputs(rng, m).items():
        for k in (1, 5, 100, m - 1, m):
            for rho in (0.0, 1.0):
                x = project_topk_simplex(a, k, 1.0, rho)
                gap_ok(x, a, "simplex", k=k, r=1.0, rho=rho)
                if name in ("normal", "small", "all-active", "ties") and k in (5, 100):
                    close(x, ref.bisect_topk(a, k, rho, 1.0), a)
                    close(project_topk_cone(a, k, rho), ref.bisect_topk(a, k, rho, None), a)
                    close(project_topk_box(a, k, 1.0, rho), ref.bisect_box(a, k, 1.0, rho), a)
                gap_ok(project_topk_cone(a, k, rho), a, "cone", k=k, rho=rho)
                gap_ok(project_topk_box(a, k, 1.0, rho), a, "box", k=k, r=1.0, rho=rho)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1e3])
def test_sampled_bracket_root_vs_sorted(alpha):
    rng = np.random.default_rng(7)
    for m in (600, 3000, 20000):
        for name, a in _long_inputs(rng, m).items():
            for lo, hi in ((0.0, 1.0 / 1000), (0.0, 0.2), (-1.0, 2.0)):
                for frac in (0.001, 0.3, 0.999):
                    r = m * (lo + frac * (hi - lo)) if alpha == 0 else frac - 0.5
                    t_fast = _testing_fast.clip_root_filtered(a, lo, hi, r, alpha)
                    t_sort = _testing_fast.clip_root(a, lo, hi, r, alpha, 0)
                    np.testing.assert_allclose(np.clip(a - t_fast, lo, hi),
                                               np.clip(a - t_sort, lo, hi),
                                               atol=1e-9 * max(1.0, np.abs(a).max()),
                                               err_msg=f"{name} m={m} lo={lo} hi={hi} r={r}")


def test_cone_walk_hook_matches_exhaustive():
    rng = np.random.default_rng(11)
    for _ in range(30):
        m = int(rng.integers(70, 300))  # more than 64 values: bucketed stream
        a = rng.normal(size=m) * rng.choice([1e-3, 1.0]) + rng.choice([0.0, 0.5, -1.0])
        k = int(rng.integers(1, m + 1))
        rho = float(rng.choice([0.0, 1.0]))
        t, u = _testing_fast.cone_thresholds(a, k, rho)
        close(np.clip(a - t, 0.0, u), ref.exhaustive_topk(a, k, rho), a)


# ----------------------------------------------------------- kernel pieces
def test_sort_hook():
    rng = np.random.default_rng(0)
    for m in (1, 2, 23, 24, 25, 1000, 5000):
        for a in (rng.normal(size=m), np.round(rng.normal(size=m)), np.arange(m, dtype=float),
                  np.arange(m, 0, -1.0), np.zeros(m)):
            np.testing.assert_array_equal(_testing_fast.sort_desc(a), np.sort(a)[::-1])


@pytest.mark.parametrize("alpha", [0.0, 2.0])
def test_variable_fixing_vs_sorted_fallback(alpha):
    rng = np.random.default_rng(1)
    for m in (1, 5, 300):
        for _ in range(20):
            a = rng.normal(size=m)
            if rng.random() < 0.3:
                a = np.round(a)
            lo, hi = sorted(rng.normal(size=2))
            r = rng.uniform(m * lo, m * hi)
            t_fix = _testing_fast.clip_root(a, lo, hi, r, alpha, 1000)
            t_sort = _testing_fast.clip_root(a, lo, hi, r, alpha, 0)  # forced fallback
            for t in (t_fix, t_sort):
                assert np.clip(a - t, lo, hi).sum() == pytest.approx(r + alpha * t, abs=1e-9)
            np.testing.assert_allclose(np.clip(a - t_fix, lo, hi), np.clip(a - t_sort, lo, hi),
                                       atol=1e-10)


def test_knapsack_array_bounds():
    rng = np.random.default_rng(2)
    for _ in range(50):
        m = int(rng.integers(1, 30))
        a = rng.normal(size=m)
        lo = rng.uniform(-1, 0, size=m)
        hi = lo + rng.uniform(0, 1, size=m) * (rng.random(m) < 0.8)
        r = rng.uniform(lo.sum(), hi.sum())
        x = project_knapsack(a, lo, hi, r)
        assert x.sum() == pytest.approx(r, abs=1e-9)
        assert np.all(x >= lo) and np.all(x <= hi)
        g = 2 * (x - a)
        y, left = lo.copy(), r - lo.sum()
        for j in np.argsort(g, kind="stable"):
            y[j] += min(hi[j] - lo[j], left)
            left -= hi[j] - lo[j] if left > hi[j] - lo[j] else left
        assert g @ x - g @ y <= 1e-9
    # scalar bounds agree with the array path
    a = rng.normal(size=40)
    close(project_knapsack(a, 0.0, 0.1, 1.0),
          project_knapsack(a, np.zeros(40), np.full(40, 0.1), 1.0), a)


def test_knapsack_array_bounds_with_one_huge_bound():
    """A large finite bound (the way to say "unbounded") used to swamp the others in a
    running sum of slopes: the sum constraint failed by eps * bound."""
    rng = np.random.default_rng(3)
    for big in (1e8, 1e14, 1e17, 1e300):
        a = np.array([3.0, -1.0, 0.5])
        x = project_knapsack(a, [-big, 0, 0], [big, 2, 3], 2.0)
        np.testing.assert_allclose(x, [2.0, 0.0, 0.0], atol=1e-12)
        for _ in range(20):
            m = int(rng.integers(2, 12))
            a = rng.normal(size=m)
            lo, hi = np.zeros(m), rng.uniform(0, 1, size=m)
            k = int(rng.integers(m))
            lo[k], hi[k] = -big, big
            r = rng.uniform(-1, 1)
            x = project_knapsack(a, lo, hi, r)
            assert abs(x.sum() - r) <= 1e-12 * max(1.0, np.abs(x).max())
            assert np.all(x >= lo) and np.all(x <= hi)


def test_knapsack_extreme_budgets():
    a = np.array([3.0, -1.0, 0.5])
    np.testing.assert_allclose(project_knapsack(a, 0.0, 1.0, 3.0), np.ones(3))
    np.testing.assert_allclose(project_knapsack(a, -2.0, 1.0, -6.0), np.full(3, -2.0))
    np.testing.assert_allclose(project_knapsack(a, 0.5, 0.5, 1.5), np.full(3, 0.5))


@pytest.mark.parametrize("exponent", [-1060, -1000, -340, 340, 900, 1000])
@pytest.mark.parametrize("m", [2, 200, 1000])
def test_every_projection_is_homogeneous_at_extreme_scales(exponent, m):
    """P(c a, c r) = c P(a, r) for c = 2**e. The kernels' sums and cross-products
    overflowed near 1e300 (the cone was off by 0.46 at m = 1000, and [1e308, 1e308]
    projected to 0), and their bucket widths underflowed near 1e-307 (the simplex sum
    was 14.5 r at m = 200). Subnormal results keep fewer bits (e = -1060)."""
    rng = np.random.default_rng(m)
    a = rng.normal(size=m)
    a[: m // 4] = a[m // 4: 2 * (m // 4)]  # ties
    k, r = max(1, m // 4), 3.0
    lo, hi, rk = -0.5, 1.0, 0.25 * m
    # (an int argument is k; the others scale with a)
    calls = [(project_topk_simplex, (k, r)), (project_topk_cone, (k,)),
             (project_topk_box, (k, r)), (project_knapsack, (lo, hi, rk)),
             (project_knapsack, (np.full(m, lo), np.full(m, hi), rk))]
    tol = 1e-12 if exponent > -1000 else 2.0 ** -12  # (subnormal inputs keep ~16 bits)
    for project, args in calls:
        x0 = project(a, *args)
        x = project(np.ldexp(a, exponent),
                    *[v if isinstance(v, int) else np.ldexp(v, exponent) for v in args])
        assert np.all(np.isfinite(x))
        np.testing.assert_allclose(np.ldexp(x, -exponent), x0, rtol=0,
                                   atol=tol * np.abs(a).max(), err_msg=project.__name__)
    # sums of entries near the largest double
    np.testing.assert_array_equal(project_topk_cone([1e308, 1e308], 1), [1e308, 1e308])
    np.testing.assert_allclose(project_topk_simplex([1e308, 1e308], 1, r=1e308), [5e307, 5e307])
    np.testing.assert_allclose(project_knapsack([1e308, 1e308], 0.0, 1e308, 1e308), [5e307, 5e307])


# ------------------------------------------------------------- validation
@pytest.mark.parametrize("call,match", [
    (lambda: project_topk_simplex([1.0, np.nan], 1), "^a: "),
    (lambda: project_topk_simplex([[1.0, 2.0]], 1), "^a: "),
    (lambda: project_topk_simplex([], 1), "^a: "),
    (lambda: project_topk_simplex([1.0, 2.0], 0), "^k "),
    (lambda: project_topk_simplex([1.0, 2.0], 3), "^k "),
    (lambda: project_topk_simplex([1.0, 2.0], 1.5), "^k "),
    (lambda: project_topk_simplex([1.0, 2.0], 1, r=0.0), "^r "),
    (lambda: project_topk_simplex([1.0, 2.0], 1, rho=-1.0), "^rho "),
    (lambda: project_topk_cone([1.0, 2.0], 1, rho=np.inf), "^rho "),
    (lambda: project_topk_box([1.0, 2.0], 1, r=-1.0), "^r "),
    (lambda: project_knapsack([1.0, 2.0], 1.0, 0.0, 1.0), "^lo "),
    (lambda: project_knapsack([1.0, 2.0], 0.0, 1.0, 3.0), "^r="),
    (lambda: project_knapsack([1.0, 2.0], 0.0, np.nan, 1.0), "^hi "),
    (lambda: project_knapsack([1.0, 2.0], [0.0, 2.0], [1.0, 1.0], 1.0), "^lo "),
    (lambda: project_knapsack([1.0, 2.0], [0.0] * 3, [1.0, 1.0], 1.0), "^lo: "),
])
def test_validation_errors(call, match):
    with pytest.raises(ValueError, match=match) as info:
        call()
    assert "\n" not in str(info.value)


def test_returns_new_array():
    a = np.array([0.5, 0.2, -0.1])
    x = project_topk_simplex(a, 1)
    assert x is not a and a[0] == 0.5
    assert x.dtype == np.float64


# ------------------------------------------------ sampled filter (knapsack case)
def _filter_inputs(rng, m):
    z = rng.normal(size=m)
    huge = z.copy()
    huge[rng.integers(m)] = 1e6
    return {"normal": z, "shifted": z + 2, "small": 0.1 * z, "ties": np.round(z),
            "few values": rng.choice([-1.0, 0.0, 2.5], size=m), "huge": huge,
            "tiny": 1e-9 * z, "exp": rng.exponential(size=m), "sorted": np.sort(z)}


@pytest.mark.parametrize("m", [127, 128, 129, 1000, 1023, 1024, 1025, 4000])
def test_filter_path_matches_reference(m):
    """Sizes around the filter's threshold (128) and the wrapper's stack scratch (1024)."""
    rng = np.random.default_rng(m)
    for name, a in _filter_inputs(rng, m).items():
        for k in (1, 5, 100):
            for rho in (0.0, 1.0):
                x = project_topk_simplex(a, k, 1.0, rho)
                gap_ok(x, a, "simplex", k=k, r=1.0, rho=rho)
                if m <= 1024 and k == 5 and name != "huge":
                    close(x, ref.bisect_topk(a, k, rho, 1.0), a)
            u = 1.0 / k
            close(project_knapsack(a, 0.0, u, 1.0), ref.bisect_knapsack(a, 0.0, u, 1.0), a)
            gap_ok(project_topk_box(a, k, 1.0, 1.0), a, "box", k=k, r=1.0, rho=1.0)


@pytest.mark.parametrize("m", [128, 129, 1000, 5000])
def test_filter_root_hook_vs_sorted(m):
    """When the filter answers, its root and kept count agree with the sorted root."""
    rng = np.random.default_rng(m + 1)
    answered = 0
    for name, a in _filter_inputs(rng, m).items():
        for lo, hi in ((0.0, 1.0), (0.0, 0.01), (-1.0, 2.0)):
            for frac in (0.001, 0.01, 0.3):
                r = m * (lo + frac * (hi - lo))
                t, kept = _testing_fast.filter_root(a, lo, hi, r)
                if np.isnan(t):
                    continue
                answered += 1
                t_sort = _testing_fast.clip_root(a, lo, hi, r, 0.0, 0)
                np.testing.assert_allclose(np.clip(a - t, lo, hi), np.clip(a - t_sort, lo, hi),
                                           atol=1e-9 * max(1.0, np.abs(a).max()),
                                           err_msg=f"{name} lo={lo} hi={hi} r={r}")
                # every value outside the kept set is at its lower bound
                assert kept >= np.count_nonzero(a - t > lo)
    assert answered >= 20


def test_filter_guess_failure_falls_back():
    """A sample that sees only the large values overestimates the root: the exact check
    rejects the guess and the projections still come out right."""
    m = 10000
    step = int(np.sqrt(m)) // 2  # the filter's sample stride for a budget of many values
    a = np.zeros(m)
    a[::step] = 10.0
    lo, hi, r = 0.0, 1.0, 100.0  # half of the 200 tens must be off lo
    t, _ = _testing_fast.filter_root(a, lo, hi, r)
    assert np.isnan(t)
    close(project_knapsack(a, lo, hi, r), ref.bisect_knapsack(a, lo, hi, r), a)
    k = 100  # r = 1, u = 1/k: the same shape, scaled
    x = project_topk_simplex(a, k, 1.0, 1.0)
    gap_ok(x, a, "simplex", k=k, r=1.0, rho=1.0)
    close(x, ref.bisect_topk(a, k, 1.0, 1.0), a)


def _adversarial(rng, m, kind):
    """N(0,1) scores made adversarial: ties, a large shift, one huge value, tiny values,
    heavy tails or two levels."""
    a = rng.normal(size=m)
    if kind == "ties":
        a = np.round(a, 1)
    elif kind == "shifted":
        a += rng.uniform(-1e4, 1e4)
    elif kind == "huge":
        a[rng.integers(m)] = 1e7
    elif kind == "tiny":
        a *= 1e-8
    elif kind == "cauchy":
        a = rng.standard_cauchy(m)
    elif kind == "two-level":
        a = np.where(rng.random(m) < 0.2, 1.0, -1.0)
    return a


@SETTINGS
@given(st.integers(120, 400), st.sampled_from(["normal", "ties", "shifted", "huge", "tiny"]),
       st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 7, 30]))
def test_filter_path_property(m, kind, seed, k):
    rng = np.random.default_rng(seed)
    a = _adversarial(rng, m, kind)
    x = project_topk_simplex(a, k, 1.0, 1.0)
    gap_ok(x, a, "simplex", k=k, r=1.0, rho=1.0)
    close(project_knapsack(a, 0.0, 1.0 / k, 1.0), ref.bisect_knapsack(a, 0.0, 1.0 / k, 1.0), a)


# --------------------------------------- bucketed root on the filter's kept values
def _bucket_inputs(rng, m):
    z = rng.normal(size=m)
    return {"normal": z, "ties": np.round(z * 2) / 2, "shifted": z + 1e6, "tiny": 1e-9 * z,
            "huge": np.where(np.arange(m) == 0, 1e6, z), "cauchy": rng.standard_cauchy(m),
            "exp": rng.exponential(size=m), "sorted": np.sort(z), "arange": np.arange(m) * 1.0}


def _check_bucket_root(a, tl, lo, hi, r):
    """Run the hook; when it answers, compare with the bisection reference (independent
    of the kernel). Returns the status."""
    status, t, p = _testing_fast.bucket_root(a, tl, lo, hi, r)
    scale = max(1.0, float(np.abs(a).max()))
    if status == 0:
        np.testing.assert_allclose(np.clip(a - t, lo, hi), ref.bisect_knapsack(a, lo, hi, r),
                                   atol=1e-9 * scale, err_msg=f"lo={lo} hi={hi} r={r} tl={tl}")
        assert p == pytest.approx(np.maximum(a - t - hi, 0.0).sum(), abs=1e-9 * scale * a.size)
    elif status == 1:  # only when the guess is above the root: F(tl) < 0
        assert np.clip(a - tl, lo, hi).sum() - r <= 1e-9 * scale * a.size
    return status


@pytest.mark.parametrize("m", [60, 128, 1000, 6000])
def test_bucket_root_hook_vs_sorted(m):
    """Guesses tl at, below and above the root, for several box widths (q = 1 and q > 1)."""
    rng = np.random.default_rng(m + 2)
    seen = set()
    for name, a in _bucket_inputs(rng, m).items():
        for lo, hi in ((0.0, 1.0), (0.0, 0.01), (-1.0, 2.0), (0.3, 0.3 + 1e-3)):
            for frac in (0.01, 0.1, 0.4):
                r = m * (lo + frac * (hi - lo))
                t_sort = _testing_fast.clip_root(a, lo, hi, r, 0.0, 0)
                for delta in (0.0, 0.5, 3.0, 50.0, -0.5):
                    seen.add(_check_bucket_root(a, t_sort - delta * (hi - lo), lo, hi, r))
    assert seen == {0, 1, 2}


def test_bucket_root_declines_and_filter_falls_back():
    """The two ways the bucketed root declines (root beyond the grid, too many values
    in the two buckets that change state), through the hook and through the filter."""
    m, k = 1000, 100  # u = 0.01, spacing 1: the grid (q = 1) reaches tl + 1.26 only
    a = np.arange(m) * 1.0
    t_sort = _testing_fast.clip_root(a, 0.0, 0.01, 1.0, 0.0, 0)
    assert _check_bucket_root(a, t_sort - 100.0, 0.0, 0.01, 1.0) == 2
    assert _check_bucket_root(a, t_sort - 1.0, 0.0, 0.01, 1.0) == 0
    near = np.full(m, -3.0)
    near[:99] = 5.0  # at the bound; the last 1% of the budget is shared by 150 values
    near[99:249] = 1.0 + 1e-4 * np.linspace(0.0, 1.0, 150)  # in one bucket, leaving lo
    t_sort = _testing_fast.clip_root(near, 0.0, 0.01, 1.0, 0.0, 0)
    for delta in (0.5, 0.001):
        assert _check_bucket_root(near, t_sort - delta, 0.0, 0.01, 1.0) == 2
    t, kept = _testing_fast.filter_root(near, 0.0, 0.01, 1.0)
    assert kept == 249 and t == pytest.approx(t_sort, abs=1e-12)
    for b in (a, near, np.random.default_rng(3).permutation(a)):
        x = project_topk_simplex(b, k, 1.0, 1.0)
        close(x, ref.bisect_topk(b, k, 1.0, 1.0), b)
        gap_ok(x, b, "simplex", k=k, r=1.0, rho=1.0)
        close(project_knapsack(b, 0.0, 0.01, 1.0), ref.bisect_knapsack(b, 0.0, 0.01, 1.0), b)


def test_filter_kept_sizes_around_bucket_threshold():
    """Kept sets just below and above 48 values (variable fixing / buckets) agree with the
    sorted root."""
    rng = np.random.default_rng(17)
    kept_sizes = []
    for m in (128, 129, 200, 400, 1000):
        for c in range(8, 40, 3):  # about c values off their lower bound
            for a in (rng.normal(size=m), rng.normal(size=m) + 3.0, np.round(rng.normal(size=m), 1)):
                lo, hi = 0.0, 1.0 / c
                t, kept = _testing_fast.filter_root(a, lo, hi, 1.0)
                if np.isnan(t):
                    continue
                kept_sizes.append(kept)
                t_sort = _testing_fast.clip_root(a, lo, hi, 1.0, 0.0, 0)
                np.testing.assert_allclose(np.clip(a - t, lo, hi), np.clip(a - t_sort, lo, hi),
                                           atol=1e-9 * max(1.0, np.abs(a).max()))
                x = project_topk_simplex(a, c, 1.0, 1.0)
                gap_ok(x, a, "simplex", k=c, r=1.0, rho=1.0)
    kept_sizes = np.array(kept_sizes)
    assert np.any((kept_sizes >= 40) & (kept_sizes < 48))
    assert np.any((kept_sizes >= 48) & (kept_sizes < 56))


@SETTINGS
@given(st.integers(48, 3000), st.sampled_from(["normal", "ties", "shifted", "huge", "tiny",
                                               "cauchy", "two-level"]),
       st.integers(0, 2**32 - 1), st.sampled_from([0.0, 0.3, 3.0, 30.0]),
       st.sampled_from([(0.0, 1.0), (0.0, 1e-3), (-0.5, 0.5)]), st.sampled_from([0.01, 0.2]))
def test_bucket_root_property(m, kind, seed, delta, box, frac):
    rng = np.random.default_rng(seed)
    a = _adversarial(rng, m, kind)
    lo, hi = box
    r = m * (lo + frac * (hi - lo))
    t_sort = _testing_fast.clip_root(a, lo, hi, r, 0.0, 0)
    _check_bucket_root(a, t_sort - delta * (hi - lo), lo, hi, r)


@pytest.mark.parametrize("offset", [1e6, 1e10, 1e16, -1e16])
@pytest.mark.parametrize("m", [2, 50, 300])
def test_a_budget_far_below_the_entries(offset, m):
    """Entries of size 1e16 and a budget of 1: the knapsack root t ~ 1e16 carried an
    error as large as x, and [1e16, 5e15] with r = 1 projected to [0, 0] (Prox-SDCA
    then never converged when one example had a norm of 1e-12). The budget-bound
    projection is shift-invariant, so the reference solves it on a - max(a)."""
    rng = np.random.default_rng(m)
    a = offset + rng.normal(size=m) * 0.5
    a[0] = offset + 1.0  # (one clear top entry)
    k, r = max(1, m // 10), 1.0
    u = r / k
    expected = ref.bisect_knapsack(a - a.max(), 0.0, u, r)
    close(project_knapsack(a, 0.0, u, r), expected, expected)
    close(project_knapsack(a, np.zeros(m), np.full(m, u), r), expected, expected)
    if offset > 0:  # (the budget binds: t >> rho r)
        close(project_topk_simplex(a, k, r, 1.0), expected, expected)
        close(project_topk_box(a, k, r, 1.0), expected, expected)
    np.testing.assert_array_equal(project_knapsack([1e16, 5e15], 0.0, 1.0, 1.0), [1.0, 0.0])
    np.testing.assert_array_equal(project_topk_simplex([1e16, 5e15], 1, 1.0, 1.0), [1.0, 0.0])


def test_budgets_and_bounds_far_from_the_entries():
    """The power-of-two scaling follows the entries, not a budget of another size
    (r = 1e300 pushed a = 1e-20 into subnormals; a bound that underflowed in the
    scaled problem came back as 6.6e-24 > hi)."""
    np.testing.assert_allclose(project_topk_simplex([1e-20, 3e-20, 2e-20], 2, r=1e300),
                               [1e-20, 3e-20, 2e-20], rtol=1e-15)
    np.testing.assert_array_equal(project_topk_simplex([3e-300, 1e-300], 1, r=1e40), [3e-300, 1e-300])
    np.testing.assert_array_equal(project_topk_box([3e-300, 1e-300], 1, r=1e40), [3e-300, 1e-300])
    np.testing.assert_array_equal(project_topk_simplex([3e300, 1e300], 1, r=1e-300), [0.0, 0.0])
    x = project_knapsack([1e300, 0.0], 0.0, [1e-300, 1e300], 1.0)
    assert x[0] <= 1e-300 and x[1] == 1.0
    assert project_knapsack([1e300, 0.0], 0.0, 1e-300, 1e-300).max() <= 1e-300


def test_entries_near_the_largest_double_beside_small_ones():
    """Scaled to max|a| ~ 1, entries of 1 beside -1e308 became subnormal, with a box
    width of 2**-1024; the bucket root then cast an infinite bucket index to an integer
    (undefined behaviour, found by UBSan) and put every value in bucket 0: the sum came
    out 96.4 instead of r = 50. The kernel now declines such a width (the sorted
    root takes over)."""
    a = np.r_[np.full(200, -1e308), np.ones(100)]
    expected = np.r_[np.zeros(200), np.full(100, 0.5)]
    close(project_knapsack(a, 0.0, 1.0, 50.0), expected, expected, tol=1e-14)
    close(project_knapsack(a, np.zeros(300), np.ones(300), 50.0), expected, expected, tol=1e-14)
    expected = np.r_[np.zeros(200), np.full(100, 0.05)]
    for project in (project_topk_simplex, project_topk_box):
        close(project(a, 10, 5.0), expected, expected, tol=1e-14)
    # the kernel itself, given the subnormal width: it declines (2) or is right
    u = 2.0 ** -1024
    a = np.r_[np.full(200, -0.5), np.full(100, u)]
    for tl in (0.0, 0.25 * u, -u):
        status, t, _ = _testing_fast.bucket_root(a, tl, 0.0, u, 50 * u)
        assert status == 2 or np.clip(a - t, 0.0, u).sum() == 50 * u
    assert _topk_fast.knapsack(a, 0.0, u, 50 * u).sum() == 50 * u
