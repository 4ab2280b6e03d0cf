"""Prox-SDCA for the top-k multiclass SVM: the Cython epochs against a plain NumPy
reference (same permutations, same iterates), duality gap behaviour, a generic QP
solver on tiny problems, and the loss inequalities of Lapin et al. (2015) §2."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.optimize import minimize

from svmrank.exceptions import ConvergenceWarning
from svmrank.learners.sdca import objectives, sdca_topk, topk_hinge_losses

import svmrank._sdca_fast  # noqa: E402,F401  (a missing kernel fails, never skips)


# ---------------------------------------------------------------------------
# Reference implementation (slow, obviously correct)
# ---------------------------------------------------------------------------

def ref_knapsack_threshold(b, s, upper):
    """t with sum(clip(b - t, 0, upper)) = s, by evaluating the piecewise-linear,
    non-increasing sum at every breakpoint and interpolating (0 < s <= len(b)*upper)."""
    pts = np.unique(np.concatenate([b, b - upper]))
    f = np.clip(b[None, :] - pts[:, None], 0.0, upper).sum(axis=1)
    if s >= f[0]:
        return pts[0]
    j = np.flatnonzero(f >= s)[-1]
    return pts[j] + (f[j] - s) / (f[j] - f[j + 1]) * (pts[j + 1] - pts[j])


def ref_biased_projection(b, k, r, rho, loss):
    """argmin ||b - x||^2 + rho <1,x>^2 over Delta_k(r) (alpha) or over
    {<1,x> <= r, 0 <= x <= r/k} (beta), by bisection on s = <1,x>.

    For fixed s the problem is a knapsack with threshold t; its value f(s) is convex
    with f'(s) = 2 rho s - 2 t - (2/k) sum_i max(0, b_i - t - s/k) (alpha; the last term
    is the multiplier of the coupled upper bounds) or 2 rho s - 2 t (beta).
    """
    b = np.asarray(b, dtype=float)

    def bound(s):
        return s / k if loss == "alpha" else r / k

    def slope(s):
        t = ref_knapsack_threshold(b, s, bound(s))
        g = 2 * rho * s - 2 * t
        if loss == "alpha":
            g -= 2.0 / k * np.maximum(0.0, b - t - bound(s)).sum()
        return g

    if slope(r) <= 0:
        s = r
    else:
        lo, hi = 0.0, r
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if slope(mid) > 0:
                hi = mid
            else:
                lo = mid
        s = 0.5 * (lo + hi)
    if s <= 0:
        return np.zeros_like(b)
    return np.clip(b - ref_knapsack_threshold(b, s, bound(s)), 0.0, bound(s))


def reference_sdca(X, y, m, k, C, loss, n_epochs, seed):
    """Alg. 1 written out in NumPy with the reference projection (rho = 1)."""
    X = np.asarray(X, dtype=float)
    rng = np.random.default_rng(seed)
    n, d = X.shape
    A, W = np.zeros((n, m)), np.zeros((d, m))
    sq = (X * X).sum(axis=1)
    for i in np.flatnonzero(sq <= 0):
        A[i] = -C / (m - 1)
        A[i, y[i]] = C
    for _ in range(n_epochs):
        for i in rng.permutation(n):
            if sq[i] <= 0:
                continue
            q = X[i] @ W - sq[i] * A[i]
            others = np.arange(m) != y[i]
            b = (q[others] + 1.0 - q[y[i]]) / sq[i]
            x = ref_biased_projection(b, k, C, 1.0, loss)
            a_new = np.zeros(m)
            a_new[others] = -x
            a_new[y[i]] = x.sum()
            W += np.outer(X[i], a_new - A[i])
            A[i] = a_new
    return W, A


def blobs(n, d, m, seed, spread=1.0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=2.0, size=(m, d))
    y = np.arange(n) % m
    rng.shuffle(y)
    return centers[y] + spread * rng.normal(size=(n, d)), y


def run(X, y, m, k, C, loss, epochs, seed, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return sdca_topk(X, y, m, k=k, C=C, loss=loss, epsilon=-1.0, max_epoch=epochs,
                         check_gap_every=10**6, random_state=seed, **kw)


# ---------------------------------------------------------------------------
# The reference projection itself, against a generic solver
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["alpha", "beta"])
@pytest.mark.parametrize("seed", range(6))
def test_reference_projection_matches_slsqp(loss, seed):
    rng = np.random.default_rng(seed)
    mp = int(rng.integers(2, 6))
    k = int(rng.integers(1, mp + 1))
    b = rng.normal(scale=2.0, size=mp) + rng.choice([-1.0, 0.0, 1.0])
    r = float(rng.uniform(0.2, 3.0))
    cons = [{"type": "ineq", "fun": lambda x: r - x.sum()}, {"type": "ineq", "fun": lambda x: x}]
    if loss == "alpha":
        cons.append({"type": "ineq", "fun": lambda x: x.sum() / k - x})
    else:
        cons.append({"type": "ineq", "fun": lambda x: r / k - x})
    fun = lambda x: np.sum((b - x) ** 2) + x.sum() ** 2
    res = minimize(fun, np.zeros(mp), constraints=cons, method="SLSQP",
                   options={"ftol": 1e-14, "maxiter": 500})
    x = ref_biased_projection(b, k, r, 1.0, loss)
    # SLSQP may end slightly outside the constraints (seen once under load: status 8,
    # 1.4e-8 below the exact projection's value), so only its rounding is excused
    assert fun(x) <= res.fun + 1e-7 * (1 + abs(res.fun))
    np.testing.assert_allclose(x, res.x, atol=1e-5)


# ---------------------------------------------------------------------------
# Cython epochs == reference iterates
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["alpha", "beta"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_same_iterates_as_reference(loss, k):
    X, y = blobs(14, 3, 5, seed=k)
    res = run(X, y, 5, k, 0.7, loss, epochs=3, seed=11)
    W_ref, A_ref = reference_sdca(X, y, 5, k, 0.7, loss, 3, 11)
    np.testing.assert_allclose(res.A, A_ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res.W, W_ref, rtol=1e-8, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), loss=st.sampled_from(["alpha", "beta"]),
       scale=st.sampled_from([1e-3, 1.0, 1e3]), C=st.sampled_from([1e-2, 1.0, 1e2]),
       ties=st.booleans(), zero_row=st.booleans())
def test_property_same_iterates(seed, loss, scale, C, ties, zero_row):
    """Every path of the kernel (dense, CSR, precomputed Gram matrix) against the
    reference, duals and weights, with two classes too; a zero row (skipped: its
    Gram diagonal is 0) and duplicated rows."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 6))
    k = int(rng.integers(1, m))
    n = int(rng.integers(m, 10))
    X = scale * rng.normal(size=(n, 3))
    y = rng.integers(0, m, size=n)
    if ties:  # duplicated examples and tied scores
        X[1::2] = X[0]
        X = np.round(X, 1)
    if zero_row:
        X[0] = 0.0
    W_ref, A_ref = reference_sdca(X, y, m, k, C, loss, 2, seed)
    tol = 1e-7 * max(1.0, np.abs(A_ref).max())
    w_tol = 1e-7 * max(1.0, np.abs(W_ref).max())
    for data, kw in ((X, {}), (sp.csr_matrix(X), {}), (X @ X.T, {"kernel": "precomputed"})):
        res = run(data, y, m, k, C, loss, epochs=2, seed=seed, **kw)
        np.testing.assert_allclose(res.A, A_ref, rtol=1e-7, atol=tol)
        W = X.T @ res.A if kw else res.W
        np.testing.assert_allclose(W, W_ref, rtol=1e-7, atol=w_tol)


