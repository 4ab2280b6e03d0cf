"""The 1-slack cutting-plane learner against the exact optimum over all constraints."""
import io
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from svmrank.exceptions import ConvergenceWarning
from svmrank.metrics import average_precision
from svmrank.inference import true_coef
from svmrank.learners.cutting_plane import cutting_plane
from svmrank.problems.binary import BinaryProblem
from svmrank.problems.ranking import RankingProblem
from lai_reference import coef_of, rank_loss


def all_ap_constraints(X, y):
    """(Δ_R, g_R) for every ranking R (permutation) of one query (tiny n)."""
    rel = y > 0
    planes = {}
    for order in itertools.permutations(range(len(y))):
        coef = coef_of(list(order), rel)
        planes[tuple(np.round(coef, 12))] = (rank_loss(rel[list(order)], "ap"),
                                             X.T @ (true_coef(rel) - coef))
    return list(planes.values())


def exact_primal(planes, C, d, bounds=None):
    """min ½‖w‖² + C ξ s.t. w·g ≥ Δ − ξ, ξ ≥ 0 by SLSQP on (w, ξ)."""
    f = lambda v: 0.5 * v[:d] @ v[:d] + C * v[d]
    cons = [{"type": "ineq", "fun": (lambda v, D=D, g=g: v[:d] @ g - D + v[d])} for D, g in planes]
    res = minimize(f, np.zeros(d + 1), constraints=cons, method="SLSQP",
                   bounds=(bounds or [(None, None)] * d) + [(0.0, None)],
                   options={"ftol": 1e-14, "maxiter": 5000})
    w = res.x[:d]  # the objective at w, with its true slack
    return 0.5 * w @ w + C * max(0.0, max(D - w @ g for D, g in planes)), w


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("C", [0.1, 10.0, 1000.0])
@pytest.mark.parametrize("line_search", [True, False])
def test_ap_optimum_within_epsilon_of_exact(seed, C, line_search):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(6, 3))
    y = np.array([1, 1, 0, 0, 0, 1.0])
    eps = 1e-4
    res = cutting_plane(RankingProblem(X, y), C, epsilon=eps, line_search=line_search)
    exact, _ = exact_primal(all_ap_constraints(X, y), C, 3)
    assert res.converged
    # SLSQP's answer is an upper bound on the optimum; the dual a lower bound
    assert res.primal_objective <= exact + C * eps + 1e-6 * (1 + exact)
    assert res.dual_objective <= exact + 1e-6 * (1 + exact)
    assert res.primal_objective - res.dual_objective <= C * eps + 1e-9
    assert res.duality_gap >= -1e-9


class _OnlyMostViolated:
    """A problem without the score interface: the plain algorithm must be used."""

    def __init__(self, problem):
        self.n_features, self.most_violated = problem.n_features, problem.most_violated


def test_line_search_in_weight_space_without_the_score_interface():
    rng = np.random.default_rng(9)
    X, y = rng.normal(size=(40, 3)), (rng.random(40) < 0.3).astype(float)
    y[:2] = [1, 0]
    runs = [cutting_plane(problem, 10.0, epsilon=1e-6, line_search=ls)
            for problem in (_OnlyMostViolated(RankingProblem(X, y)), RankingProblem(X, y))
            for ls in (True, False)]
    for run in runs[1:]:
        assert run.primal_objective == pytest.approx(runs[0].primal_objective, rel=1e-5, abs=1e-6)
    with pytest.raises(ValueError, match="line_search must be"):
        cutting_plane(RankingProblem(X, y), 1.0, line_search="yes")


@pytest.mark.parametrize("line_search", [True, False])
def test_warm_start_far_from_the_optimum_still_optimises(line_search):
    # a huge w0 ranks perfectly (no violation) but is far from minimising ½‖w‖²
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    X[:, 0] += np.sign(X[:, 0])
    y = (X[:, 0] > 0).astype(float)
    cold = cutting_plane(RankingProblem(X, y), 1.0, epsilon=1e-6, line_search=line_search)
    w0 = np.array([1e3, 0.0, 0.0])
    assert RankingProblem(X, y).most_violated(w0)[0] == 0.0
    warm = cutting_plane(RankingProblem(X, y), 1.0, epsilon=1e-6, w0=w0, line_search=line_search)
    assert warm.primal_objective == pytest.approx(cold.primal_objective, rel=1e-4, abs=1e-8)


@pytest.mark.parametrize("line_search", [True, False])
def test_small_C_large_epsilon_still_returns_a_ranking(line_search):
    # SVM-struct's defaults (-c 0.01 -e 0.1): w = 0 is already ε-optimal in objective,
    # but it ties every sample; the learner must return the better point it found
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=200) > 1).astype(float)
    res = cutting_plane(RankingProblem(X, y), 0.01, epsilon=0.1, line_search=line_search)
    assert res.converged and np.linalg.norm(res.w) > 0
    assert average_precision(y, X @ res.w) > 0.6


