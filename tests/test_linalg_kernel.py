"""The sparse products of the problems (kernel ``svmrank._linalg_fast``) against scipy's."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from svmrank import _linalg_fast, _testing_fast
from svmrank._validation import check_matrix
from svmrank.problems.linear import (SPARSE_D_FRACTION, UNIFORM_LENGTHS, SparseProducts,
                                    matrix_product, transpose_product)


def _random_csr(rng, n, d, density, scale):
    return check_matrix(sp.random(n, d, density=density, random_state=rng, format="csr") * scale
                        if density else sp.csr_matrix((n, d)))


def _close(got, expected, X, v):
    np.testing.assert_allclose(got, expected, rtol=1e-12,
                               atol=1e-12 * np.abs(X.data).max(initial=0) * np.abs(v).max(initial=0))


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), d=st.integers(1, 30),
       density=st.sampled_from([0.0, 0.1, 0.5, 1.0]), d_density=st.sampled_from([0.0, 0.2, 1.0]),
       scale=st.sampled_from([1e-300, 1.0, 1e150]), threads=st.sampled_from([0, 1, 2, 3]))
def test_matches_scipy(seed, n, d, density, d_density, scale, threads):
    """Random CSR matrices with empty rows and columns, zero or sparse d, tiny and huge
    values; threads > 1 forces the blocked, threaded Xᵀd (more threads or blocks than rows
    included)."""
    rng = np.random.default_rng(seed)
    X = _random_csr(rng, n, d, density, scale)
    v = rng.normal(size=n) * (rng.random(n) < d_density)
    w = rng.normal(size=d)
    out0 = rng.normal(size=d)  # out += Xᵀd: what out held is kept
    out = out0.copy()
    _linalg_fast.csr_rmatvec(X.indptr, X.indices, X.data, v, out, threads)
    np.testing.assert_allclose(out, out0 + np.asarray(X.T @ v).ravel(), rtol=1e-12,
                               atol=1e-12 * (1.0 + np.abs(X.data).max(initial=0) * np.abs(v).sum()))
    out = np.full(n, np.nan)
    _linalg_fast.csr_matvec(X.indptr, X.indices, X.data, w, out, threads)
    _close(out, X @ w, X, w)
    _close(transpose_product(X, v), np.asarray(X.T @ v).ravel(), X, v)
    _close(matrix_product(X, w), X @ w, X, w)


def test_large_products_do_not_depend_on_the_thread_count():
    """Above the size where all cores are used, the result is the same on 1, 2 or 3 threads."""
    rng = np.random.default_rng(0)
    X = _random_csr(rng, 20000, 50, 0.2, 1.0)
    assert X.nnz >= 1 << 16
    v, w = rng.normal(size=20000), rng.normal(size=50)
    outs, scores = [], []
    for threads in (1, 2, 3):
        out = np.zeros(50)
        _linalg_fast.csr_rmatvec(X.indptr, X.indices, X.data, v, out, threads)
        outs.append(out)
        s = np.empty(20000)
        _linalg_fast.csr_matvec(X.indptr, X.indices, X.data, w, s, threads)
        scores.append(s)
    for out, s in zip(outs[1:], scores[1:]):
        np.testing.assert_array_equal(out, outs[0])
        np.testing.assert_array_equal(s, scores[0])
    np.testing.assert_array_equal(transpose_product(X, v), outs[0])  # automatic: blocked too
    _close(outs[0], X.T @ v, X, v)
    _close(scores[0], X @ w, X, w)
    products = SparseProducts(X)  # the stored copies: each row and column one thread's
    for M, x in ((products._by_rows, w), (products._by_cols, v)):
        got = []
        for threads in (1, 2, 3):
            out = np.empty(M.n_rows)
            _linalg_fast.csr_matvec(M.indptr, M.indices, M.data, x, out, threads, rows=M.rows)
            got.append(out)
        np.testing.assert_array_equal(got[1], got[0])
        np.testing.assert_array_equal(got[2], got[0])
    _close(products.matvec(w), X @ w, X, w)
    _close(products.rmatvec(v), X.T @ v, X, v)


def test_empty_shapes():
    """No rows or no columns: Xᵀd leaves out as it was, X w is 0 on every (empty) row."""
    for n, d in ((0, 3), (4, 0), (0, 0)):
        indptr, indices, data = np.zeros(n + 1, np.int32), np.zeros(0, np.int32), np.zeros(0)
        out = np.arange(d, dtype=float)
        _linalg_fast.csr_rmatvec(indptr, indices, data, np.ones(n), out, 0)
        np.testing.assert_array_equal(out, np.arange(d))
        scores = np.full(n, np.nan)
        _linalg_fast.csr_matvec(indptr, indices, data, np.ones(d), scores, 0)
        np.testing.assert_array_equal(scores, np.zeros(n))


def test_max_threads_is_positive():
    assert _testing_fast.max_threads() >= 1


@pytest.mark.parametrize("product", [matrix_product, transpose_product])
def test_int64_indices_fall_back_to_scipy(product):
    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    if product is transpose_product:
        np.testing.assert_array_equal(product(X, np.array([2.0, -1.0])), [2.0, -3.0, 4.0])
    else:
        np.testing.assert_array_equal(product(X, np.array([1.0, 2.0, -1.0])), [-1.0, 6.0])


def test_a_forked_child_runs_the_products():
    """libgomp's threads do not survive fork(): after the parent has used them, a forked
    child (multiprocessing's default on Linux) must run the products serially, not hang."""
    import multiprocessing as mp
    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork on this platform")
    rng = np.random.default_rng(0)
    X = _random_csr(rng, 20000, 50, 0.2, 1.0)
    w = rng.normal(size=50)
    expected = matrix_product(X, w)  # the parent starts its threads
    expected_t = transpose_product(X, expected)
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=lambda: queue.put(
        (matrix_product(X, w).tolist(), transpose_product(X, expected).tolist())))
    child.start()
    try:  # (read before joining: a child cannot exit while its queue holds data)
        scores, joint = queue.get(timeout=60)
    except Exception:  # queue.Empty after the timeout
        scores = None
    child.join(10)
    if child.is_alive():
        child.kill()
    assert scores is not None, "the forked child hung in a product"
    np.testing.assert_array_equal(scores, expected)
    np.testing.assert_array_equal(joint, expected_t)  # serial, and the same blocks


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), d=st.integers(1, 30),
       density=st.sampled_from([0.0, 0.1, 0.5, 1.0]), d_density=st.sampled_from([0.0, 0.2, 0.3, 1.0]),
       values=st.sampled_from(["ones", "normal", "huge", "tiny"]), threads=st.sampled_from([0, 1, 2, 3]))