def test_csr_and_dense_give_identical_iterates():
    X, y = blobs(40, 6, 4, seed=3)
    X[X < 0.3] = 0.0  # make it genuinely sparse
    for loss in ("alpha", "beta"):
        dense = run(X, y, 4, 2, 1.0, loss, epochs=4, seed=5)
        csr = run(sp.csr_matrix(X), y, 4, 2, 1.0, loss, epochs=4, seed=5)
        np.testing.assert_array_equal(dense.A, csr.A)
        np.testing.assert_array_equal(dense.W, csr.W)


def test_precomputed_kernel_matches_linear():
    X, y = blobs(30, 4, 4, seed=8)
    for loss in ("alpha", "beta"):
        lin = run(X, y, 4, 2, 1.0, loss, epochs=5, seed=2)
        ker = run(X @ X.T, y, 4, 2, 1.0, loss, epochs=5, seed=2, kernel="precomputed")
        assert ker.W is None
        np.testing.assert_allclose(ker.A, lin.A, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(X.T @ ker.A, lin.W, rtol=1e-9, atol=1e-11)
        assert ker.primal == pytest.approx(lin.primal, rel=1e-10)


# ---------------------------------------------------------------------------
# Duality gap
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["alpha", "beta"])
@pytest.mark.parametrize("k", [1, 3])
def test_gap_nonnegative_and_closes(loss, k):
    X, y = blobs(60, 20, 6, seed=k)
    res = sdca_topk(sp.csr_matrix(X), y, 6, k=k, C=1.0, loss=loss, epsilon=1e-9,
                    max_epoch=5000, check_gap_every=1, random_state=0)
    assert res.converged and res.gap <= 1e-9
    gaps = np.array([h[3] for h in res.history])
    primals = np.array([h[1] for h in res.history])
    duals = np.array([h[2] for h in res.history])
    assert np.all(primals - duals >= -1e-9 * np.abs(primals))
    assert np.all(np.diff(duals) >= -1e-9 * np.abs(duals[1:]))  # SDCA is ascent on D
    assert gaps[0] > gaps[-1]
    # the history's values are the true objectives of the returned iterate
    p, d, g = objectives(X @ res.W, y, k, 1.0, loss, res.A, np.sum(res.W ** 2))
    assert (p, d) == pytest.approx((res.primal, res.dual), rel=1e-12)
    np.testing.assert_allclose(res.W, X.T @ res.A, atol=1e-9)