def test_binary_problem_is_linearsvc():
    svm = pytest.importorskip("sklearn.svm")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = np.where(X @ rng.normal(size=5) + 0.5 * rng.normal(size=200) > 0, 1.0, -1.0)
    C = 5.0
    res = cutting_plane(BinaryProblem(X, y, bias=1.0), C, epsilon=1e-6)
    ref = svm.LinearSVC(C=C / len(y), loss="hinge", tol=1e-10, max_iter=200000,
                        intercept_scaling=1.0).fit(X, y)
    w_ref = np.append(ref.coef_.ravel(), ref.intercept_)
    objective = lambda w: 0.5 * w @ w + C / len(y) * np.maximum(0, 1 - y * (X @ w[:5] + w[5])).sum()
    assert objective(res.w) == pytest.approx(objective(w_ref), rel=1e-5)
    np.testing.assert_allclose(res.w, w_ref, atol=1e-3)


def test_sign_bounds_and_hard_constraints():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(6, 3))
    y = np.array([1, 1, 0, 0, 0, 1.0])
    C = 50.0
    planes = all_ap_constraints(X, y)
    free_opt, w_free = exact_primal(planes, C, 3)
    flip = int(np.argmax(w_free))  # force the largest positive weight to be <= 0
    res = cutting_plane(RankingProblem(X, y), C, epsilon=1e-6, nonpositive=[flip])
    for bad, match in (([3], r"nonpositive: indices must lie in \[0, 3\)"),
                       (np.arange(3) == flip, "nonpositive: expected integer coordinates, got "
                                              "dtype bool"),  # (read as [0, 1] before)
                       ([0.5], "expected integer coordinates, got dtype float64")):
        with pytest.raises(ValueError, match=match):
            cutting_plane(RankingProblem(X, y), C, nonpositive=bad)
    bounds = [(None, None)] * 3
    bounds[flip] = (None, 0.0)
    exact, _ = exact_primal(planes, C, 3, bounds=bounds)
    assert res.w[flip] <= 1e-9
    assert res.primal_objective == pytest.approx(exact, rel=1e-5, abs=1e-7)
    # a hard constraint w·a >= 1 that the free optimum violates
    a = -w_free / np.linalg.norm(w_free)
    res = cutting_plane(RankingProblem(X, y), C, epsilon=1e-6, hard_constraints=(a[None, :], [1.0]))
    assert res.w @ a >= 1 - 1e-7
    f = lambda v: 0.5 * v[:3] @ v[:3] + C * v[3]
    cons = [{"type": "ineq", "fun": (lambda v, D=D, g=g: v[:3] @ g - D + v[3])} for D, g in planes]
    cons += [{"type": "ineq", "fun": lambda v: v[:3] @ a - 1}]
    ref = minimize(f, np.r_[a * 2, 1.0], constraints=cons, method="SLSQP",
                   bounds=[(None, None)] * 3 + [(0.0, None)], options={"ftol": 1e-14, "maxiter": 5000})
    # SLSQP often stops early here (status 8) and how far depends on the BLAS kernel, so
    # its point, made feasible, is an upper bound only; the learner's objective is the
    # true one at its w, and its dual bounds the optimum from below.
    objective = lambda w: 0.5 * w @ w + C * max(0.0, max(D - w @ g for D, g in planes))
    assert res.primal_objective == pytest.approx(objective(res.w), rel=1e-9)
    w_ref = ref.x[:3] + max(0.0, 1.0 - ref.x[:3] @ a) * a  # w·a >= 1 (|a| = 1)
    upper = objective(w_ref)
    assert res.primal_objective <= upper + C * 1e-6 + 1e-9 * upper
    assert res.dual_objective <= upper * (1 + 1e-9)
    assert res.primal_objective - res.dual_objective <= C * 1e-6 * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("line_search", [True, False])