def test_sparse_products_match_scipy(seed, n, d, density, d_density, values, threads):
    """SparseProducts (rows stored by length, Xᵀ for Xᵀd, a 0/1 matrix read from its
    indices) against scipy on random matrices with empty rows and columns and rows of
    every length, d of every density (both sides of the sparse-d switch)."""
    rng = np.random.default_rng(seed)
    stored = rng.random((n, d)) < density * rng.random((n, 1))  # rows of every length
    if values == "ones":
        dense = stored.astype(float)
    else:
        dense = rng.normal(size=(n, d)) * stored * {"normal": 1.0, "huge": 1e150, "tiny": 1e-300}[values]
    X = check_matrix(sp.csr_matrix(dense))
    products = SparseProducts(X)
    if values == "ones":
        assert products._by_rows.data is None and products._by_cols.data is None
    elif X.nnz:
        assert products._by_rows.data is not None
    w = rng.normal(size=d)
    v = rng.normal(size=n) * (rng.random(n) < d_density)
    _close(products.matvec(w), X @ w, X, w)
    _close(products.rmatvec(v), np.asarray(X.T @ v).ravel(), X, v)
    for M, A in ((products._by_rows, X), (products._by_cols, X.T.tocsr())):
        lengths = np.diff(A.indptr)
        if M.rows is None:  # rows of about one length: kept as they are, not copied
            assert lengths.max() <= UNIFORM_LENGTHS * lengths.min()
            copy = A
        else:
            assert np.all(np.diff(np.diff(M.indptr)) >= 0)  # rows by length, X's order within
            np.testing.assert_array_equal(M.rows, np.argsort(lengths, kind="stable"))
            copy = A[M.rows]
        np.testing.assert_array_equal(M.indptr, copy.indptr)
        np.testing.assert_array_equal(M.indices, copy.indices)
        np.testing.assert_array_equal(np.ones(A.nnz) if M.data is None else M.data, copy.data)
    reading = SparseProducts(X, copies=False)  # no copies: the products read X
    assert not reading._fast
    np.testing.assert_array_equal(reading.matvec(w), products.matvec(w))  # (rows summed alike)
    _close(reading.rmatvec(v), np.asarray(X.T @ v).ravel(), X, v)
    M = products._by_rows  # the kernel on the stored copy, on a given thread count
    out = np.full(n, np.nan)
    _linalg_fast.csr_matvec(M.indptr, M.indices, M.data, w, out, threads, rows=M.rows)
    _close(out, X @ w, X, w)