def test_convergence_warning_at_epoch_cap():
    X, y = blobs(50, 5, 5, seed=1, spread=3.0)
    with pytest.warns(ConvergenceWarning, match="max_epoch=2"):
        res = sdca_topk(X, y, 5, k=2, C=10.0, epsilon=1e-12, max_epoch=2,
                        check_gap_every=1, random_state=0)
    assert not res.converged and res.n_epochs == 2 and res.gap > 1e-12


def test_same_seed_same_result_different_seed_same_optimum():
    X, y = blobs(40, 4, 4, seed=2)
    a = sdca_topk(X, y, 4, k=2, epsilon=1e-10, max_epoch=3000, random_state=7)
    b = sdca_topk(X, y, 4, k=2, epsilon=1e-10, max_epoch=3000, random_state=7)
    c = sdca_topk(X, y, 4, k=2, epsilon=1e-10, max_epoch=3000, random_state=8)
    np.testing.assert_array_equal(a.W, b.W)
    assert c.primal == pytest.approx(a.primal, rel=1e-8)


# ---------------------------------------------------------------------------
# Generic solver on tiny problems: the primal as a QP (Lemma 1 for the top-k sum)
# ---------------------------------------------------------------------------

def generic_primal_optimum(X, y, m, k, C, loss):
    """min 1/2||W||^2 + C sum_i xi_i with, for h_ij = 1 + s_ij - s_iy (j != y_i),
    alpha: xi_i >= 0, xi_i >= t_i + (1/k) sum_j e_ij, e_ij >= h_ij - t_i, e_ij >= 0;
    beta:  xi_i >= t_i + (1/k) sum_j e_ij, e_ij >= p_ij - t_i, e_ij >= 0,
           p_ij >= h_ij, p_ij >= 0 (so p = max(0, h))."""
    n, d = X.shape
    mp = m - 1
    others = np.array([[j for j in range(m) if j != y[i]] for i in range(n)])
    nw, nt, ne = d * m, n, n * mp
    npp = ne if loss == "beta" else 0
    nvar = nw + nt + ne + npp + n

    def split(z):
        W = z[:nw].reshape(d, m)
        t = z[nw:nw + nt]
        e = z[nw + nt:nw + nt + ne].reshape(n, mp)
        p = z[nw + nt + ne:nw + nt + ne + npp].reshape(n, mp) if npp else None
        xi = z[nw + nt + ne + npp:]
        return W, t, e, p, xi

    def h_of(W):
        S = X @ W
        return 1.0 + S[np.arange(n)[:, None], others] - S[np.arange(n), y][:, None]

    def cons(z):
        W, t, e, p, xi = split(z)
        h = h_of(W)
        target = p if loss == "beta" else h
        parts = [xi - t - e.sum(axis=1) / k, (e - (target - t[:, None])).ravel(), e.ravel()]
        if loss == "alpha":
            parts.append(xi)
        else:
            parts += [(p - h).ravel(), p.ravel()]
        return np.concatenate(parts)

    def fun(z):
        W, _, _, _, xi = split(z)
        return 0.5 * np.sum(W ** 2) + C * xi.sum()

    def grad(z):
        g = np.zeros(nvar)
        g[:nw] = z[:nw]
        g[nvar - n:] = C
        return g

    z0 = np.zeros(nvar)
    z0[nvar - n:] = 2.0
    if npp:
        z0[nw + nt + ne:nw + nt + ne + npp] = 1.0
    z0[nw + nt:nw + nt + ne] = 2.0
    res = minimize(fun, z0, jac=grad, constraints=[{"type": "ineq", "fun": cons}],
                   method="SLSQP", options={"ftol": 1e-13, "maxiter": 2000})
    return res.fun, split(res.x)[0], res.success


