"""The active-set dual QP against a generic solver, its NumPy reference and its KKT
conditions."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from qp_reference import reference_dual_qp
from svmrank import APSVM
from svmrank.learners.qp import QPError, solve_dual_qp


def reference_qp(G, b, capped, C):
    """Best of a few SLSQP runs on the same dual (slow, generic)."""
    f = lambda z: -(b @ z - 0.5 * z @ G @ z)
    jac = lambda z: -(b - G @ z)
    cons = [{"type": "ineq", "fun": lambda z: C - z[capped].sum(),
             "jac": lambda z: -capped.astype(float)}]
    best = np.inf
    for start in (np.zeros(len(b)), np.full(len(b), C / len(b))):
        res = minimize(f, start, jac=jac, bounds=[(0, None)] * len(b), constraints=cons,
                       method="SLSQP", options={"ftol": 1e-15, "maxiter": 2000})
        best = min(best, res.fun)
    return -best


def random_feasible_problem(rng, n_planes, n_hard, d):
    """Planes with random right-hand sides plus hard rows a·w ≥ b satisfied by some w."""
    V = rng.normal(size=(n_planes + n_hard, d))
    if rng.random() < 0.3:  # rank-deficient Gram: repeated and parallel vectors
        V[: n_planes // 2] = V[0] * rng.uniform(0.5, 2, size=(n_planes // 2, 1))
    w_feasible = rng.normal(size=d)
    b = np.concatenate([rng.uniform(0, 2, n_planes),
                        V[n_planes:] @ w_feasible - rng.uniform(0, 1, n_hard)])
    capped = np.arange(n_planes + n_hard) < n_planes
    return V @ V.T, b, capped


@pytest.mark.parametrize("seed", range(60))
def test_matches_generic_solver_and_kkt(seed):
    rng = np.random.default_rng(seed)
    G, b, capped, = random_feasible_problem(rng, rng.integers(1, 12), rng.integers(0, 5), rng.integers(1, 8))
    C = float(rng.choice([1e-3, 0.5, 10.0, 1e4]))
    z, cap_mult = solve_dual_qp(G, b, capped, C)
    value = b @ z - 0.5 * z @ G @ z
    assert value >= reference_qp(G, b, capped, C) - 1e-7 * (1 + abs(value))
    # KKT: feasibility, complementary slackness, stationarity
    grad = b - G @ z
    tol = 1e-7 * (1 + np.abs(b).max() + np.abs(G).max() * max(1, z.max()))
    assert z.min() >= 0 and z[capped].sum() <= C * (1 + 1e-12)
    assert cap_mult >= -tol
    expected = grad - cap_mult * capped  # = -mu <= 0, = 0 where z > 0
    assert np.all(expected <= tol)
    assert np.all(np.abs(expected[z > 1e-9 * max(1, C)]) <= tol)


def test_warm_start_gives_the_same_optimum():
    rng = np.random.default_rng(5)
    G, b, capped = random_feasible_problem(rng, 10, 3, 6)
    cold, _ = solve_dual_qp(G, b, capped, 2.0)
    warm, _ = solve_dual_qp(G, b, capped, 2.0, z0=rng.uniform(0, 5, size=len(b)))
    f = lambda z: b @ z - 0.5 * z @ G @ z
    assert f(warm) == pytest.approx(f(cold), rel=1e-10, abs=1e-12)


def test_infeasible_hard_constraints_raise():
    # w ≥ 1 and -w ≥ 0 cannot both hold
    G = np.array([[1.0, -1.0], [-1.0, 1.0]])
    with pytest.raises(QPError, match="cannot all be satisfied"):
        solve_dual_qp(G, np.array([1.0, 0.0]), np.array([False, False]), 1.0)


def test_empty_problem():
    z, mult = solve_dual_qp(np.zeros((0, 0)), np.zeros(0), np.zeros(0, bool), 1.0)
    assert z.size == 0 and mult == 0.0


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_planes=st.integers(1, 25), n_hard=st.integers(0, 6),
       d=st.integers(1, 10), C=st.sampled_from([1e-8, 1e-3, 1.0, 1e3, 1e8]),
       b_scale=st.sampled_from([1e-6, 1.0, 1e6]), warm=st.booleans())
def test_kernel_matches_numpy_reference(seed, n_planes, n_hard, d, C, b_scale, warm):
    """The Cython active set against its NumPy twin (tests/qp_reference.py): same
    optimum on random, rank-deficient, tiny- and huge-scale problems, warm or cold."""
    rng = np.random.default_rng(seed)
    G, b, capped = random_feasible_problem(rng, n_planes, n_hard, d)
    b = b * b_scale
    z0 = rng.uniform(0, 2 * C, size=len(b)) * (rng.random(len(b)) < 0.5) if warm else None
    z, lam = solve_dual_qp(G, b, capped, C, z0=z0)
    z_ref, lam_ref = reference_dual_qp(G, b, capped, C, z0=z0)
    f = lambda v: b @ v - 0.5 * v @ G @ v
    zmax = max(1.0, z_ref.max(), z.max())
    # relative agreement, plus the rounding of ½ zᵀGz at the solution (a nearly
    # unbounded dual); a warm start far above it must not loosen this
    tol = 1e-9 * (1 + abs(f(z_ref)) + np.abs(b).max() * zmax) + 1e-13 * np.abs(G).max() * zmax**2
    assert abs(f(z) - f(z_ref)) <= tol
    # the cap holds to rounding relative to the largest variable (hard rows may be large)
    assert z.min() >= 0 and z[capped].sum() <= C * (1 + 1e-12) + 1e-14 * z.max()
    assert lam == pytest.approx(lam_ref, rel=1e-6,
                                abs=1e-9 * (1 + np.abs(b).max()) + 1e-13 * np.abs(G).max() * zmax)


def test_ties_and_duplicate_planes():
    """Identical planes (a singular Gram) split the cap but keep the optimum."""
    v = np.array([[1.0, 2.0]] * 4 + [[0.0, 1.0]])
    G, b, capped = v @ v.T, np.array([1.0, 1.0, 1.0, 1.0, 0.5]), np.ones(5, bool)
    z, _ = solve_dual_qp(G, b, capped, 10.0)
    z_ref, _ = reference_dual_qp(G, b, capped, 10.0)
    f = lambda u: b @ u - 0.5 * u @ G @ u
    assert f(z) == pytest.approx(f(z_ref), rel=1e-12)


def test_iteration_cap_raises():
    rng = np.random.default_rng(1)
    G, b, capped = random_feasible_problem(rng, 20, 0, 20)
    with pytest.raises(QPError, match="did not converge"):
        solve_dual_qp(G, b, capped, 1e3, max_iter=1)


@pytest.mark.parametrize("seed", range(3))
def test_many_hard_rows_match_reference(seed):
    """Hundreds of hard rows entering one by one (APPX's easy samples): the kernel's
    running gradient stays exact enough over hundreds of active-set steps."""
    rng = np.random.default_rng(seed)
    G, b, capped = random_feasible_problem(rng, 20, 300, 40)
    z, lam = solve_dual_qp(G, b, capped, 50.0)
    z_ref, lam_ref = reference_dual_qp(G, b, capped, 50.0)
    f = lambda v: b @ v - 0.5 * v @ G @ v
    assert f(z) == pytest.approx(f(z_ref), rel=1e-9, abs=1e-9)
    assert lam == pytest.approx(lam_ref, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6, 1e10])
def test_optimum_follows_the_feature_scale(scale):
    """Features scaled by s scale G by s² and the optimum by 1/s² (the cap does not
    bind): no tolerance may be absolute. A floor of 1 on |z| once made z = 0 look
    optimal when ‖g‖² > 1e12 (the learner then returned w = 0)."""
    rng = np.random.default_rng(0)
    V = rng.normal(size=(6, 4))
    b, capped = rng.uniform(0.1, 1.0, size=6), np.ones(6, bool)
    z1, _ = solve_dual_qp(V @ V.T, b, capped, 1e30)
    zs, _ = solve_dual_qp((V @ V.T) * scale**2, b, capped, 1e30)
    zr, _ = reference_dual_qp((V @ V.T) * scale**2, b, capped, 1e30)
    assert z1.max() > 0
    np.testing.assert_allclose(zs * scale**2, z1, rtol=1e-7, atol=1e-9 * z1.max())
    np.testing.assert_allclose(zr * scale**2, z1, rtol=1e-7, atol=1e-9 * z1.max())
    z, _ = solve_dual_qp(np.array([[1e12]]), np.array([0.7]), np.array([True]), 1.0)
    assert z[0] == pytest.approx(0.7e-12, rel=1e-9)


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e-6])
def test_hard_rows_at_a_tiny_feature_scale_are_not_unbounded(scale):
    """Hard rows (no cap) have multipliers of order |b| / ‖v‖²: at a tiny feature scale
    they are huge but finite (the dual is bounded), and the unboundedness test must
    scale with them; kernel and reference still agree."""
    rng = np.random.default_rng(0)
    V = rng.normal(size=(4, 3)) * scale
    b, capped = rng.uniform(0.1, 1.0, size=4), np.array([True, True, False, False])
    z, _ = solve_dual_qp(V @ V.T, b, capped, 1.0)
    zr, _ = reference_dual_qp(V @ V.T, b, capped, 1.0)
    f = lambda v: b @ v - 0.5 * v @ (V @ V.T) @ v
    assert f(z) == pytest.approx(f(zr), rel=1e-9)
    w = z @ V  # the hard rows hold at the primal point
    assert np.all(V[2:] @ w >= b[2:] * (1 - 1e-7))


@pytest.mark.parametrize("exponent", [0, 20, 40, 60, 100, 300])
def test_the_cap_holds_at_any_scale_of_the_problem(exponent):
    """G and b times a = 2**e is the same problem (objective times a): same maximiser.
    The cap's row of the KKT matrix was 1 beside G's entries of size a, and from
    a = 2**60 on the elimination lost it: z left the cap unsaturated (1.4% lower
    objective). Kernel and reference scale that row with G now."""
    V, b = np.array([[0.2], [-0.3]]), np.array([1.4, 0.2])  # a plane and a hard row
    capped, C, a = np.array([True, False]), 0.1, 2.0 ** exponent
    for solve in (solve_dual_qp, reference_dual_qp):
        z, lam = solve(a * (V @ V.T), a * b, capped, C)
        np.testing.assert_allclose(z, [0.1, 2.2888888888888889], rtol=1e-9)
        assert lam == pytest.approx(a * 1.5333333333333333, rel=1e-9)  # ∂/∂z₁ at the cap
    # two capped planes of a rank-one Gram matrix at a = 2**500: bounded, same optimum
    V, b = np.array([[-0.2], [0.5]]), np.array([0.8, -0.8])
    z1, _ = solve_dual_qp(V @ V.T, b, np.array([True, True]), 1000.0)
    z2, _ = solve_dual_qp(2.0 ** 500 * (V @ V.T), 2.0 ** 500 * b, np.array([True, True]), 1000.0)
    np.testing.assert_allclose(z2, z1, rtol=1e-9)


def test_an_active_cap_is_met_exactly_when_b_dwarfs_G():
    """One capped plane with b / G = 4e7, far beyond C = 1: the KKT solve's rounding
    left the capped sum 5e-9 below C, an objective b·5e-9 = 0.009 too low (a random
    case of test_kernel_matches_numpy_reference found it)."""
    G, b = np.array([[0.047667268279553636]]), np.array([1756054.2984837675])
    capped = np.array([True])
    for solve in (solve_dual_qp, reference_dual_qp):
        z, _ = solve(G, b, capped, 1.0)
        assert z[0] == pytest.approx(1.0, rel=4e-16, abs=0.0)


def test_a_small_hard_row_beside_a_large_plane_is_not_excused():
    """Multipliers were accepted down to -1e-12 · max diag G · max z, which for a plane
    of norm 1e5 excused a violation of 0.005 in a hard row of norm 1 (w2 >= 1.005 met at
    w2 = 1); each bound is now checked at its own row's rounding scale. (The ridge,
    1e-13 of the largest diagonal, still biases the small rows by about 4e-6.)"""
    V = np.array([[1e5, 0.0], [0.0, 1.0], [0.0, 1.0]])  # a capped plane, two hard rows
    G, b, capped = V @ V.T, np.array([1.0, 1.0, 1.005]), np.array([True, False, False])
    for solve in (solve_dual_qp, reference_dual_qp):
        for z0 in (np.array([0.0, 1.0, 0.0]), None):
            z, _ = solve(G, b, capped, 1.0, z0=z0)
            slack = V[1:] @ (V.T @ z) - b[1:]
            assert slack.min() >= -1e-5, (solve.__name__, z0, slack)


@pytest.mark.parametrize("kwargs,match", [
    (dict(G=np.eye(2), b=np.ones(3)), r"^G: expected a finite \(3, 3\) matrix"),
    (dict(G=np.full((1, 1), np.nan), b=np.ones(1)), r"^G: expected a finite"),
    (dict(b=np.array([np.inf])), r"^b: contains NaN or infinite"),
    (dict(C=float("nan")), r"^C must be a finite number"),
    (dict(C=-1.0), r"^C must be positive"),
    (dict(capped=np.ones(2, dtype=bool)), r"^capped: expected length 1"),
    (dict(z0=np.ones(3)), r"^z0: expected length 1"),
    (dict(max_iter=0), r"^max_iter: expected a positive integer"),
])
def test_solve_dual_qp_refuses_bad_input(kwargs, match):
    """A 2x2 G with 3 entries of b read out of bounds; C = nan ignored the cap."""
    args = dict(G=np.eye(1), b=np.ones(1), capped=np.ones(1, dtype=bool), C=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        solve_dual_qp(args.pop("G"), args.pop("b"), args.pop("capped"), args.pop("C"), **args)


def degenerate_problem(rng):
    """Planes that make the Gram matrix singular: repeated, zero, lengths from 1e-8 to
    1e8, rounding noise (1e-12) beside ordinary planes, fewer features than planes;
    hard rows (satisfiable) now and then."""
    n, d = int(rng.integers(1, 8)), int(rng.integers(1, 4))
    V = rng.normal(size=(n, d))
    kind = rng.integers(5)
    if kind == 0:
        V = V[rng.integers(0, max(1, n // 2), size=n)]
    elif kind == 1:
        V[rng.random(n) < 0.4] = 0.0
    elif kind == 2:
        V = V * 10.0 ** rng.integers(-8, 9, size=(n, 1))
    elif kind == 3:  # planes of rounding noise beside ordinary ones
        V[: rng.integers(1, max(2, n // 2) + 1)] *= 10.0 ** rng.integers(-12, -6)
    b = rng.random(n) * 10.0 ** rng.integers(-4, 2)
    capped = np.ones(n, bool)
    if rng.random() < 0.3 and n > 1:
        capped[1:] = rng.random(n - 1) < 0.6
        hard = ~capped
        b[hard] = V[hard] @ rng.normal(size=d) - rng.random(hard.sum())
    return V @ V.T, b, capped


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), C=st.sampled_from([1e-3, 1.0, 1e3, 1e6]),
       warm=st.booleans())
def test_degenerate_problems_reach_the_enumerated_optimum(seed, C, warm):
    """Singular Gram matrices (duplicate, zero and parallel planes, lengths from 1e-8 to
    1e8, rounding noise beside ordinary planes; C up to 1e6) against enumeration of the
    active sets: the solver must not stop short along a direction the ridge held back,
    nor cycle on duplicates."""
    from qp_reference import enumerate_dual_qp
    rng = np.random.default_rng(seed)
    G, b, capped = degenerate_problem(rng)
    z0 = rng.random(len(b)) * C if warm else None
    z, _ = solve_dual_qp(G, b, capped, C, z0=z0)
    f = lambda v: b @ v - 0.5 * v @ G @ v
    best = enumerate_dual_qp(G, b, capped, C)
    # ½ zᵀGz rounds at eps |G| z², which large C and a rank-deficient G expose
    rounding = 1e-12 * np.abs(G).max() * max(1.0, z.max()) ** 2
    assert f(z) >= best - 1e-9 * max(1.0, abs(best)) - rounding
    assert z.min() >= 0 and z[capped].sum() <= C * (1 + 1e-12)


def test_a_tiny_plane_beside_an_ordinary_one_under_the_cap():
    """The cap's Newton system with planes of norms 4e-11 and 1.7: scaling the cap's
    row by the tiny plane's length left a step of rounding noise that was taken for
    stationarity (2.7% below the optimum)."""
    from qp_reference import enumerate_dual_qp
    V = np.array([[-1e-11, -4e-11], [-1.6, 0.7]])
    G, b, capped = V @ V.T, np.array([0.2, 0.7]), np.ones(2, bool)
    best = enumerate_dual_qp(G, b, capped, 1.0)
    for solve in (solve_dual_qp, reference_dual_qp):
        z, _ = solve(G, b, capped, 1.0)
        assert b @ z - 0.5 * np.sum((z @ V) ** 2) == pytest.approx(best, rel=1e-12)


def test_a_short_hard_row_may_need_a_large_multiplier():
    """w·(0, 1e-5) ≥ 1 is feasible (w = (1, 1e5)); its multiplier is 1e10, which the
    unboundedness guard, at the largest plane's scale, took for a diverging dual."""
    V = np.array([[1.0, 0.0], [0.0, 1e-5]])
    z, _ = solve_dual_qp(V @ V.T, np.array([1.0, 1.0]), np.array([True, False]), 1.0)
    np.testing.assert_allclose(z, [1.0, 1e10], rtol=1e-9)