def test_many_sign_bounds_match_the_bounded_optimum(seed, line_search):
    """Sign bounds are eliminated from the dual in closed form (w_B = min(0, (Vᵀz)_B));
    the optimum must be the bounded one, whichever coordinates end up clipped."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(6, 5))
    y = np.array([1, 0, 1, 0, 0, 1.0])
    C = float(rng.choice([1.0, 30.0, 500.0]))
    bounded = np.flatnonzero(rng.random(5) < 0.7) if seed % 2 else np.arange(5)
    res = cutting_plane(RankingProblem(X, y), C, epsilon=1e-7, nonpositive=bounded,
                        line_search=line_search)
    bounds = [(None, 0.0) if k in bounded else (None, None) for k in range(5)]
    exact, _ = exact_primal(all_ap_constraints(X, y), C, 5, bounds=bounds)
    assert np.all(res.w[bounded] <= 0.0)
    assert res.converged and res.duality_gap >= -1e-9
    assert res.primal_objective == pytest.approx(exact, rel=1e-5, abs=1e-7)
    assert res.dual_objective <= exact + 1e-6 * (1 + exact)


@pytest.mark.parametrize("seed", range(40))
def test_working_set_dual_with_sign_bounds_is_its_maximum(seed):
    """The closed-form dual max_z b·z − ½‖min(0, Vᵀz)_B, (Vᵀz)_rest‖² after each added
    plane equals the QP with the bounds' multipliers as variables (the NumPy reference
    QP), and never falls."""
    from qp_reference import reference_dual_qp
    from svmrank.learners.cutting_plane import _WorkingSet
    rng = np.random.default_rng(seed)
    d, k = int(rng.integers(2, 8)), int(rng.integers(2, 12))
    V = rng.normal(size=(k, d)) * rng.choice([0.1, 1.0, 10.0], size=(k, 1))
    b = rng.random(k) * 3
    B = np.sort(rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False))
    C = float(rng.choice([0.1, 1.0, 10.0, 100.0]))
    ws, last = _WorkingSet(d, nonpositive=B), -np.inf
    for i in range(k):
        ws.add(V[i:i + 1], b[i:i + 1], True, -1)
        w, dual = ws.solve(C)
        assert dual >= last - 1e-9 * (1 + abs(last)) and np.all(w[B] <= 0)
        last = dual
    A = np.vstack([V, -np.eye(d)[B]])  # (rows −e_j: w_j ≤ 0, uncapped multipliers)
    z, _ = reference_dual_qp(A @ A.T, np.r_[b, np.zeros(B.size)],
                             np.r_[np.ones(k, bool), np.zeros(B.size, bool)], C)
    w_ref = z @ A
    assert dual == pytest.approx(b @ z[:k] - 0.5 * w_ref @ w_ref, rel=1e-9, abs=1e-12)


def test_hoap_solve_that_cycled_converges():
    """Review 22: on data_examples/rank_train.dat with qid cliques, the alternation
    between the clipped set and the QP cycled (period 3), its z was not a maximiser, the
    dual fell and the cutting plane never converged (svm_ap_learn -c 1 --model hoap
    --groups qid ran for hours)."""
    from pathlib import Path

    from svmrank import HOAPSVM
    from svmrank.graph import edges_from_groups
    from svmrank.io.svmlight import load_svmlight
    X, y, qid = load_svmlight(Path(__file__).parents[1] / "data_examples" / "rank_train.dat")
    model = HOAPSVM(C=1.0, epsilon=0.1, max_iter=300).fit(X, y, edges=edges_from_groups(qid))
    assert model.converged_ and model.n_iter_ < 300
    for start in (None, 1):
        duals = [r["dual"] for r in model.trace_ if r.get("round") == start]
        assert np.all(np.diff(duals) >= -1e-9 * (1 + np.abs(duals[1:])))


def test_warns_at_iteration_cap_and_reports_progress():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 10))
    y = (X[:, 0] + rng.normal(size=300) > 1).astype(float)
    out = io.StringIO()
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        res = cutting_plane(RankingProblem(X, y), 1e4, epsilon=1e-6, max_iter=3, verbose=1, out=out)
    assert not res.converged and res.n_iter == 3
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and all("violation" in ln and "objective" in ln for ln in lines)


def test_queries_average_losses_and_skip_degenerate_ones():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 4))
    y = (rng.random(40) < 0.3).astype(float)
    qid = np.repeat([1, 2, 3, 4], 10)
    y[30:] = 0  # query 4 has no relevant sample
    y[[0, 10, 20]] = 1
    with pytest.warns(UserWarning, match="1 of 4 queries"):
        problem = RankingProblem(X, y, qid=qid)
    assert problem.n_queries == 3
    w = rng.normal(size=4)
    loss, g = problem.most_violated(w)
    parts = [RankingProblem(X[k:k + 10], y[k:k + 10]).most_violated(w) for k in (0, 10, 20)]
    assert loss == pytest.approx(np.mean([p[0] for p in parts]))
    np.testing.assert_allclose(g, np.mean([p[1] for p in parts], axis=0))


def test_ranking_problem_rejects_undefined_loss():
    with pytest.raises(ValueError, match="no query has both"):
        RankingProblem(np.eye(3), [1, 1, 1])


@pytest.mark.parametrize("scale,noise", [(1e-2, 0.3), (1e6, 0.3), (1e7, 0.0)])
def test_scaled_features_are_a_scaled_C(scale, noise):
    """min ½‖w‖² + C ξ(s X w) is min ½‖v‖²/s² + C ξ(X v) with v = s w: the model on s X at C
    is the model on X at C s², divided by s (up to the learner's rounding). At s = 1e6
    the QP once took z = 0 for its optimum and the learner returned w = 0."""
    from svmrank.datasets import make_ranking
    X, y, _ = make_ranking(n_samples=120, n_features=6, noise=noise, random_state=1)
    a = cutting_plane(RankingProblem(X * scale, y), 1.0, 1e-3)
    b = cutting_plane(RankingProblem(X, y), scale**2, 1e-3)
    assert a.converged and b.converged and np.any(b.w)
    np.testing.assert_allclose(a.w * scale, b.w, rtol=1e-6, atol=1e-9 * np.abs(b.w).max())


@pytest.mark.parametrize("seed", range(2))
def test_large_features_and_C_stop_only_at_a_certified_gap(seed):
    """Features of 1e4 with C = 1e5 (C = 1e13 on unit features): planes that differ
    by orders of magnitude make the QP's Gram matrix singular in practice. The plain
    learner claimed convergence 600-1300 C ε from the optimum (its rule trusted the
    QP to be exact, which it was not), and the binary SVM never converged."""
    rng = np.random.default_rng(seed)
    y = (rng.random(270) < 0.45).astype(float)
    X = rng.normal(size=(270, 13)) + 0.5 * (2 * y[:, None] - 1) * rng.random(13)
    X = np.round(np.clip(X, -1, 1), 2) * 1e4
    C, eps = 1e5, 1e-3
    ocas = cutting_plane(RankingProblem(X, y), C, eps)
    binary = cutting_plane(BinaryProblem(X, y), C, eps, max_iter=400)
    for res in (ocas, binary):
        assert res.converged and res.duality_gap <= C * eps * (1 + 1e-9)
    # without a line search the tail at this C is long: it may run out of iterations,
    # but it must not claim an optimum it has not certified
    with pytest.warns(ConvergenceWarning):
        plain = cutting_plane(RankingProblem(X, y), C, eps, line_search=False, max_iter=150)
    assert not plain.converged and plain.primal_objective >= ocas.primal_objective - C * eps


@pytest.mark.parametrize("d", [1, 3])
def test_identical_rows_train_to_zero_weights(d):
    """Every row the same: every plane is rounding noise (norm ~1e-16) and the answer
    is w = 0. The QP cycled on such a plane under the cap (QPError)."""
    from svmrank import APSVM
    y = np.array([0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0.0])
    for C in (1e-3, 1.0, 1e6):
        assert not APSVM(C=C).fit(np.ones((13, d)), y).coef_.any()


def test_planes_are_kept_on_the_columns_they_use():
    """Hashed features: 12 columns used of 2**21. The working set held every plane as a
    dense row of 2**21 doubles (1.2 GB for this fit's 36 planes; 22 GB at 2**24 with
    80 planes); it keeps them on the columns some plane uses, and the fit is the one on
    those columns alone."""
    import tracemalloc
    from svmrank import APSVM
    rng = np.random.default_rng(0)
    n, used, d = 200, 12, 1 << 21
    Xs = rng.normal(size=(n, used))
    y = (Xs[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(float)
    cols = np.sort(rng.choice(d, used, replace=False))
    X = sp.csr_matrix((Xs.ravel(), np.tile(cols, n), np.arange(0, n * used + 1, used)),
                      shape=(n, d))
    small = APSVM(C=100.0).fit(Xs, y)
    tracemalloc.start()
    try:
        big = APSVM(C=100.0).fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert big.n_constraints_ >= 30 and peak < 20 * 8 * d  # (a few w-sized vectors)
    np.testing.assert_allclose(big.coef_[cols], small.coef_, rtol=1e-9, atol=1e-12)
    assert not np.delete(big.coef_, cols).any()


@pytest.mark.parametrize("C, match", [(0.0, "C must be positive"), (-1.0, "C must be positive"),
                                      (float("nan"), "C must be a finite")])
def test_cutting_plane_checks_C_at_its_entry(C, match):
    """The QP it calls every iteration trusts C: the learner's entry checks it."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match=match):
        cutting_plane(BinaryProblem(X, np.array([1, -1, 1])), C)


def test_fits_run_blas_on_one_thread():
    """The learner's sample-length dot products run on one BLAS thread (multithreaded
    OpenBLAS ddot stalled each call on a loaded machine), and the limit ends with it."""
    from threadpoolctl import threadpool_info
    from svmrank.learners.cutting_plane import one_blas_thread
    blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
    if not blas:
        pytest.skip("no BLAS library that threadpoolctl can see")
    before = [lib["num_threads"] for lib in blas]
    with one_blas_thread():
        assert {lib["num_threads"] for lib in threadpool_info()
                if lib["user_api"] == "blas"} == {1}
    assert [lib["num_threads"] for lib in threadpool_info()
            if lib["user_api"] == "blas"] == before