@pytest.mark.parametrize("loss", ["alpha", "beta"])
@pytest.mark.parametrize("k", [1, 2])
def test_primal_optimum_matches_generic_qp(loss, k):
    X, y = blobs(9, 2, 4, seed=10 + k, spread=1.5)
    C = 0.8
    res = sdca_topk(X, y, 4, k=k, C=C, loss=loss, epsilon=1e-11, max_epoch=20000,
                    random_state=0)
    qp_value, W_qp, converged = generic_primal_optimum(X, y, 4, k, C, loss)
    # Whatever SLSQP's status (it can depend on the BLAS kernel), its W is an upper
    # bound on the optimum, and SDCA's duality gap certifies its own W.
    upper = 0.5 * np.sum(W_qp ** 2) + C * topk_hinge_losses(X @ W_qp, y, k, loss).sum()
    assert res.primal <= upper * (1 + 1e-9) and res.gap <= 1e-11
    if converged:
        assert res.primal == pytest.approx(qp_value, rel=1e-6)
        np.testing.assert_allclose(res.W, W_qp, atol=1e-4)


# ---------------------------------------------------------------------------
# Loss functions and the alpha / beta relations (§2.3)
# ---------------------------------------------------------------------------

def topk_error(scores, y, k):
    """err_k: the k-th largest score of the other classes beats the true class."""
    others = np.where(np.eye(scores.shape[1], dtype=bool)[y], -np.inf, scores)
    kth = -np.partition(-others, k - 1, axis=1)[:, k - 1]
    return (kth >= scores[np.arange(len(y)), y]).astype(float)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), scale=st.sampled_from([1e-6, 0.5, 3.0, 1e6]),
       integer=st.booleans())
def test_loss_inequalities(seed, scale, integer):
    rng = np.random.default_rng(seed)
    n, m = 20, int(rng.integers(2, 8))
    S = scale * rng.normal(size=(n, m))
    if integer:  # ties
        S = np.round(S)
    y = rng.integers(0, m, size=n)
    phi1 = topk_hinge_losses(S, y, 1, "alpha")
    np.testing.assert_array_equal(phi1, topk_hinge_losses(S, y, 1, "beta"))
    h = 1 + S - S[np.arange(n), y][:, None]
    h[np.arange(n), y] = -np.inf
    np.testing.assert_allclose(phi1, np.maximum(0, h.max(axis=1)))  # Crammer-Singer
    srt = -np.sort(-h, axis=1)
    for k in range(1, m):
        alpha = topk_hinge_losses(S, y, k, "alpha")
        beta = topk_hinge_losses(S, y, k, "beta")
        psi = np.maximum(0, srt[:, k - 1])
        tol = 1e-12 * max(1.0, scale)
        assert np.all(psi <= alpha + tol) and np.all(alpha <= beta + tol)
        assert np.all(beta <= phi1 + tol)
        assert np.all(topk_error(S, y, k) <= alpha + tol)  # an upper bound on err_k
        equal = (srt[:, 0] <= 0) | (srt[:, k - 1] >= 0)  # when the bound is tight
        np.testing.assert_allclose(alpha[equal], beta[equal], atol=tol)
        if k > 1:  # alpha is non-increasing in k
            assert np.all(alpha <= topk_hinge_losses(S, y, k - 1, "alpha") + tol)


