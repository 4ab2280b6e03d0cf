"""Problems linear in the scores s = X w, whose joint feature is Xᵀd.

:class:`LinearScoreProblem` is their common base: it owns the sparse products X w and
Xᵀd (kernel ``svmrank._linalg_fast``, on every core for a large X) and answers the
cutting-plane learner's ``scores``, ``joint_feature`` and ``most_violated``; a family
adds only ``violation_at_scores``.
"""
from abc import ABC, abstractmethod

import numpy as np

from .. import _linalg_fast

# SparseProducts.rmatvec reads only the rows where d is non-zero while at most this
# fraction of d is non-zero; above it the gather over Xᵀ is faster (the two break even
# between 0.2 and 0.35 on w8a and MQ2008: benchmarks/bench_products.py)
SPARSE_D_FRACTION = 0.3
# _RowsByLength keeps the rows as they are when the longest is at most this many times
# the shortest (sorting them by length would not pay for its copy of X)
UNIFORM_LENGTHS = 1.25
# SparseProducts copies X twice (12 bytes a stored value each, 8 for a 0/1 matrix) up to
# this many stored values: 0.8 GB a copy
COPY_MAX_NNZ = 1 << 26


def _int32(X):
    return X.indptr.dtype == np.int32 and X.indices.dtype == np.int32


def matrix_product(X, w):
    """X w for a CSR matrix X from ``check_matrix`` and a float64 vector w (len = columns)."""
    if not _int32(X):  # (≥ 2³¹ stored values)
        return np.asarray(X @ w).ravel()
    out = np.empty(X.shape[0])
    _linalg_fast.csr_matvec(X.indptr, X.indices, X.data, np.ascontiguousarray(w, np.float64), out)
    return out


def transpose_product(X, d):
    """Xᵀ d for a CSR matrix X from ``check_matrix`` and a float64 vector d, reading only
    the rows where d is non-zero."""
    out = np.zeros(X.shape[1])
    if not _int32(X):
        return np.asarray(X.T @ d).ravel()
    _linalg_fast.csr_rmatvec(X.indptr, X.indices, X.data, np.ascontiguousarray(d, np.float64), out)
    return out


def _same_arrays(A, B):
    """Whether CSR matrices A and B are views of the same data, indices and indptr."""
    return A.shape == B.shape and all(
        a is b or (a.shape == b.shape and a.__array_interface__["data"] == b.__array_interface__["data"]
                   and a.strides == b.strides and a.dtype == b.dtype)
        for a, b in ((A.data, B.data), (A.indices, B.indices), (A.indptr, B.indptr)))


class _RowsByLength:
    """A CSR matrix with its rows stored in order of length (``rows[i]`` is the row
    stored i-th): the CPU then predicts the end of each row's loop, which on rows of
    varying length (w8a: 1 to 114 values) makes X w about twice as fast. Rows of about
    one length (within ``UNIFORM_LENGTHS``: dense data, say) gain nothing from it and
    are kept as X stores them, without a copy. A 0/1 matrix keeps no values (the kernel
    reads its indices alone). The products are the same either way (each row is summed
    alone, in its own order)."""

    def __init__(self, X):
        self.n_rows = X.shape[0]
        lengths = np.diff(X.indptr)
        ones = bool((X.data == 1.0).all())
        if not lengths.size or lengths.max() <= UNIFORM_LENGTHS * lengths.min():
            self.rows, self.indptr, self.indices = None, X.indptr, X.indices
            self.data = None if ones else X.data
            return
        if lengths.max() < 1 << 16:
            lengths = lengths.astype(np.uint16)  # (numpy's stable sort is a radix sort)
        self.rows = np.argsort(lengths, kind="stable").astype(np.int32)
        self.indptr = np.empty(self.n_rows + 1, dtype=np.int32)
        self.indices = np.empty(X.nnz, dtype=np.int32)
        self.data = None if ones else np.empty(X.nnz)
        _linalg_fast.csr_take_rows(X.indptr, X.indices, X.data, self.rows, self.indptr,
                                   self.indices, self.data)

    def product(self, v):
        out = np.empty(self.n_rows)
        _linalg_fast.csr_matvec(self.indptr, self.indices, self.data,
                                np.ascontiguousarray(v, np.float64), out, rows=self.rows)
        return out