def test_sparse_products_rows_by_length_and_switch():
    """The stored copy is in order of row length and maps back to X's rows; Xᵀd takes
    the scatter over X's non-zero rows at or below SPARSE_D_FRACTION, the gather above."""
    X = check_matrix(sp.csr_matrix(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [0.0, 5.0, 0.0],
                                             [4.0, 0.0, 6.0]])))
    products = SparseProducts(X)
    M = products._by_rows
    np.testing.assert_array_equal(np.diff(M.indptr), [0, 1, 2, 3])
    np.testing.assert_array_equal(M.rows, [1, 2, 3, 0])
    expected = X[M.rows]  # the kernel's copy is scipy's row selection
    np.testing.assert_array_equal(M.indptr, expected.indptr)
    np.testing.assert_array_equal(M.indices, expected.indices)
    np.testing.assert_array_equal(M.data, expected.data)
    calls = []
    original = _linalg_fast.csr_rmatvec
    try:
        _linalg_fast.csr_rmatvec = lambda *a, **k: (calls.append(1), original(*a, **k))
        v_sparse = np.array([1.0, 0.0, 0.0, 0.0])
        assert 1 <= SPARSE_D_FRACTION * 4 < 3
        np.testing.assert_array_equal(products.rmatvec(v_sparse), [1.0, 2.0, 3.0])
        assert calls
        calls.clear()
        v_dense = np.array([1.0, 1.0, -1.0, 0.0])
        np.testing.assert_array_equal(products.rmatvec(v_dense), [1.0, -3.0, 3.0])
        assert not calls
    finally:
        _linalg_fast.csr_rmatvec = original


def test_sparse_products_empty_shapes():
    for n, d in ((0, 3), (4, 0), (0, 0)):
        products = SparseProducts(sp.csr_matrix((n, d)))
        np.testing.assert_array_equal(products.matvec(np.ones(d)), np.zeros(n))
        np.testing.assert_array_equal(products.rmatvec(np.ones(n)), np.zeros(d))


def test_sparse_products_int64_indices_fall_back_to_scipy():
    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    products = SparseProducts(X)
    np.testing.assert_array_equal(products.matvec(np.array([1.0, 2.0, -1.0])), [-1.0, 6.0])
    np.testing.assert_array_equal(products.rmatvec(np.array([2.0, -1.0])), [2.0, -3.0, 4.0])