def test_optimal_objectives_are_ordered():
    """Pointwise phi_k <= phi~_k <= phi_1 carries over to the optima; certified with
    primal (upper) and dual (lower) bounds."""
    X, y = blobs(60, 10, 6, seed=4, spread=2.0)
    res = {}
    for loss, k in [("alpha", 1), ("alpha", 3), ("beta", 3)]:
        res[loss, k] = sdca_topk(X, y, 6, k=k, C=1.0, loss=loss, epsilon=1e-6,
                                 max_epoch=5000, random_state=0)
    assert res["alpha", 3].primal < res["beta", 3].dual
    assert res["beta", 3].primal < res["alpha", 1].dual


def test_loss_rejects_unknown_name():
    with pytest.raises(ValueError, match="loss"):
        topk_hinge_losses(np.zeros((2, 3)), np.array([0, 1]), 1, "gamma")


# ---------------------------------------------------------------------------
# The gap check over blocks of rows (issue 28 part 3: no (n, m) temporaries)
# ---------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 200), st.integers(2, 9),
       st.sampled_from(["alpha", "beta"]), st.sampled_from([1e-300, 1.0, 1e150]),
       st.booleans())
def test_blockwise_losses_equal_the_whole_products(seed, n, m, loss, scale, ties):
    """Every block size and thread count gives bitwise the losses of X @ W whole:
    random, tied (integer) and huge or tiny scores, empty rows, one class ahead."""
    from svmrank.learners import sdca
    rng = np.random.default_rng(seed)
    X = sp.random(n, 7, density=0.4, random_state=rng, format="csr")
    X.data = np.round(X.data * 3) if ties else X.data * scale
    W = rng.normal(size=(7, m)) * (1.0 if ties else scale)
    W = np.round(W) if ties else W
    y = rng.integers(0, m, n).astype(np.intp)
    k = int(rng.integers(1, m))
    original = sdca.block_rows
    with np.errstate(over="ignore", invalid="ignore"):
        want = topk_hinge_losses(np.asarray(X @ W), y, k, loss)
        try:
            for rows in (1, 3, 64, n):
                sdca.block_rows = lambda m, rows=rows: rows
                for threads in (1, 2, 4):
                    got = sdca.blockwise_losses(X, W, y, k, loss, threads)
                    assert np.array_equal(got, want, equal_nan=True)
        finally:
            sdca.block_rows = original
    assert original(26) * 26 * 8 <= 64 * 1024 and original(10**6) >= 64


def test_int32_and_intp_indices_give_identical_iterates():
    """The CSR epoch reads scipy's int32 index arrays as they are (no intp copy of X):
    the same iterates as with intp indices."""
    from svmrank import _sdca_fast
    rng = np.random.default_rng(4)
    X = sp.random(60, 9, density=0.5, random_state=rng, format="csr")
    y = rng.integers(0, 4, 60).astype(np.intp)
    order = rng.permutation(60).astype(np.intp)
    runs = []
    for index in (np.int32, np.intp):
        indices, indptr = X.indices.astype(index), X.indptr.astype(index)
        sq = np.empty(60)
        _sdca_fast.sqnorms_csr(X.data, indptr, sq)
        W, A = np.zeros((9, 4)), np.zeros((60, 4))
        for _ in range(3):
            _sdca_fast.epoch_csr(X.data, indices, indptr, y, sq, order, W, A, 2, 1.0,
                                 _sdca_fast.LOSS_ALPHA)
        runs.append((sq, W, A))
    for a, b in zip(*runs):
        assert np.array_equal(a, b)