def test_a_plane_of_rounding_noise_under_the_cap():
    """One plane of norm 1e-16 (identical rows: rounding noise) and C = 1: the answer
    is z = C. The solve under the active cap moved z off its bound and back forever."""
    z, mult = solve_dual_qp(np.array([[3.697785493223493e-32]]), np.array([0.48746685413352087]),
                            np.array([True]), 1.0)
    assert z[0] == 1.0 and mult == pytest.approx(0.48746685413352087, rel=1e-12)


def test_a_null_direction_beside_a_large_plane_is_followed_to_its_bound():
    """Three small planes in two dimensions beside a plane 1e4 times longer, C = 1e6:
    the ridge (set by the large plane) held the step along the small planes' null
    direction to 1e-3 of its length, and the point was taken as optimal (2% of the
    optimum). The optimum puts the whole cap on the small planes."""
    V = np.array([[344.0, -774.0], [-0.14, -0.05], [0.10, 0.07], [0.05, -0.02]])
    b, capped, C = np.array([3e-4, 1e-4, 4e-4, 7e-4]), np.ones(4, bool), 1e6
    G = V @ V.T
    f = lambda v: b @ v - 0.5 * v @ G @ v
    feasible = np.array([0.0, 352564.06139053, 339743.51405325, 307692.42455622])
    feasible *= C / feasible.sum()
    for solve in (solve_dual_qp, reference_dual_qp):
        z, _ = solve(G, b, capped, C)
        assert f(z) >= f(feasible) * (1 - 1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_a_warm_start_far_above_the_solution_keeps_the_gradient_exact(seed):
    """A warm start of 1e5-1e6 for a solution of 1e-4 (C = 1e7): the free rows must be
    stationary to rounding at the solution's own scale, not at the start's (a running
    gradient update kept errors of eps times the start's G z)."""
    rng = np.random.default_rng(seed)
    V = rng.normal(size=(4, 6))
    G, b, capped = V @ V.T, rng.uniform(1e-4, 1e-3, 4), np.ones(4, bool)
    z0 = rng.uniform(1e4, 1e6, 4)
    z, mult = solve_dual_qp(G, b, capped, 1e7, z0=z0)
    residual = (b - G @ z)[z > 0] - mult
    assert np.abs(residual).max() <= 1e-12 * np.abs(b).max()


def test_a_subnormal_gram_matrix_is_read_as_zero():
    """Features near 1e-155 give planes whose Gram entries are subnormal; the kernel's
    scaling by 1/sqrt(G_ii) overflowed and it reported an unbounded dual (APSVM then
    refused to fit). Read as 0, the QP is the linear program it is to 1e-308: all of C
    on the plane of largest b."""
    from qp_reference import enumerate_dual_qp
    V = np.random.default_rng(0).normal(size=(3, 4)) * 1e-155
    G = V @ V.T
    assert 0 < np.abs(G).max() < np.finfo(float).tiny
    z, _ = solve_dual_qp(G, np.array([0.2, 0.9, 0.5]), np.ones(3, bool), 2.0)
    np.testing.assert_array_equal(z, [0.0, 2.0, 0.0])
    X = np.random.default_rng(1).normal(size=(40, 3))
    y = np.where(np.arange(40) % 3 == 0, 1, -1)
    for scale in (1e-155, 1e-160):
        assert APSVM(C=1.0).fit(X * scale, y).result_.converged
    # a plane of 1e-150 beside one of 9e-155 (G_22 subnormal, G_12 not) and orthogonal
    # planes of 1e-140 and 1e-154 keep their Gram matrix (reading its subnormal entries
    # alone as 0 gave z = 0, and a false "unbounded")
    b, capped = np.array([0.1, 0.9]), np.ones(2, bool)
    V = np.array([[1e-150], [9e-155]])
    for G in (V @ V.T, np.diag([1e-280, 1e-308])):
        z, _ = solve_dual_qp(G, b, capped, 1.0)
        assert b @ z - 0.5 * z @ G @ z == pytest.approx(enumerate_dual_qp(G, b, capped, 1.0),
                                                        rel=1e-12)


@pytest.mark.parametrize("seed", [766, 92326, 176408])
def test_far_warm_starts_that_zigzagged_or_cycled(seed):
    """Hypothesis found these (C = 1e3, a warm start far from the optimum): the
    projected-gradient fallback zigzagged on a singular face (9e-3 of a gap of 15 per
    step) and a release undone at once cycled, until "did not converge". The fallback
    steps are now conjugate on their face and every zero-length step's blocker is
    marked stuck; kernel and reference reach the enumerated optimum."""
    from qp_reference import enumerate_dual_qp
    rng = np.random.default_rng(seed)
    G, b, capped = degenerate_problem(rng)
    z0 = rng.random(len(b)) * 1e3
    best = enumerate_dual_qp(G, b, capped, 1e3)
    for solve in (solve_dual_qp, reference_dual_qp):
        z, _ = solve(G, b, capped, 1e3, z0=z0)
        assert b @ z - 0.5 * z @ G @ z == pytest.approx(best, rel=1e-9)


def test_rank_one_planes_at_a_huge_cap_do_not_cycle():
    """16 planes of one feature, C = 1e8, b ~ 1e-6: releasing a plane and then the cap
    gave two zero-length steps that undid each other forever."""
    G, b, capped = random_feasible_problem(np.random.default_rng(0), 16, 0, 1)
    b = b * 1e-6
    z, _ = solve_dual_qp(G, b, capped, 1e8)
    zr, _ = reference_dual_qp(G, b, capped, 1e8)
    assert z.min() >= 0 and z.sum() <= 1e8 * (1 + 1e-12)
    f = lambda v: b @ v - 0.5 * v @ G @ v
    assert f(z) == pytest.approx(f(zr), rel=1e-9)


def test_the_unchecked_entry_solves_as_the_checked_one():
    """solve_dual_qp_unchecked (the learner's per-iteration call) gives the checked
    entry's z and multiplier bit for bit, cold and warm started."""
    from svmrank.learners.qp import solve_dual_qp_unchecked
    rng = np.random.default_rng(3)
    V = rng.normal(size=(7, 4))
    G, b = V @ V.T, rng.uniform(0.1, 1.0, size=7)
    capped = np.array([True] * 5 + [False] * 2)
    for z0 in (None, rng.uniform(0, 3, size=7)):
        z1, m1 = solve_dual_qp(G, b, capped, 2.0, z0=z0)
        z2, m2 = solve_dual_qp_unchecked(G, b, capped, 2.0, z0=z0)
        np.testing.assert_array_equal(z1, z2)
        assert m1 == m2