def test_sparse_products_keep_rows_of_one_length_in_place():
    """Rows of about one length (dense data) are not copied: X's own arrays serve X w,
    and the products equal those of a copy stored by length bitwise."""
    rng = np.random.default_rng(3)
    X = check_matrix(sp.csr_matrix(rng.normal(size=(50, 8))))
    products = SparseProducts(X)
    M = products._by_rows
    assert M.rows is None and M.indices is X.indices and M.data is X.data
    w = rng.normal(size=8)
    out = np.empty(50)
    _linalg_fast.csr_matvec(X.indptr, X.indices, X.data, w, out, 1,
                            rows=np.arange(50, dtype=np.int32))
    assert np.array_equal(products.matvec(w), out)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), d=st.integers(1, 30),
       density=st.sampled_from([0.0, 0.1, 0.5, 1.0]), values=st.sampled_from(["ones", "normal", "huge"]),
       take=st.sampled_from(["all", "some", "one", "none"]), threads=st.sampled_from([0, 1, 2, 3]))
def test_sparse_products_through_rows_equal_the_copy(seed, n, d, density, values, take, threads):
    """SparseProducts(X, rows) stores the arrays SparseProducts(X[rows]) stores (rows by
    length and Xᵀ as scipy's X[rows].T.tocsr()), built from X through the map, and its
    products and the mapped scatter (csr_rmatvec rows=) are bitwise the copy's."""
    rng = np.random.default_rng(seed)
    stored = rng.random((n, d)) < density * rng.random((n, 1))
    dense = stored.astype(float) if values == "ones" else \
        rng.normal(size=(n, d)) * stored * (1e150 if values == "huge" else 1.0)
    X = check_matrix(sp.csr_matrix(dense))
    rows = {"all": rng.permutation(n), "some": rng.permutation(n)[:max(1, n // 2)],
            "one": rng.permutation(n)[:1], "none": np.zeros(0, dtype=int)}[take]
    mapped, copied = SparseProducts(X, rows), SparseProducts(X[rows])
    for a, b in ((mapped._by_rows, copied._by_rows), (mapped._by_cols, copied._by_cols)):
        for name in ("rows", "indptr", "indices"):
            x, y = getattr(a, name), getattr(b, name)
            assert (x is None) == (y is None) and (x is None or np.array_equal(x, y)), name
        # (values kept unless all of X is 0/1: X[rows] may be 0/1 while X is not)
        assert np.array_equal(np.ones(len(a.indices)) if a.data is None else a.data,
                              np.ones(len(b.indices)) if b.data is None else b.data)
        assert b.data is not None or a.data is None or not (X.data == 1.0).all()
    w = rng.normal(size=d)
    assert np.array_equal(mapped.matvec(w), copied.matvec(w))
    for d_density in (0.1, 0.5, 1.0):
        v = rng.normal(size=len(rows)) * (rng.random(len(rows)) < d_density)
        assert np.array_equal(mapped.rmatvec(v), copied.rmatvec(v))
        assert np.array_equal(mapped.scatter(v), copied.scatter(v))
        assert np.array_equal(transpose_product(X, v, rows), copied.scatter(v))
        Xr = X[rows]
        out, expected = np.zeros(d), np.zeros(d)
        _linalg_fast.csr_rmatvec(X.indptr, X.indices, X.data, v, out, threads,
                                 rows=np.asarray(rows, np.int32), nnz=Xr.nnz)
        _linalg_fast.csr_rmatvec(Xr.indptr, Xr.indices, Xr.data, v, expected, threads)
        assert np.array_equal(out, expected)
    assert np.array_equal(matrix_product(X, w, rows), matrix_product(X[rows], w))
    reading = SparseProducts(X, rows, copies=False)  # through the map, no copies
    assert not reading._fast and np.array_equal(reading.matvec(w), copied.matvec(w))
    assert np.array_equal(reading.rmatvec(v), copied.scatter(v))


def test_sparse_products_through_rows_int64_fallback():
    """Past the int32 kernels the mapped products read X with scipy (no copy)."""
    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [4.0, 0.0, 0.0]]))
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    products = SparseProducts(X, [2, 0])
    np.testing.assert_array_equal(products.matvec(np.array([1.0, 2.0, -1.0])), [4.0, -1.0])
    np.testing.assert_array_equal(products.rmatvec(np.array([2.0, -1.0])), [7.0, 0.0, -2.0])