class SparseProducts:
    """X w and Xᵀd for one CSR matrix that a learner multiplies many times.

    Keeps two copies beside X: its rows stored by length, and Xᵀ (CSR) stored the same
    way (X's rows, or Xᵀ's, of about one length are not copied again: see
    :class:`_RowsByLength`), so that Xᵀd is a gather of d per stored value; the scatter over X's rows
    (``transpose_product``) adds into a few columns whose additions wait on each other.
    A d with few non-zero entries takes that scatter over its non-zero rows only.
    Above ``COPY_MAX_NNZ`` stored values, or with ``copies=False``, no copy is made (the
    products read X). Results do not depend on the thread count, nor on the copies.

    Parameters
    ----------
    X : CSR matrix from ``check_matrix``
    copies : bool
        Whether to make the two copies (False: X w and Xᵀd read X, as above
        ``COPY_MAX_NNZ``; a partition of a large set on a Dask worker, say).
    """

    def __init__(self, X, copies=True):
        self.X = X
        self._fast = bool(copies) and _int32(X) and X.nnz <= COPY_MAX_NNZ
        if self._fast:
            # Xᵀ first, dropped before the row copy is made: at most two copies at once
            Xt = X.T.tocsr()
            self._fast = _int32(Xt)
            self._by_cols = _RowsByLength(Xt) if self._fast else None
            del Xt
            self._by_rows = _RowsByLength(X) if self._fast else None

    def matvec(self, w):
        """X w."""
        return self._by_rows.product(w) if self._fast else matrix_product(self.X, w)

    def rmatvec(self, d):
        """Xᵀ d."""
        d = np.ascontiguousarray(d, np.float64)
        if not self._fast or np.count_nonzero(d) <= SPARSE_D_FRACTION * d.shape[0]:
            return transpose_product(self.X, d)
        return self._by_cols.product(d)


class LinearScoreProblem(ABC):
    """Base of the problems whose joint feature is Xᵀd for per-row coefficients d.

    With Δ̄ and d the loss and coefficients of the most violated output at scores
    s = X w, the constraint is (Δ̄, g = Xᵀd) and its violation Δ̄ − s·d. These methods are the
    score interface of :func:`svmrank.learners.cutting_plane.cutting_plane` (its line
    search evaluates ``violation_at_scores`` on points s_b + t (s_c − s_b)).

    Parameters
    ----------
    X : CSR matrix from ``check_matrix``, shape (n_rows, n_features)
        The rows whose scores the family's inference reads.
    products : SparseProducts, optional
        Another problem's ``products`` over the same arrays of X, shared instead of
        copying X twice more (the latent models' instance start, say).

    Attributes
    ----------
    products : SparseProducts
        The products of X (read-only once built: problems may share them).
    product_copies : bool
        Class attribute: whether the products built here copy X (``SparseProducts``'s
        ``copies``); a subclass sets it False to keep X alone.
    """

    product_copies = True

    def __init__(self, X, products=None):
        self.X = X
        self.n_features = X.shape[1]
        if products is not None and not _same_arrays(products.X, X):
            raise ValueError("products: built over another matrix than X")
        self.products = (SparseProducts(X, copies=self.product_copies) if products is None
                         else products)

    def scores(self, w):
        """Scores X w of the rows."""
        return self.products.matvec(w)

    def joint_feature(self, d):
        """Xᵀd (over the rows where d is non-zero when few are)."""
        return self.products.rmatvec(d)

    @abstractmethod
    def violation_at_scores(self, scores):
        """Loss Δ̄ and coefficients d of the most violated output at these scores."""

    def most_violated(self, w):
        """Loss and joint-feature difference Xᵀd of the most violated output at w."""
        loss, d = self.violation_at_scores(self.scores(w))
        return loss, self.joint_feature(d)
